/*
 * log.h: one error vocabulary for every role.
 *
 *   fatal      setup failures and broken invariants: "error:", and the
 *              process exits 1
 *   log_error  "error:" for what stops the server, where the caller
 *              stops it (children to end, files to remove) after the line
 *   warn       one client's, one export's or one request's trouble, or
 *              anything else the process survives: "warning:", go on
 *   notice     something the user should know (printed without -v)
 *   debug      details, printed with -v only
 *
 * Every line goes to standard error in one write(2), so lines of
 * different processes never interleave.  What standard error is and how
 * a line begins there (a terminal, a file with times, the journal's
 * priorities, a syslog datagram, nothing) is the supervisor's choice
 * (log-destination.c), which it hands every child as one environment
 * setting (LOG_STYLE_ENV) read by log_init: log-format.h.
 * A line that cannot be written (the system logger gone or stuck) is
 * counted, and the count logged once lines flow again; never fatal.
 * Warnings and notices are rate-limited per process (LOG_BURST,
 * LOG_LINES_PER_SECOND in limits-log.h): a flood of misbehaving clients or
 * replies cannot fill the disk; dropped lines are counted and the count
 * is logged before the next line.
 * Callers name the client, export and URL (never credentials: see
 * url_for_log) and say what to do next.
 */
#ifndef NBDCURLD_LOG_H
#define NBDCURLD_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "log-format.h"

#define PRINTF_LIKE(a, b) __attribute__((format (printf, a, b)))

/* role: NULL for the supervisor.  A child (role given) takes its style
 * from LOG_STYLE_ENV.  Also after a fork: the pid syslog lines carry. */
void log_init (const char *role, bool verbose);
bool log_verbose (void);
/* The supervisor's: where lines go from now on (log-destination.c). */
void log_set_style (enum log_style style);
enum log_style log_get_style (void);
/* What a line of level would begin with now (log-format.h), for the
 * sandbox's SIGSYS handler: safe in a signal handler. */
size_t log_prefix_now (char *buf, size_t size, enum log_level level);
__attribute__((noreturn)) void fatal (const char *fmt, ...) PRINTF_LIKE (1, 2);
/* fatal() with ": strerror(errno)" appended. */
__attribute__((noreturn)) void fatal_errno (const char *fmt, ...) PRINTF_LIKE (1, 2);
void log_error (const char *fmt, ...) PRINTF_LIKE (1, 2);
void warn (const char *fmt, ...) PRINTF_LIKE (1, 2);
void warn_errno (const char *fmt, ...) PRINTF_LIKE (1, 2);
void notice (const char *fmt, ...) PRINTF_LIKE (1, 2);
void debug (const char *fmt, ...) PRINTF_LIKE (1, 2);
/* -D curl.verbose=1 (fetcher-trace.c): a line of a web conversation,
 * already masked; written whatever -v says, without the rate limit (the
 * operator asked for every line). */
void log_trace (const char *fmt, ...) PRINTF_LIKE (1, 2);

#endif
