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

#include "clock.h"
#include "limits-log.h"
#include "log.h"
#include "token-bucket.h"

static const char *log_role = NULL;
static bool verbose_on = false;
static enum log_style log_style = LOG_STYLE_PLAIN;
static int log_pid;

void
log_init (const char *role, bool verbose)
{
  log_role = role;
  verbose_on = verbose;
  if (role != NULL) {
    const char *name = getenv (LOG_STYLE_ENV);
    int style = name ? log_style_of_name (name) : -1;
    if (style >= 0)
      log_style = (enum log_style) style;
  }
  /* Only syslog lines carry it: the other roles' policies need no getpid
   * for the rest. */
  if (log_style == LOG_STYLE_SYSLOG)
    log_pid = (int) getpid ();
}

bool
log_verbose (void)
{
  return verbose_on;
}

void
log_set_style (enum log_style style)
{
  log_style = style;
  if (style == LOG_STYLE_SYSLOG)
    log_pid = (int) getpid ();
}

enum log_style
log_get_style (void)
{
  return log_style;
}

size_t
log_prefix_now (char *buf, size_t size, enum log_level level)
{
  struct timespec now = { 0, 0 };

  if (log_style == LOG_STYLE_TIMED)
    clock_gettime (CLOCK_REALTIME, &now);
  return log_format_prefix (buf, size, log_style, level, log_role, log_pid,
                            (int64_t) now.tv_sec, now.tv_nsec);
}

/* ---- Writing, and lines that could not be written ---- */

static uint64_t lines_lost;
/* With syslog: no line but errors is tried before this (CLOCK_MONOTONIC
 * ms), after a wait for the logger ran out (limits-log.h). */
static uint64_t syslog_paused_until_ms;

/* Write one formatted line; count it if it cannot be. */
static bool
emit (const char *line, size_t n, enum log_level level)
{
  if (log_style == LOG_STYLE_SYSLOG && syslog_paused_until_ms != 0 &&
      level != LOG_LEVEL_ERROR) {
    if (monotonic_ms () < syslog_paused_until_ms) {
      lines_lost++;
      return false;
    }
    syslog_paused_until_ms = 0;
  }
  if (write (STDERR_FILENO, line, n) == (ssize_t) n)
    return true;
  lines_lost++;
  if (log_style == LOG_STYLE_SYSLOG && (errno == EAGAIN || errno == EWOULDBLOCK))
    syslog_paused_until_ms = monotonic_ms () + LOG_SYSLOG_PAUSE_MS;
  return false;
}

PRINTF_LIKE (3, 0) static bool
log_line (enum log_level level, int errnum, const char *fmt, va_list ap)
{
  char line[LOG_LINE_MAX];
  size_t n;
  int r;

  if (log_style == LOG_STYLE_NULL)
    return true;
  n = log_prefix_now (line, sizeof line, level);

  r = vsnprintf (line + n, sizeof line - n, fmt, ap);
  if (r > 0)
    n += (size_t) r < sizeof line - n ? (size_t) r : sizeof line - n - 1;

  if (errnum != 0) {
    r = snprintf (line + n, sizeof line - n, ": %s", strerror (errnum));
    if (r > 0)
      n += (size_t) r < sizeof line - n ? (size_t) r : sizeof line - n - 1;
  }
  /* Room for the newline is kept: n <= sizeof line - 1. */
  if (LOG_STYLE_NEWLINE (log_style))
    line[n++] = '\n';
  return emit (line, n, level);
}

PRINTF_LIKE (2, 3) static bool
log_literal (enum log_level level, const char *fmt, ...)
{
  va_list ap;
  bool ok;

  va_start (ap, fmt);
  ok = log_line (level, 0, fmt, ap);
  va_end (ap);
  return ok;
}

/* Say how many lines could not be written, if any, before the next. */
static void
report_lost (void)
{
  uint64_t lost = lines_lost;

  if (lost == 0)
    return;
  lines_lost = 0;
  if (!log_literal (LOG_LEVEL_WARNING, "%" PRIu64 " log lines lost: %s did not take "
                    "them", lost, log_style == LOG_STYLE_SYSLOG ?
                    "the system logger (/dev/log)" : "standard error"))
    lines_lost += lost;
}

/* ---- The rate limit (limits-log.h, LOG_BURST) ---- */

/* LOG_BURST lines at once, then LOG_LINES_PER_SECOND (all zero: full). */
static struct token_bucket log_lines;
static uint64_t lines_dropped;

/* Say how many lines were dropped, if any, before the next one. */
static void
report_dropped (void)
{
  report_lost ();
  if (lines_dropped == 0)
    return;
  log_literal (LOG_LEVEL_WARNING, "%" PRIu64 " log lines dropped (more than %u a "
               "second; a client or server is causing them)", lines_dropped,
               LOG_LINES_PER_SECOND);
  lines_dropped = 0;
}

/* May a warning or notice be written now? */
static bool
rate_allows_line (void)
{
  if (!token_bucket_take (&log_lines, monotonic_ms (), LOG_BURST, LOG_LINES_PER_SECOND)) {
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
  log_line (LOG_LEVEL_ERROR, 0, fmt, ap);
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
  log_line (LOG_LEVEL_ERROR, e, fmt, ap);
  va_end (ap);
  exit (EXIT_FAILURE);
}

void
log_error (const char *fmt, ...)
{
  va_list ap;
  report_dropped ();
  va_start (ap, fmt);
  log_line (LOG_LEVEL_ERROR, 0, fmt, ap);
  va_end (ap);
}

void
warn (const char *fmt, ...)
{
  va_list ap;
  if (!rate_allows_line ())
    return;
  va_start (ap, fmt);
  log_line (LOG_LEVEL_WARNING, 0, fmt, ap);
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
  log_line (LOG_LEVEL_WARNING, e, fmt, ap);
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
  log_line (LOG_LEVEL_NOTICE, 0, fmt, ap);
  va_end (ap);
}

void
log_trace (const char *fmt, ...)
{
  va_list ap;
  report_lost ();
  va_start (ap, fmt);
  log_line (LOG_LEVEL_TRACE, 0, fmt, ap);
  va_end (ap);
}

void
debug (const char *fmt, ...)
{
  va_list ap;
  if (!verbose_on)
    return;
  report_lost ();
  va_start (ap, fmt);
  log_line (LOG_LEVEL_DEBUG, 0, fmt, ap);
  va_end (ap);
}
