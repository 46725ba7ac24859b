/* log.c: see log.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

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

static void
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

void
fatal (const char *fmt, ...)
{
  va_list ap;
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
  va_start (ap, fmt);
  log_line ("error: ", e, fmt, ap);
  va_end (ap);
  exit (EXIT_FAILURE);
}

void
warn (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  log_line ("warning: ", 0, fmt, ap);
  va_end (ap);
}

void
warn_errno (const char *fmt, ...)
{
  int e = errno;
  va_list ap;
  va_start (ap, fmt);
  log_line ("warning: ", e, fmt, ap);
  va_end (ap);
  errno = e;
}

void
notice (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  log_line ("", 0, fmt, ap);
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
