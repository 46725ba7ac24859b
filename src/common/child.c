/* child.c: what every exec'd child does first (see child.h, child-fds.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "child.h"
#include "unused-signals.h"
#include "child-fds.h"
#include "log.h"
#include "roles.h"
#include "sandbox.h"

void
child_start (enum role_id id)
{
  const struct role *r = &roles[id];

  log_init (r->name, false);
  /* First: nothing secret has reached us yet (the configuration pipe is
   * unread), and from here on no other process of our user can read it. */
  sandbox_early_start (r->name, true);

  /* A child outliving its supervisor would serve without supervision:
   * die with it.  (Should the supervisor die before this line, the child
   * still ends: its peers' sockets close and every role exits on EOF.) */
  sandbox_parent_death (SIGKILL);
  (void) prctl (PR_SET_NAME, r->comm);

  /* Replies to a closed peer must be errors, not a signal that kills us. */
  signal (SIGPIPE, SIG_IGN);
  /* No signal nbdcurld has no use for ends a child: SIGHUP (also when a
   * terminal's hang-up sends it to the whole process group), SIGUSR1
   * and SIGUSR2 sent to a child's pid rather than the supervisor's, and
   * the rest of unused-signals.h. */
  unused_signals_ignore ();

  if (fcntl (CHILD_FD_PEER, F_GETFD) == -1 || fcntl (CHILD_FD_CONFIG, F_GETFD) == -1)
    fatal ("started without its file descriptors: this program is run by "
           "nbdcurld itself, not by hand");
}

int
child_place_fds (const int *fds, unsigned nfds)
{
  const int above = 3 + (int) nfds;
  int high[16];
  unsigned i;

  if (nfds > sizeof high / sizeof high[0])
    return -1;
  /* Above their places first, so that no dup2 overwrites one not yet
   * placed.  Just above, not at a fixed high number: under a low
   * RLIMIT_NOFILE that number may not exist. */
  for (i = 0; i < nfds; i++) {
    high[i] = fcntl (fds[i], F_DUPFD_CLOEXEC, above);
    if (high[i] == -1)
      return -1;
  }
  for (i = 0; i < nfds; i++)
    if (dup2 (high[i], 3 + (int) i) == -1)
      return -1;
  return 0;
}

void
child_serve_peer (void (*dispatch) (void))
{
  for (;;) {
    struct pollfd pfd = { .fd = CHILD_FD_PEER, .events = POLLIN };
    if (poll (&pfd, 1, -1) == -1) {
      if (errno == EINTR)
        continue;
      fatal_errno ("poll");
    }
    dispatch ();
  }
}
