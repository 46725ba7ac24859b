/*
 * log-destination.h: where every process's log lines go (--log), and
 * how they look there (log-format.h).
 *
 * The supervisor alone decides, and makes the destination standard
 * error before any child but the URL checker starts: a socket connected
 * to the system logger (/dev/log) for syslog, /dev/null for null, the
 * standard error it was given for stderr.  Every child inherits that
 * descriptor and the style (children.c's environment), so that no
 * sandboxed role opens or connects anything to log: each only writes
 * lines to its fd 2.
 */
#ifndef NBDCURLD_LOG_DESTINATION_H
#define NBDCURLD_LOG_DESTINATION_H

#include <stdbool.h>
#include <stdint.h>

enum log_to {
  LOG_TO_DEFAULT,     /* syslog in the background, else stderr (nbdkit's) */
  LOG_TO_STDERR,
  LOG_TO_SYSLOG,
  LOG_TO_NULL,
};

/* --log's value: 0, or -1 for a name that is none of stderr, syslog,
 * null. */
int log_to_of_name (const char *name, uint32_t *to);

/* First thing at start: how lines look on the standard error nbdcurld
 * was given (the journal's stream, a plain file, anything else). */
void log_destination_detect (void);

/* Once start-up's own checks are done (their errors went to the standard
 * error nbdcurld was started with), before it goes into the background
 * and before the front-end starts. */
void log_destination_open (uint32_t log_to, bool background);

/* In --run's command, before its exec: the standard error nbdcurld was
 * started with back at descriptor 2, if --log replaced it. */
void log_destination_restore_stderr (void);
/* Once --run's command has been started (or when there is none): the
 * supervisor keeps no copy of it, so that a daemon holds no terminal. */
void log_destination_close_original (void);

/* SIGHUP: with syslog, connect the log's socket (every process's fd 2,
 * one socket) to /dev/log again, as it is after the system logger
 * restarted. */
void log_destination_reopen (void);

#endif
