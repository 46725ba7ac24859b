/* child.h: what every child does at its start (child.c). */
#ifndef NBDCURLD_CHILD_H
#define NBDCURLD_CHILD_H

#include "roles.h"

/* Shared start of every exec'd child (child.c): die with the supervisor,
 * name the process, check the fixed fds are there. */
void child_start (enum role_id id);
/* Put fds[0 .. nfds) at 3, 4, ... (a new child, before it runs or is
 * executed: spawn_child, the launcher's become_fetcher).  The copies
 * left above are close-on-exec; the caller closes what it must.  Returns
 * 0, or -1 with errno. */
int child_place_fds (const int *fds, unsigned nfds);
/* A child that only answers its peer (the key holder, the launcher):
 * dispatch each time CHILD_FD_PEER is readable, for ever (dispatch exits
 * at the peer's end). */
__attribute__((noreturn)) void child_serve_peer (void (*dispatch) (void));

#endif
