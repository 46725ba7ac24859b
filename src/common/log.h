/*
 * log.h: one error vocabulary for every role.
 *
 *   fatal   setup failures and broken invariants: the process exits 1
 *   warn    one client's, one export's or one request's trouble: go on
 *   notice  something the user should know (printed without -v)
 *   debug   details, printed with -v only
 *
 * Every line goes to standard error in one write(2), prefixed with the
 * program and role, so lines of different processes never interleave.
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

#define PRINTF_LIKE(a, b) __attribute__((format (printf, a, b)))

void log_init (const char *role, bool verbose);
bool log_verbose (void);
__attribute__((noreturn)) void fatal (const char *fmt, ...) PRINTF_LIKE (1, 2);
/* fatal() with ": strerror(errno)" appended. */
__attribute__((noreturn)) void fatal_errno (const char *fmt, ...) PRINTF_LIKE (1, 2);
void warn (const char *fmt, ...) PRINTF_LIKE (1, 2);
void warn_errno (const char *fmt, ...) PRINTF_LIKE (1, 2);
void notice (const char *fmt, ...) PRINTF_LIKE (1, 2);
void debug (const char *fmt, ...) PRINTF_LIKE (1, 2);
/* -D curl.verbose=1 (fetcher-trace.c): a line of a web conversation,
 * already masked; written whatever -v says, without the rate limit (the
 * operator asked for every line). */
void log_trace (const char *fmt, ...) PRINTF_LIKE (1, 2);

#endif
