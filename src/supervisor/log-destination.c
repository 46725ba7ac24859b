/* log-destination.c: see log-destination.h. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "limits-log.h"
#include "log.h"
#include "log-destination.h"

/* The system logger's socket: journald's, rsyslog's, syslogd's. */
#define SYSLOG_SOCKET_PATH "/dev/log"

int
log_to_of_name (const char *name, uint32_t *to)
{
  if (strcmp (name, "stderr") == 0)
    *to = LOG_TO_STDERR;
  else if (strcmp (name, "syslog") == 0)
    *to = LOG_TO_SYSLOG;
  else if (strcmp (name, "null") == 0)
    *to = LOG_TO_NULL;
  else
    return -1;
  return 0;
}

/* Is standard error the journal's stream?  systemd says so by
 * JOURNAL_STREAM=DEVICE:INODE of the stream it gave (systemd.exec(5));
 * a standard error redirected since is something else. */
static bool
stderr_is_journal (const struct stat *st)
{
  const char *v = getenv ("JOURNAL_STREAM");
  unsigned long long dev, ino;
  char end;

  return v != NULL && sscanf (v, "%llu:%llu%c", &dev, &ino, &end) == 2 &&
         dev == (unsigned long long) st->st_dev && ino == (unsigned long long) st->st_ino;
}

void
log_destination_detect (void)
{
  struct stat st;

  if (fstat (STDERR_FILENO, &st) == -1)
    return;
  if (stderr_is_journal (&st))
    log_set_style (LOG_STYLE_JOURNAL);
  else if (S_ISREG (st.st_mode))
    log_set_style (LOG_STYLE_TIMED);
}

/* Connect fd (a datagram socket) to the system logger.  Returns 0, or
 * -1 with errno. */
static int
connect_syslog (int fd)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };

  static_assert (sizeof SYSLOG_SOCKET_PATH <= sizeof sa.sun_path, "/dev/log fits");
  memcpy (sa.sun_path, SYSLOG_SOCKET_PATH, sizeof SYSLOG_SOCKET_PATH);
  return connect (fd, (const struct sockaddr *) &sa, sizeof sa);
}

/* A socket connected to the system logger, whose writes wait at most
 * LOG_SYSLOG_WAIT_MS for room.  Returns it, or -1 with errno. */
static int
open_syslog (void)
{
  const struct timeval wait = {
    .tv_sec = LOG_SYSLOG_WAIT_MS / 1000,
    .tv_usec = (LOG_SYSLOG_WAIT_MS % 1000) * 1000,
  };
  int fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

  if (fd == -1)
    return -1;
  if (connect_syslog (fd) == -1 ||
      setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait) == -1) {
    int e = errno;
    close (fd);
    errno = e;
    return -1;
  }
  return fd;
}

/* The standard error nbdcurld was started with, once --log replaced
 * it, for --run's command (close-on-exec: no child of ours gets it). */
static int original_stderr = -1;

void
log_destination_restore_stderr (void)
{
  if (original_stderr >= 0)
    dup2 (original_stderr, STDERR_FILENO);
}

void
log_destination_close_original (void)
{
  if (original_stderr >= 0)
    close (original_stderr);
  original_stderr = -1;
}

/* fd becomes standard error (closed here). */
static void
become_stderr (int fd, const char *what)
{
  if (original_stderr == -1)
    original_stderr = fcntl (STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (dup2 (fd, STDERR_FILENO) == -1)
    fatal_errno ("--log: cannot make %s standard error", what);
  close (fd);
}

static void
log_to_syslog (bool asked)
{
  int fd = open_syslog ();

  if (fd == -1) {
    if (asked)
      fatal_errno ("--log=syslog: cannot reach the system logger at %s (is "
                   "journald, rsyslog or syslogd running?); give --log=stderr "
                   "or -f to log to standard error", SYSLOG_SOCKET_PATH);
    warn_errno ("no system logger at %s: logging to standard error (give "
                "-f or --log=stderr to keep it so, --log=null for no log)",
                SYSLOG_SOCKET_PATH);
    return;
  }
  become_stderr (fd, SYSLOG_SOCKET_PATH);
  log_set_style (LOG_STYLE_SYSLOG);
}

void
log_destination_open (uint32_t log_to, bool background)
{
  int fd;

  switch (log_to) {
  case LOG_TO_DEFAULT:
    if (background)
      log_to_syslog (false);
    break;
  case LOG_TO_SYSLOG:
    log_to_syslog (true);
    break;
  case LOG_TO_NULL:
    fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd == -1)
      fatal_errno ("--log=null: /dev/null");
    become_stderr (fd, "/dev/null");
    log_set_style (LOG_STYLE_NULL);
    break;
  case LOG_TO_STDERR:
    break;
  }
}

void
log_destination_reopen (void)
{
  if (log_get_style () != LOG_STYLE_SYSLOG)
    return;
  if (connect_syslog (STDERR_FILENO) == -1)
    warn_errno ("SIGHUP: cannot reach the system logger at %s again", SYSLOG_SOCKET_PATH);
  else
    notice ("SIGHUP: logging to the system logger at %s again", SYSLOG_SOCKET_PATH);
}
