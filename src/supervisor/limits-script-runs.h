/*
 * limits-script-runs.h: one run of an export's header-script= or
 * cookie-script= (scripts.c): its output, its standard error, how often
 * it may run.  How long it may run, and what the fetchers get of it, are
 * limits-scripts.h's and script-values.h's.
 */
#ifndef NBDCURLD_LIMITS_SCRIPT_RUNS_H
#define NBDCURLD_LIMITS_SCRIPT_RUNS_H

#include "limits-strings.h"

/* Standard output of one run: a header-script's lines ("Name: value\n"),
 * at most MAX_EXTRA_HEADERS of them and MAX_EXTRA_HEADER_BYTES in all as
 * the fetcher sends them; a cookie-script's one line of at most
 * MAX_COOKIE_LENGTH.  More output fails the run. */
#define MAX_SCRIPT_OUTPUT         MAX_EXTRA_HEADER_BYTES
/* Standard error of a failed run: its first SCRIPT_STDERR_LINES lines
 * (of the first SCRIPT_STDERR_BYTES bytes) are logged; the rest is read
 * and dropped.  Standard output is never logged: it holds secrets. */
#define SCRIPT_STDERR_LINES       4u
#define SCRIPT_STDERR_BYTES       1024u
/* A renewal asked for by a fetcher (a 401 or 403) starts at most this
 * long after the previous run of that export's scripts started, and
 * never while one runs: a burst of refusals, or a hostile fetcher, makes
 * at most one run a second per export. */
#define SCRIPT_MIN_INTERVAL_MS    1000u
/* The script's text (at most MAX_SCRIPT_LENGTH) goes to the shell on this
 * descriptor, never in the environment or on a command line. */
#define SCRIPT_TEXT_FD            3
#define SCRIPT_TEXT_FD_STRING     "3"

#endif
