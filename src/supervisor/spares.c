/*
 * spares.c: spare fetchers (limits-spares.h, MAX_SPARE_FETCHERS),
 * started ahead of need, and the answer to the front-end's one request,
 * IPC_SPAWN_FETCHER: a spare if there is one, else a fetcher started
 * now.
 *
 * Apart because the spares are a policy of their own (how many, for which
 * export, when one makes room for another), and the front-end's request
 * is where they are spent.  It owns the spares and their target.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "fetchers.h"
#include "ipc-messages.h"
#include "limits-spares.h"
#include "log.h"
#include "scripts.h"
#include "spares.h"

/* The parsed options, read-only here (spares_begin, which runs before
 * anything here reads them: until then there is no spare). */
static const struct options *options;
#define opt (*options)

/* A fetcher started ahead of need for one export, waiting for
 * IPC_FETCHER_OPEN; we hold its three descriptors as launch_fetcher gave
 * them.  Closing its socket lets it go: it exits at the end of file. */
static struct spare {
  unsigned export;
  pid_t pid;
  int fds[3];
  uint64_t since_ms;            /* started then: the longest waiting goes first */
} spares[MAX_SPARE_FETCHERS];
static unsigned nspares;
static unsigned spare_target;   /* 0 until every export has been opened once */

static void
spare_drop (unsigned i)
{
  close (spares[i].fds[0]);
  close (spares[i].fds[1]);
  close (spares[i].fds[2]);
  spares[i] = spares[--nspares];
}

/* Start a spare for export idx, if there is room.  A failure is logged
 * and costs nothing else: the next client's fetcher starts on demand. */
/* Network exports only.  A file: export's fetcher checks its image
 * before it enters its sandbox (fetcher.c), so a spare of one would wait
 * unsandboxed.  Exports with header-script= or cookie-script= have none
 * either: a fetcher must open with the scripts' values of the moment it
 * is needed (a renewal time may have passed, or a token changed, since a
 * spare started), and their run costs more than a fetcher's start. */
static bool
spare_allowed (unsigned idx)
{
  return opt.exports[idx].kind != URL_FILE && !scripts_configured (idx);
}

static void
spare_start (unsigned idx)
{
  struct spare *sp;

  if (nspares >= spare_target || !spare_allowed (idx))
    return;
  sp = &spares[nspares];
  sp->pid = launch_fetcher (idx, sp->fds);
  if (sp->pid == -1)
    return;
  sp->export = idx;
  sp->since_ms = monotonic_ms ();
  nspares++;
}

/* Take the spare of export idx that has waited longest, if any: its pid,
 * and its descriptors in fds. */
static pid_t
spare_take (unsigned idx, int fds[3])
{
  unsigned i, best = nspares;
  pid_t pid;

  for (i = 0; i < nspares; i++)
    if (spares[i].export == idx &&
        (best == nspares || spares[i].since_ms < spares[best].since_ms))
      best = i;
  if (best == nspares)
    return -1;
  pid = spares[best].pid;
  memcpy (fds, spares[best].fds, sizeof spares[best].fds);
  spares[best] = spares[--nspares];
  return pid;
}

/* A client of export idx found no spare: when every place is taken, the
 * spare that has waited longest, if it has waited SPARE_REBALANCE_SECONDS,
 * makes room for one of idx.  The wait bounds what changing demand can
 * waste: at most one start per place per that time. */
static void
spare_follow_demand (unsigned idx)
{
  uint64_t now = monotonic_ms ();
  unsigned i, oldest = 0;

  if (spare_target == 0 || !spare_allowed (idx))
    return;
  if (nspares >= spare_target) {
    for (i = 1; i < nspares; i++)
      if (spares[i].since_ms < spares[oldest].since_ms)
        oldest = i;
    if (now - spares[oldest].since_ms < SPARE_REBALANCE_SECONDS * 1000ull)
      return;
    debug ("export \"%s\" has clients: its spare fetcher replaces one of \"%s\"",
           opt.exports[idx].name, opt.exports[spares[oldest].export].name);
    spare_drop (oldest);
  }
  spare_start (idx);
}

/* Once every export has been opened (or needed no check): the spares
 * start, shared out among the exports in turn.  With -s the one client
 * has its fetcher already, and none start. */
void
spares_begin (const struct options *o)
{
  unsigned i;

  static bool begun;
  unsigned eligible = 0, k;

  options = o;
  if (begun || opt.single)
    return;
  begun = true;
  for (i = 0; i < opt.nexports; i++)
    eligible += spare_allowed (i);
  if (eligible == 0)
    return;
  spare_target = opt.spare_fetchers;
  if (spare_target > opt.max_clients)
    spare_target = opt.max_clients;
  /* In turn over the exports that may have spares. */
  for (i = 0, k = 0; nspares < spare_target && k < spare_target; i = (i + 1) % opt.nexports)
    if (spare_allowed (i)) {
      spare_start (i);
      k++;
    }
  if (spare_target > 0)
    debug ("%u spare fetchers started", nspares);
}

/* A graceful stop: no client will want one now. */
void
spares_end (void)
{
  spare_target = 0;
  while (nspares > 0)
    spare_drop (0);
}

/* Process pid ended: if it was a spare, forget it.  It is not replaced
 * (a spare that cannot live must not start over and over); the next
 * client's fetcher starts on demand and brings a new spare with it. */
void
spare_exited (pid_t pid)
{
  unsigned i;

  for (i = 0; i < nspares; i++)
    if (spares[i].pid == pid) {
      warn ("spare fetcher %d for export \"%s\" ended before it was needed",
            (int) pid, opt.exports[spares[i].export].name);
      spare_drop (i);
      return;
    }
}

/* IPC_SPAWN_FETCHER: give the front-end a fetcher for export `length`,
 * a spare if there is one, else started now, and tell it to open.
 * Returns the errno to report, 0 on success. */
int
spawn_fetcher (int control_fd, const struct ipc_header *req)
{
  struct ipc_header reply = { .type = IPC_FETCHER_SPAWNED, .id = req->id };
  int fds[3], err = 0;
  bool took_spare = false;
  pid_t pid;

  /* The export index was checked by the caller. */
  pid = spare_take (req->length, fds);
  if (pid != -1 && tell_fetcher_to_open (fds[0]) == -1) {
    /* It died and is not reaped yet: SIGCHLD tells of it; a new one. */
    close (fds[0]);
    close (fds[1]);
    close (fds[2]);
    pid = -1;
  }
  if (pid != -1)
    took_spare = true;
  else {
    pid = launch_fetcher (req->length, fds);
    if (pid == -1) {
      err = errno;
      goto reply;
    }
  }
  if (!took_spare && tell_fetcher_to_open (fds[0]) == -1) {
    err = EIO;
    kill (pid, SIGTERM);
    close (fds[0]);
    close (fds[1]);
    close (fds[2]);
    goto reply;
  }
  if (ipc_send_packet (control_fd, &reply, fds, fetchers_data_pipe_usable () ? 3 : 2) == -1) {
    /* The kernel bounds the descriptors a user has in flight by its
     * RLIMIT_NOFILE (ETOOMANYREFS), and a busy front-end may not have
     * taken the earlier ones yet: that client goes without a fetcher,
     * nobody else is touched.  Only the answer without descriptors
     * failing means the front-end is gone. */
    err = errno;
    warn_errno ("passing a fetcher to the front-end");
    kill (pid, SIGTERM);                /* reaped like any other */
  }
  close (fds[0]);
  close (fds[1]);
  close (fds[2]);
  if (err == 0) {
    /* After the hand-over, so that the client does not wait for a fork:
     * a spare in its place, or one for this export from now on. */
    if (took_spare)
      spare_start (req->length);
    else
      spare_follow_demand (req->length);
    return 0;
  }
 reply:
  reply.error = (uint32_t) err;
  if (ipc_send_packet (control_fd, &reply, NULL, 0) == -1)
    fatal_errno ("answering the front-end");
  return err;
}
