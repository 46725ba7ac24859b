/* unit-log-format.c: how log lines begin (src/common/log-format.c), TAP
 * output: the UTC time against gmtime_r over four centuries of days, and
 * each style's prefix for each level. */
#include <string.h>
#include <time.h>

#include "log-format.h"
#include "unit.h"

/* log_format_utc against gmtime_r and strftime at t. */
static int
utc_matches (int64_t t, long nsec)
{
  char want[64], got[LOG_TIME_SIZE], ms[24];
  struct tm tm;
  time_t tt = (time_t) t;

  if (gmtime_r (&tt, &tm) == NULL)
    return 0;
  strftime (want, sizeof want, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (ms, sizeof ms, ".%03ldZ", nsec / 1000000);
  strcat (want, ms);
  return log_format_utc (got, sizeof got, t, nsec) == strlen (want) && strcmp (got, want) == 0;
}

static void
check_times (void)
{
  int64_t t;
  int all = 1;

  /* Every day from 1900 to 2300, at a time of day that moves. */
  for (t = -2208988800LL; t < 10413792000LL && all; t += 86400 + 3601)
    all = utc_matches (t, 0);
  CHECK (all, "UTC times match gmtime_r from 1900 to 2300");
  CHECK (utc_matches (0, 999999999), "the epoch, milliseconds cut, not rounded");
  CHECK (utc_matches (951782400, 123456789), "2000-02-29");
  CHECK (utc_matches (-1, 5000000), "one second before the epoch");
  {
    char small[LOG_TIME_SIZE - 1];
    CHECK (log_format_utc (small, sizeof small, 0, 0) == 0, "too small a buffer: nothing");
  }
}

static void
check_prefix (enum log_style style, enum log_level level, const char *role, const char *want)
{
  char got[128], name[256];

  log_format_prefix (got, sizeof got, style, level, role, 4242, 86400, 5000000);
  snprintf (name, sizeof name, "%s prefix \"%s\"", log_style_name (style), want);
  CHECK (strcmp (got, want) == 0, name);
  if (strcmp (got, want) != 0)
    printf ("# got \"%s\"\n", got);
}

static void
check_prefixes (void)
{
  char tiny[8];

  check_prefix (LOG_STYLE_PLAIN, LOG_LEVEL_ERROR, NULL, "nbdcurld: error: ");
  check_prefix (LOG_STYLE_PLAIN, LOG_LEVEL_WARNING, "fetcher", "nbdcurld: fetcher: warning: ");
  check_prefix (LOG_STYLE_PLAIN, LOG_LEVEL_NOTICE, "front-end", "nbdcurld: front-end: ");
  check_prefix (LOG_STYLE_TIMED, LOG_LEVEL_DEBUG, "launcher",
                "1970-01-02T00:00:00.005Z nbdcurld: launcher: debug: ");
  check_prefix (LOG_STYLE_JOURNAL, LOG_LEVEL_ERROR, NULL, "<3>error: ");
  check_prefix (LOG_STYLE_JOURNAL, LOG_LEVEL_WARNING, "fetcher", "<4>fetcher: warning: ");
  check_prefix (LOG_STYLE_JOURNAL, LOG_LEVEL_NOTICE, NULL, "<5>");
  check_prefix (LOG_STYLE_JOURNAL, LOG_LEVEL_TRACE, "fetcher", "<7>fetcher: trace: ");
  check_prefix (LOG_STYLE_SYSLOG, LOG_LEVEL_ERROR, NULL, "<27>nbdcurld[4242]: error: ");
  check_prefix (LOG_STYLE_SYSLOG, LOG_LEVEL_WARNING, "key holder",
                "<28>nbdcurld[4242]: key holder: warning: ");
  check_prefix (LOG_STYLE_SYSLOG, LOG_LEVEL_NOTICE, NULL, "<29>nbdcurld[4242]: ");
  check_prefix (LOG_STYLE_SYSLOG, LOG_LEVEL_DEBUG, "url-check", "<31>nbdcurld[4242]: url-check: debug: ");
  CHECK (log_format_prefix (tiny, sizeof tiny, LOG_STYLE_PLAIN, LOG_LEVEL_ERROR, NULL, 0, 0, 0) == 7 &&
         strcmp (tiny, "nbdcurl") == 0, "a prefix is cut to the buffer, NUL-terminated");
}

static void
check_names (void)
{
  int i, all = 1;

  for (i = 0; i < LOG_STYLES; i++)
    all &= log_style_of_name (log_style_name ((enum log_style) i)) == i;
  CHECK (all, "every style's name reads back as that style");
  CHECK (log_style_of_name ("syslog ") == -1 && log_style_of_name ("") == -1,
         "other names are none");
}

int
main (void)
{
  check_times ();
  check_prefixes ();
  check_names ();
  return UNIT_END ();
}
