/*
 * log-format.h: how one log line begins, for each place lines go (log.c
 * writes them; the sandbox's SIGSYS handler uses the same prefix).
 *
 *   plain    "nbdcurld: ROLE: LEVEL: text\n"        a terminal, a pipe
 *   timed    "2026-01-31T12:00:00.123Z " then plain  a plain file
 *   journal  "<N>ROLE: LEVEL: text\n"                systemd's journal
 *            stream (JOURNAL_STREAM): the journal adds the program's
 *            name and takes the priority from <N> (sd-daemon(3))
 *   syslog   "<PRI>nbdcurld[PID]: ROLE: LEVEL: text" one datagram to
 *            /dev/log, facility daemon (RFC 3164 without time and host,
 *            which the system logger adds)
 *   null     nothing is written
 *
 * The supervisor has no ROLE part.  LEVEL is "error", "warning", "debug"
 * or "trace"; a notice has none.  Pure functions of their arguments:
 * safe in a signal handler, and no time zone file is read (the time is
 * UTC, computed here), so every sandboxed role may call them.
 */
#ifndef NBDCURLD_LOG_FORMAT_H
#define NBDCURLD_LOG_FORMAT_H

#include <stddef.h>
#include <stdint.h>

enum log_style {
  LOG_STYLE_PLAIN,
  LOG_STYLE_TIMED,
  LOG_STYLE_JOURNAL,
  LOG_STYLE_SYSLOG,
  LOG_STYLE_NULL,
};
#define LOG_STYLES 5

enum log_level {
  LOG_LEVEL_ERROR,
  LOG_LEVEL_WARNING,
  LOG_LEVEL_NOTICE,
  LOG_LEVEL_DEBUG,
  LOG_LEVEL_TRACE,
};

/* The style's name in a child's environment (LOG_STYLE_ENV), and back;
 * -1 for a name that is none. */
const char *log_style_name (enum log_style style);
int log_style_of_name (const char *name);
#define LOG_STYLE_ENV "NBDCURLD_LOG_STYLE"

/* "YYYY-MM-DDThh:mm:ss.mmmZ" for a time since the epoch, into buf of
 * size bytes (at least LOG_TIME_SIZE).  Returns its length, 0 if buf is
 * too small. */
#define LOG_TIME_SIZE 25
size_t log_format_utc (char *buf, size_t size, int64_t sec, long nsec);

/* What a line of level in style begins with, into buf (NUL-terminated,
 * cut at size - 1).  role is NULL for the supervisor; pid is used by
 * syslog, sec and nsec (CLOCK_REALTIME) by timed.  Returns its length. */
size_t log_format_prefix (char *buf, size_t size, enum log_style style,
                          enum log_level level, const char *role, int pid,
                          int64_t sec, long nsec);

/* Does a line of this style end with a newline?  (A datagram does not.) */
#define LOG_STYLE_NEWLINE(style) ((style) != LOG_STYLE_SYSLOG)

#endif
