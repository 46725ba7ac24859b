/*
 * open-checks.h: every network export opened once at start, when
 * somebody is there to read why one cannot be (open-checks.c).
 */
#ifndef NBDCURLD_SUPERVISOR_OPEN_CHECKS_H
#define NBDCURLD_SUPERVISOR_OPEN_CHECKS_H

#include <poll.h>

#include "supervisor.h"

/* A fetcher started to open each network export of o; o is read from
 * here on. */
void open_checks_start (const struct options *o);

/* How many exports are not open yet. */
unsigned open_checks_left (void);

/* For the loop's poll: the sockets still waited on into pfd (at most
 * MAX_EXPORTS), and *timeout set to the time left.  Returns their number,
 * or -1 when an export is not open in time (said why: the server stops). */
int open_checks_poll_fds (struct pollfd *pfd, int *timeout);

/* After the loop's poll: take what came on the n sockets of pfd (from
 * open_checks_poll_fds).  Returns 0, or -1 when an export cannot be
 * opened (said why: the server stops). */
int open_checks_dispatch (const struct pollfd *pfd, unsigned n);

#endif
