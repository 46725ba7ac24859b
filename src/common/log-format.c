/* log-format.c: see log-format.h.  No snprintf, no gmtime_r (which
 * reads the time zone file on first use): plain arithmetic only. */
#include <string.h>

#include "log-format.h"

/* syslog(3)'s LOG_DAEMON, and the severities of sd-daemon(3)'s SD_ERR,
 * SD_WARNING, SD_NOTICE and SD_DEBUG (syslog's numbers). */
#define FACILITY_DAEMON (3 << 3)
static const unsigned severity[] = {
  [LOG_LEVEL_ERROR] = 3, [LOG_LEVEL_WARNING] = 4, [LOG_LEVEL_NOTICE] = 5,
  [LOG_LEVEL_DEBUG] = 7, [LOG_LEVEL_TRACE] = 7,
};
static const char *const level_word[] = {
  [LOG_LEVEL_ERROR] = "error: ", [LOG_LEVEL_WARNING] = "warning: ",
  [LOG_LEVEL_NOTICE] = "", [LOG_LEVEL_DEBUG] = "debug: ",
  [LOG_LEVEL_TRACE] = "trace: ",
};
static const char *const style_names[LOG_STYLES] = {
  [LOG_STYLE_PLAIN] = "plain", [LOG_STYLE_TIMED] = "timed",
  [LOG_STYLE_JOURNAL] = "journal", [LOG_STYLE_SYSLOG] = "syslog",
  [LOG_STYLE_NULL] = "null",
};

const char *
log_style_name (enum log_style style)
{
  return (unsigned) style < LOG_STYLES ? style_names[style] : "plain";
}

int
log_style_of_name (const char *name)
{
  int i;

  for (i = 0; i < LOG_STYLES; i++)
    if (strcmp (name, style_names[i]) == 0)
      return i;
  return -1;
}

/* Append s to buf (n bytes used of size, one kept for the NUL). */
static size_t
put_str (char *buf, size_t n, size_t size, const char *s)
{
  while (*s && n + 1 < size)
    buf[n++] = *s++;
  return n;
}

/* Append v in decimal, at least width digits. */
static size_t
put_num (char *buf, size_t n, size_t size, uint64_t v, unsigned width)
{
  char digits[24];
  unsigned k = 0;

  do {
    digits[k++] = (char) ('0' + v % 10);
    v /= 10;
  } while (v != 0 && k < sizeof digits);
  while (k < width && k < sizeof digits)
    digits[k++] = '0';
  while (k > 0 && n + 1 < size)
    buf[n++] = digits[--k];
  return n;
}

/* Year, month and day of a day count since 1970-01-01 in the proleptic
 * Gregorian calendar (the days-from-civil algorithm, reversed: eras of
 * 400 years of 146097 days, years starting in March). */
static void
civil_from_days (int64_t days, int64_t *year, unsigned *month, unsigned *day)
{
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;                     /* [0, 146096] */
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);  /* [0, 365] */
  const int64_t mp = (5 * doy + 2) / 153;                   /* March is 0 */

  *day = (unsigned) (doy - (153 * mp + 2) / 5 + 1);
  *month = (unsigned) (mp < 10 ? mp + 3 : mp - 9);
  *year = yoe + era * 400 + (*month <= 2);
}

size_t
log_format_utc (char *buf, size_t size, int64_t sec, long nsec)
{
  int64_t days = sec / 86400, rest = sec % 86400, year;
  unsigned month, day;
  size_t n = 0;

  if (size < LOG_TIME_SIZE)
    return 0;
  if (rest < 0) {
    rest += 86400;
    days--;
  }
  civil_from_days (days, &year, &month, &day);
  if (year < 0 || year > 9999)
    year = 0;
  n = put_num (buf, n, size, (uint64_t) year, 4);
  n = put_str (buf, n, size, "-");
  n = put_num (buf, n, size, month, 2);
  n = put_str (buf, n, size, "-");
  n = put_num (buf, n, size, day, 2);
  n = put_str (buf, n, size, "T");
  n = put_num (buf, n, size, (uint64_t) rest / 3600, 2);
  n = put_str (buf, n, size, ":");
  n = put_num (buf, n, size, (uint64_t) rest / 60 % 60, 2);
  n = put_str (buf, n, size, ":");
  n = put_num (buf, n, size, (uint64_t) rest % 60, 2);
  n = put_str (buf, n, size, ".");
  n = put_num (buf, n, size, nsec >= 0 && nsec < 1000000000 ? (uint64_t) nsec / 1000000 : 0, 3);
  n = put_str (buf, n, size, "Z");
  buf[n] = '\0';
  return n;
}

size_t
log_format_prefix (char *buf, size_t size, enum log_style style, enum log_level level,
                   const char *role, int pid, int64_t sec, long nsec)
{
  size_t n = 0;

  if (size == 0)
    return 0;
  switch (style) {
  case LOG_STYLE_SYSLOG:
    n = put_str (buf, n, size, "<");
    n = put_num (buf, n, size, FACILITY_DAEMON | severity[level], 1);
    n = put_str (buf, n, size, ">nbdcurld[");
    n = put_num (buf, n, size, pid > 0 ? (uint64_t) pid : 0, 1);
    n = put_str (buf, n, size, "]: ");
    break;
  case LOG_STYLE_JOURNAL:
    n = put_str (buf, n, size, "<");
    n = put_num (buf, n, size, severity[level], 1);
    n = put_str (buf, n, size, ">");
    break;
  case LOG_STYLE_TIMED:
    if (size > LOG_TIME_SIZE) {
      n = log_format_utc (buf, size, sec, nsec);
      n = put_str (buf, n, size, " ");
    }
    __attribute__ ((fallthrough));   /* then as plain */
  case LOG_STYLE_PLAIN:
  case LOG_STYLE_NULL:
    n = put_str (buf, n, size, "nbdcurld: ");
    break;
  }
  if (role != NULL) {
    n = put_str (buf, n, size, role);
    n = put_str (buf, n, size, ": ");
  }
  n = put_str (buf, n, size, level_word[level]);
  buf[n] = '\0';
  return n;
}
