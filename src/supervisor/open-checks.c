/*
 * open-checks.c: opening every export once at start, with --run, -s or
 * socket activation.
 *
 * Apart because here the supervisor is, for once, a fetcher's peer: it
 * reads a fetcher's IPC_FETCHER_STARTED and IPC_FETCHER_OPENED and the
 * reason it gives, untrusted text, with a time limit.  It owns the
 * checks under way; what follows a failure (--run's command let go, the
 * server stopped) is supervisor.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "event.h"
#include "fetchers.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "limits-scripts.h"
#include "limits-server.h"
#include "log.h"
#include "open-checks.h"
#include "roles.h"
#include "scripts.h"

/* The parsed options, read-only here (open_checks_start). */
static const struct options *options;
#define opt (*options)

/* With --run, -s or socket activation somebody is there at the start: the
 * person who typed the command, or the service manager's journal.  An
 * export that cannot be opened (a certificate, DNS, a 404, a refused
 * redirect, credentials) should stop nbdcurld then, with the reason on
 * standard error, rather than let --run's command or the first client
 * fail later with a vaguer error.  So each network export is opened once
 * by a fetcher started as for a client, whose peer is the supervisor,
 * which reads its IPC_FETCHER_STARTED and IPC_FETCHER_OPENED and the
 * reason it gives through the bounded reader, in the main loop (a header
 * script of the export runs meanwhile, scripts.c), with a time limit, and
 * then closes it (the fetcher exits, reaped like any other).  --run's
 * command starts once every export is open.  file: exports were opened by
 * the supervisor already. */
static struct open_check {
  unsigned export;
  int fd;                       /* our end of its socket, -1 once done */
  uint8_t buf[IPC_HEADER_SIZE + MAX_OPEN_FAILURE_MESSAGE];
  size_t len;
} open_checks[MAX_EXPORTS];
static unsigned nopen_checks, nopen_checks_left;
static uint64_t open_checks_deadline_ms;
/* What the supervisor does when an export cannot be opened (it stops),
 * and once every one is (open_checks_start). */
static open_checks_end_fn *checks_failed, *checks_done;

static void
open_checks_launch (void)
{
  /* Long enough for a connect, a HEAD and a probe that each take their
   * full time, a script's run, and the start of the fetcher on top. */
  const unsigned limit_s = opt.connect_timeout + 2 * opt.stall_timeout + 10 +
                           2 * opt.timeout + SCRIPT_TIMEOUT;
  unsigned i;

  open_checks_deadline_ms = monotonic_ms () + 1000ull * limit_s;
  for (i = 0; i < opt.nexports; i++) {
    struct open_check *c = &open_checks[nopen_checks];
    int fds[3];

    if (opt.exports[i].kind == URL_FILE)
      continue;
    debug ("export \"%s\": opening it once before serving", opt.exports[i].name);
    if (launch_fetcher (i, fds) == -1 || tell_fetcher_to_open (fds[0]) == -1)
      fatal ("export \"%s\": cannot start a fetcher to open it", opt.exports[i].name);
    close (fds[1]);
    close (fds[2]);
    if (fcntl (fds[0], F_SETFL, O_NONBLOCK) == -1)
      fatal_errno ("fcntl");
    *c = (struct open_check) { .export = i, .fd = fds[0] };
    nopen_checks++;
    nopen_checks_left++;
  }
}

void
open_checks_start (const struct options *o, open_checks_end_fn *failed, open_checks_end_fn *done)
{
  options = o;
  checks_failed = failed;
  checks_done = done;
  open_checks_launch ();
}

/* Why export c failed to open: the server stops (the caller's -1).  The
 * reason is untrusted text (the fetcher read a web server): printable
 * ASCII only reaches the terminal.  Returns -1. */
PRINTF_LIKE (2, 3) static int
open_check_failed (const struct open_check *c, const char *fmt, ...)
{
  char why[MAX_OPEN_FAILURE_MESSAGE + 1];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (why, sizeof why, fmt, ap);
  va_end (ap);
  log_error ("export \"%s\" cannot be opened: %s: %s; %s", opt.exports[c->export].name,
             opt.exports[c->export].log_url ? opt.exports[c->export].log_url : "(URL)", why,
             opt.run ? "--run's command was not started" : "not serving");
  return -1;
}

/* IPC_FETCHER_OPENED (h, its payload complete in c->buf): the export is
 * open, or why not.  Returns 0, or -1 when it is not. */
static int
open_check_opened (struct open_check *c, const struct ipc_header *h)
{
  if (h->error != 0) {
    char why[MAX_OPEN_FAILURE_MESSAGE + 1];
    uint32_t j;
    for (j = 0; j < h->payload_len; j++) {
      uint8_t b = c->buf[IPC_HEADER_SIZE + j];
      why[j] = b >= 0x20 && b < 0x7f ? (char) b : '?';
    }
    why[j] = '\0';
    return open_check_failed (c, "%s", why[0] ? why : strerror ((int) h->error));
  }
  debug ("export \"%s\": opened, %" PRIu64 " bytes", opt.exports[c->export].name,
         h->offset);
  close (c->fd);                    /* its fetcher exits */
  c->fd = -1;
  nopen_checks_left--;
  return 0;
}

/* Check c's socket is readable (or closed): take what came.  Returns 0,
 * or -1 when the export cannot be opened. */
static int
open_check_input (struct open_check *c)
{
  struct ipc_header h;
  ssize_t r = read (c->fd, c->buf + c->len, sizeof c->buf - c->len);

  if (r == 0)
    return open_check_failed (c, "its fetcher ended before it opened the export");
  if (r == -1) {
    if (errno == EAGAIN || errno == EINTR)
      return 0;
    return open_check_failed (c, "reading from its fetcher: %s", strerror (errno));
  }
  c->len += (size_t) r;
  while (c->fd >= 0 && c->len >= IPC_HEADER_SIZE) {
    ipc_decode_header (c->buf, &h);
    if ((h.type != IPC_FETCHER_STARTED && h.type != IPC_FETCHER_OPENED) ||
        ipc_check (&h, 0, ROLE_FETCHER, ROLE_SUPERVISOR) != NULL)
      return open_check_failed (c, "an unexpected message from its fetcher");
    if (c->len < IPC_HEADER_SIZE + h.payload_len)
      return 0;                         /* the rest is coming */
    if (h.type == IPC_FETCHER_OPENED)
      return open_check_opened (c, &h);
    memmove (c->buf, c->buf + IPC_HEADER_SIZE, c->len - IPC_HEADER_SIZE);
    c->len -= IPC_HEADER_SIZE;
  }
  return 0;
}

unsigned
open_checks_left (void)
{
  return nopen_checks_left;
}

/* A check's socket is readable, or closed. */
static void
open_check_ready (int fd, short revents, void *cookie)
{
  struct open_check *c = cookie;

  if (c->fd >= 0 && c->fd == fd && (revents & (POLLIN | POLLHUP | POLLERR))) {
    if (open_check_input (c) == -1)
      checks_failed ();
    else if (nopen_checks_left == 0)
      checks_done ();
  }
}

/* The checks' time is up with an export not open yet. */
static void
open_checks_late (void *cookie)
{
  unsigned i;

  (void) cookie;
  for (i = 0; i < nopen_checks; i++)
    if (open_checks[i].fd >= 0) {
      (void) open_check_failed (&open_checks[i], "not open in time");
      checks_failed ();
      return;
    }
}

int
open_checks_register (struct event_loop *ev)
{
  unsigned i;

  if (nopen_checks_left == 0)
    return 0;
  for (i = 0; i < nopen_checks; i++)
    if (event_add (ev, open_checks[i].fd, POLLIN, open_check_ready, &open_checks[i]) == -1)
      return -1;
  return event_timer (ev, open_checks_deadline_ms, open_checks_late, NULL) == -1 ? -1 : 0;
}
