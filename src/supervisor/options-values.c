/*
 * options-values.c: what every part of the command line's parse uses:
 * the usage error, which names the --config file and line being read,
 * and the parsers of numbers, sizes and delays.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "options-internal.h"

const char *conf_where_path;
unsigned conf_where_line;

void
usage_error (const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  if (conf_where_path) {
    log_error ("%s:%u: %s", conf_where_path, conf_where_line, msg);
    fprintf (stderr, "See nbdcurld.conf(5) for the file's format.\n");
  }
  else {
    log_error ("%s", msg);
    fprintf (stderr, "Try 'nbdcurld --help' for more information.\n");
  }
  exit (EXIT_FAILURE);
}

uint32_t
parse_uint (const char *what, const char *arg, uint32_t min, uint32_t max)
{
  char *end;
  unsigned long long v;

  errno = 0;
  v = strtoull (arg, &end, 10);
  if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || v < min || v > max)
    usage_error ("%s must be a number from %" PRIu32 " to %" PRIu32 ", not \"%s\"",
                 what, min, max, arg);
  return (uint32_t) v;
}

/* A size in bytes: digits, then nothing or one of K, M (powers of 1024,
 * either case).  Errors name the limits in the units a user would type. */
uint32_t
parse_size (const char *what, const char *arg, uint32_t min, uint32_t max)
{
  char *end;
  unsigned long long v, unit = 1;

  errno = 0;
  v = strtoull (arg, &end, 10);
  if (*end == 'k' || *end == 'K')
    unit = 1024, end++;
  else if (*end == 'm' || *end == 'M')
    unit = 1024 * 1024, end++;
  /* v <= ULLONG_MAX / unit is checked before multiplying. */
  if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' ||
      v > max / unit || v * unit < min)
    usage_error ("%s must be a size from %" PRIu32 "K to %" PRIu32 "M, not \"%s\"",
                 what, min / 1024, max / (1024 * 1024), arg);
  return (uint32_t) (v * unit);
}

/* A delay in seconds, with up to three decimals ("2", "0.25"), as
 * milliseconds from 0 to max_ms. */
uint32_t
parse_delay (const char *what, const char *arg, uint32_t max_ms)
{
  uint64_t ms = 0;
  size_t i = 0, decimals = 0;

  /* Each pass takes one digit; the count keeps ms far below 2^64. */
  for (; arg[i] >= '0' && arg[i] <= '9' && i < 9; i++)
    ms = ms * 10 + (uint64_t) (arg[i] - '0');
  ms *= 1000;
  if (i > 0 && arg[i] == '.') {
    uint64_t unit = 100;
    for (i++; arg[i] >= '0' && arg[i] <= '9' && decimals < 3; i++, decimals++, unit /= 10)
      ms += unit * (uint64_t) (arg[i] - '0');
    if (decimals == 0)
      i = 0;                    /* "2." is not a number */
  }
  if (i == 0 || arg[i] != '\0' || ms > max_ms)
    usage_error ("%s must be a number of seconds from 0 to %u (up to three "
                 "decimals), not \"%s\"", what, max_ms / 1000, arg);
  return (uint32_t) ms;
}
