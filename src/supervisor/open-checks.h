/*
 * open-checks.h: every network export opened once at start, when
 * somebody is there to read why one cannot be (open-checks.c).
 */
#ifndef NBDCURLD_SUPERVISOR_OPEN_CHECKS_H
#define NBDCURLD_SUPERVISOR_OPEN_CHECKS_H

#include "event.h"

#include "supervisor.h"

/* What follows the checks: an export that cannot be opened (said why:
 * the server stops, so the function does not return), or every export
 * open. */
typedef void open_checks_end_fn (void);

/* A fetcher started to open each network export of o; o is read from
 * here on.  failed or done is called from the loop's round. */
void open_checks_start (const struct options *o, open_checks_end_fn *failed,
                        open_checks_end_fn *done);

/* How many exports are not open yet. */
unsigned open_checks_left (void);

/* For the loop's round: the sockets still waited on, and the checks'
 * deadline.  Returns 0, or -1 when ev is full. */
int open_checks_register (struct event_loop *ev);

#endif
