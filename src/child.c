/* child.c: what every exec'd child does first (see nbdcurld.h). */
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "log.h"
#include "nbdcurld.h"
#include "sandbox.h"

void
child_start (const char *role, const char *comm)
{
  log_init (role, false);

  /* A child outliving its supervisor would serve without supervision:
   * die with it.  (Should the supervisor die before this line, the child
   * still ends: its peers' sockets close and every role exits on EOF.) */
  sandbox_parent_death (SIGKILL);
  (void) prctl (PR_SET_NAME, comm);

  /* Replies to a closed peer must be errors, not a signal that kills us. */
  signal (SIGPIPE, SIG_IGN);
  /* SIGHUP never stops nbdcurld (the supervisor only logs it), also when
   * a terminal's hang-up sends it to the whole process group. */
  signal (SIGHUP, SIG_IGN);

  if (fcntl (CHILD_FD_PEER, F_GETFD) == -1 || fcntl (CHILD_FD_CONFIG, F_GETFD) == -1)
    fatal ("started without its file descriptors: this program is run by "
           "nbdcurld itself, not by hand");
}
