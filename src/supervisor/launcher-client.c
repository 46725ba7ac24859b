/*
 * launcher-client.c: the supervisor's side of the fetcher launcher
 * (src/launcher/launcher.c; limits-launcher.h, LAUNCHER_*), and start_child,
 * through which every child but the URL checker starts.
 *
 * Apart because the launcher is a peer with its own protocol and its own
 * failures (a late, broken or crashed launcher is replaced, and fetchers
 * are exec'd meanwhile); start_child lives here since only it asks the
 * launcher for a process.  It owns the launcher's process, socket and
 * generation count.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "children.h"
#include "clock.h"
#include "config.h"
#include "config-wire.h"
#include "event.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "launcher-client.h"
#include "limits-launcher.h"
#include "log.h"

/* The parsed options, read-only here (launcher_begin). */
static const struct options *options;
#define opt (*options)

/* A graceful stop is under way (launcher_stopping). */
static bool stopping;

/* One launcher at a time.  It forks each fetcher as our child; until it
 * has said it is ready, and whenever it fails, fetchers are exec'd
 * (spawn_child), so a broken launcher costs speed, never a client. */
static pid_t launcher_pid = -1;
static int launcher_fd = -1;            /* our end of its socket */
static bool launcher_ready;             /* it sent IPC_LAUNCHER_READY */
static unsigned launcher_forked;        /* fetchers of this generation */
static unsigned launcher_failures;      /* ends nobody asked for, in a row */
static uint64_t launcher_restart_ms;    /* a new one is due then; 0: none */

static bool
launcher_wanted (void)
{
  return !opt.exec_fetchers && !opt.single && !stopping &&
         launcher_failures < LAUNCHER_MAX_FAILURES;
}

static int
send_launcher_config (int fd, const void *arg)
{
  (void) arg;
  return config_send_launcher (fd, (opt.verbose ? LAUNCHER_VERBOSE : 0) |
                                   (opt.sandbox_debug ? LAUNCHER_SANDBOX_DEBUG : 0));
}

static void
launcher_start (void)
{
  int sv[2];

  launcher_restart_ms = 0;
  if (!launcher_wanted () || launcher_pid > 0)
    return;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
    warn_errno ("socketpair for the fetcher launcher (fetchers are started "
                "without it meanwhile)");
    launcher_restart_ms = monotonic_ms () + LAUNCHER_RESTART_DELAY_MS;
    return;
  }
  launcher_pid = start_child (ROLE_LAUNCHER, sv[1], NULL, 0, send_launcher_config, NULL);
  close (sv[1]);
  if (launcher_pid == -1) {
    warn_errno ("starting the fetcher launcher (fetchers are started without "
                "it meanwhile)");
    close (sv[0]);
    launcher_restart_ms = monotonic_ms () + LAUNCHER_RESTART_DELAY_MS;
    return;
  }
  launcher_fd = sv[0];
  launcher_ready = false;
  launcher_forked = 0;
  debug ("started the fetcher launcher, process %d", (int) launcher_pid);
}

/* Let the launcher go and reap it.  It holds nothing (no configuration,
 * no secret, no client), so SIGKILL is its whole end; the fetchers it
 * forked are our children and serve on. */
void
launcher_retire (const char *why)
{
  pid_t pid = launcher_pid;

  if (pid <= 0)
    return;
  debug ("retiring the fetcher launcher, process %d: %s", (int) pid, why);
  close (launcher_fd);
  launcher_fd = -1;
  launcher_pid = -1;
  launcher_ready = false;
  kill (pid, SIGKILL);
  while (waitpid (pid, NULL, 0) == -1 && errno == EINTR)
    ;
}

/* After a launcher failed: a new one after a pause, or after
 * LAUNCHER_MAX_FAILURES in a row, none. */
static void
launcher_failed (void)
{
  launcher_failures++;
  if (launcher_wanted ())
    launcher_restart_ms = monotonic_ms () + LAUNCHER_RESTART_DELAY_MS;
  else if (!stopping && !opt.exec_fetchers)
    warn ("the fetcher launcher failed %u times in a row: every fetcher is "
          "executed anew from now on, as with --exec-fetchers", launcher_failures);
}

/* The launcher misbehaved: a new one. */
static void
launcher_broken (const char *why)
{
  warn ("the fetcher launcher (process %d) %s: replacing it; fetchers are "
        "started without it meanwhile", (int) launcher_pid, why);
  launcher_retire (why);
  launcher_failed ();
}

/* The launcher ended without being asked to (reaped already). */
static void
launcher_ended (int status)
{
  pid_t pid = launcher_pid;

  close (launcher_fd);
  launcher_fd = -1;
  launcher_pid = -1;
  launcher_ready = false;
  if (stopping)
    return;
  if (WIFSIGNALED (status))
    warn ("the fetcher launcher (process %d) was killed by signal %d (%s): "
          "fetchers are started without it until a new one is ready",
          (int) pid, WTERMSIG (status), strsignal (WTERMSIG (status)));
  else
    warn ("the fetcher launcher (process %d) exited with status %d: fetchers "
          "are started without it until a new one is ready", (int) pid,
          WEXITSTATUS (status));
  launcher_failed ();
}

/* A message the launcher sent unasked: only IPC_LAUNCHER_READY, once. */
static void
launcher_dispatch (void)
{
  struct ipc_header h;
  int fds[IPC_MAX_FDS];
  unsigned nfds, i;

  if (ipc_recv_packet (launcher_fd, &h, fds, &nfds) == -1) {
    int status, e = errno;
    if (e == EAGAIN || e == EINTR)
      return;
    /* End of file mostly means it died, which SIGCHLD tells too: say
     * how it ended rather than that its socket closed. */
    if (e == 0) {
      int tries;
      for (tries = 0; tries < 100; tries++) {
        if (waitpid (launcher_pid, &status, WNOHANG) == launcher_pid) {
          launcher_ended (status);
          return;
        }
        usleep (1000);
      }
    }
    launcher_broken (e == 0 ? "closed its socket" : "sent a malformed message");
    return;
  }
  for (i = 0; i < nfds; i++)
    close (fds[i]);
  if (h.type != IPC_LAUNCHER_READY || launcher_ready ||
      ipc_check (&h, nfds, ROLE_LAUNCHER, ROLE_SUPERVISOR) != NULL) {
    launcher_broken ("sent an unexpected message");
    return;
  }
  launcher_ready = true;
  debug ("the fetcher launcher is ready");
}

/* A launcher still starting is waited for, up to LAUNCHER_START_WAIT_MS:
 * its start is the very work an exec would repeat, so the wait costs
 * less, in CPU and in memory, than executing a fetcher beside it.
 * Returns whether it is ready. */
static bool
launcher_wait_ready (void)
{
  uint64_t deadline_ready = monotonic_ms () + LAUNCHER_START_WAIT_MS;

  while (!launcher_ready && launcher_pid > 0) {
    if (event_wait_one (launcher_fd, POLLIN, deadline_ready) != 1)
      return false;
    launcher_dispatch ();
  }
  return launcher_ready;
}

/* The launcher's answer to IPC_LAUNCH_FETCHER into h, within
 * LAUNCHER_REPLY_TIMEOUT_MS and of the answer's shape.  Returns 0, or -1
 * once the launcher is given up (launcher_broken). */
static int
launcher_read_answer (struct ipc_header *h)
{
  uint64_t deadline = monotonic_ms () + LAUNCHER_REPLY_TIMEOUT_MS;
  int got[IPC_MAX_FDS];
  unsigned ngot, i;

  for (;;) {
    int r = event_wait_one (launcher_fd, POLLIN, deadline);

    if (r != 1) {
      launcher_broken (r == 0 ? "did not answer in time" : "cannot be waited for");
      return -1;
    }
    if (ipc_recv_packet (launcher_fd, h, got, &ngot) == 0)
      break;
    if (errno == EAGAIN || errno == EINTR)
      continue;
    launcher_broken (errno == 0 ? "closed its socket" : "sent a malformed answer");
    return -1;
  }
  for (i = 0; i < ngot; i++)
    close (got[i]);
  if (h->type != IPC_FETCHER_LAUNCHED || ipc_check (h, ngot, ROLE_LAUNCHER, ROLE_SUPERVISOR) != NULL ||
      (h->error == 0 && h->id == 0) || h->id > (uint64_t) INT_MAX) {
    launcher_broken ("sent an unexpected answer");
    return -1;
  }
  return 0;
}

/* Have the launcher fork a fetcher on fds[0 .. nfds) (its fds 3, 4, ...).
 * Returns the new fetcher's pid, checked to be our child, or -1 when
 * there is no launcher, it is not ready within LAUNCHER_START_WAIT_MS,
 * or it failed (the caller execs one). */
static pid_t
launcher_fork_fetcher (const int *fds, unsigned nfds)
{
  const struct ipc_header req = { .type = IPC_LAUNCH_FETCHER, .length = nfds };
  struct ipc_header h;
  siginfo_t si;
  pid_t pid;

  if (!launcher_wait_ready ())
    return -1;
  if (ipc_send_packet (launcher_fd, &req, fds, nfds) == -1) {
    launcher_broken ("cannot be written to");
    return -1;
  }
  if (launcher_read_answer (&h) == -1)
    return -1;
  if (h.error != 0) {
    /* It said why (a full process table, say); an exec may still work. */
    errno = (int) h.error;
    return -1;
  }
  pid = (pid_t) h.id;
  /* Only our own child may be counted as a fetcher: waitid answers for
   * our children alone (a zombie included), and leaves it to be reaped. */
  memset (&si, 0, sizeof si);
  if (waitid (P_PID, (id_t) pid, &si, WEXITED | WNOHANG | WNOWAIT) == -1) {
    launcher_broken ("named a process that is not ours");
    return -1;
  }
  launcher_failures = 0;
  if (++launcher_forked >= LAUNCHER_GENERATION_FETCHERS) {
    /* A new layout for the next ones (limits-launcher.h). */
    launcher_retire ("it has started its share of fetchers");
    launcher_start ();
  }
  return pid;
}

/* A fetcher died of a signal that a crash or a refused system call
 * sends: whoever caused it may be probing the address-space layout that
 * the launcher's fetchers share, so the next fetchers get a new one. */
void
launcher_fetcher_crashed (int sig)
{
  if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE &&
      sig != SIGABRT && sig != SIGSYS && sig != SIGTRAP)
    return;
  if (launcher_pid > 0) {
    launcher_retire ("a fetcher crashed");
    launcher_start ();
  }
}

/* Make a config pipe, spawn the child with its peer socket and the pipe,
 * then write its configuration.  Returns the pid or -1. */
pid_t
start_child (enum role_id id, int peer_fd, const int *extra, unsigned nextra,
             int (*send_config) (int fd, const void *arg), const void *arg)
{
  int pipefd[2], fds[2 + 64];
  unsigned i;
  pid_t pid;

  if (pipe2 (pipefd, O_CLOEXEC) == -1)
    return -1;
  fds[0] = peer_fd;
  fds[1] = pipefd[0];
  for (i = 0; i < nextra; i++)
    fds[2 + i] = extra[i];
  pid = -1;
  if (id == ROLE_FETCHER)
    pid = launcher_fork_fetcher (fds, 2 + nextra);
  if (pid == -1)
    pid = spawn_child (id, fds, 2 + nextra);
  close (pipefd[0]);
  if (pid == -1) {
    close (pipefd[1]);
    return -1;
  }
  if (send_config (pipefd[1], arg) == -1)
    warn_errno ("sending the configuration to a child");
  close (pipefd[1]);
  return pid;
}

void
launcher_begin (const struct options *o)
{
  options = o;
  launcher_start ();
}

void
launcher_stopping (void)
{
  stopping = true;
}

bool
launcher_reaped (pid_t pid, int status)
{
  if (pid != launcher_pid)
    return false;
  launcher_ended (status);
  return true;
}

/* The launcher's socket is readable, or closed: its message.  The same
 * descriptor only: a start since the round began may have replaced it. */
static void
launcher_ready_to_read (int fd, short revents, void *cookie)
{
  (void) cookie;
  if (launcher_fd >= 0 && launcher_fd == fd && (revents & (POLLIN | POLLHUP | POLLERR)))
    launcher_dispatch ();
}

/* A new launcher's time has come, unless one started since. */
static void
launcher_restart_due (void *cookie)
{
  (void) cookie;
  if (launcher_restart_ms != 0 && monotonic_ms () >= launcher_restart_ms)
    launcher_start ();
}

int
launcher_register (struct event_loop *ev)
{
  if (event_add (ev, launcher_fd, POLLIN, launcher_ready_to_read, NULL) == -1)
    return -1;
  if (launcher_restart_ms != 0 &&
      event_timer (ev, launcher_restart_ms, launcher_restart_due, NULL) == -1)
    return -1;
  return 0;
}
