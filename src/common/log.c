/* log.c: see log.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "limits-log.h"
#include "log.h"
#include "token-bucket.h"

static const char *log_role = NULL;
static bool verbose_on = false;

void
log_init (const char *role, bool verbose)
{
  log_role = role;
  verbose_on = verbose;
}

bool
log_verbose (void)
{
  return verbose_on;
}

PRINTF_LIKE (3, 0) static void
log_line (const char *level, int errnum, const char *fmt, va_list ap)
{
  char line[2048];
  size_t n = 0;
  int r;

  if (log_role)
    r = snprintf (line, sizeof line, "nbdcurld[%s]: %s", log_role, level);
  else
    r = snprintf (line, sizeof line, "nbdcurld: %s", level);
  if (r > 0)
    n = (size_t) r < sizeof line ? (size_t) r : sizeof line - 1;

  r = vsnprintf (line + n, sizeof line - n, fmt, ap);
  if (r > 0)
    n += (size_t) r < sizeof line - n ? (size_t) r : sizeof line - n - 1;

  if (errnum != 0) {
    r = snprintf (line + n, sizeof line - n, ": %s", strerror (errnum));
    if (r > 0)
      n += (size_t) r < sizeof line - n ? (size_t) r : sizeof line - n - 1;
  }
  /* Room for the newline is kept: n <= sizeof line - 1. */
  line[n++] = '\n';
  (void) !write (STDERR_FILENO, line, n);
}

/* ---- The rate limit (limits-log.h, LOG_BURST) ---- */

/* LOG_BURST lines at once, then LOG_LINES_PER_SECOND (all zero: full). */
static struct token_bucket log_lines;
static uint64_t lines_dropped;

PRINTF_LIKE (2, 3) static void
log_literal (const char *level, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  log_line (level, 0, fmt, ap);
  va_end (ap);
}

/* Say how many lines were dropped, if any, before the next one. */
static void
report_dropped (void)
{
  if (lines_dropped == 0)
    return;
  log_literal ("warning: ", "%" PRIu64 " log lines dropped (more than %u a second; "
               "a client or server is causing them)", lines_dropped,
               LOG_LINES_PER_SECOND);
  lines_dropped = 0;
}

/* May a warning or notice be written now? */
static bool
rate_allows_line (void)
{
  struct timespec ts;

  if (clock_gettime (CLOCK_MONOTONIC, &ts) == -1)
    return true;
  if (!token_bucket_take (&log_lines, (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000,
                          LOG_BURST, LOG_LINES_PER_SECOND)) {
    lines_dropped++;
    return false;
  }
  report_dropped ();
  return true;
}

void
fatal (const char *fmt, ...)
{
  va_list ap;
  report_dropped ();
  va_start (ap, fmt);
  log_line ("error: ", 0, fmt, ap);
  va_end (ap);
  exit (EXIT_FAILURE);
}

void
fatal_errno (const char *fmt, ...)
{
  int e = errno;
  va_list ap;
  report_dropped ();
  va_start (ap, fmt);
  log_line ("error: ", e, fmt, ap);
  va_end (ap);
  exit (EXIT_FAILURE);
}

void
warn (const char *fmt, ...)
{
  va_list ap;
  if (!rate_allows_line ())
    return;
  va_start (ap, fmt);
  log_line ("warning: ", 0, fmt, ap);
  va_end (ap);
}

void
warn_errno (const char *fmt, ...)
{
  int e = errno;
  va_list ap;
  if (!rate_allows_line ()) {
    errno = e;
    return;
  }
  va_start (ap, fmt);
  log_line ("warning: ", e, fmt, ap);
  va_end (ap);
  errno = e;
}

void
notice (const char *fmt, ...)
{
  va_list ap;
  if (!rate_allows_line ())
    return;
  va_start (ap, fmt);
  log_line ("", 0, fmt, ap);
  va_end (ap);
}

void
log_trace (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  log_line ("trace: ", 0, fmt, ap);
  va_end (ap);
}

void
debug (const char *fmt, ...)
{
  va_list ap;
  if (!verbose_on)
    return;
  va_start (ap, fmt);
  log_line ("debug: ", 0, fmt, ap);
  va_end (ap);
}
