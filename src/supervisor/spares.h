/*
 * spares.h: spare fetchers, and a fetcher for each client the front-end
 * asks for (spares.c).
 */
#ifndef NBDCURLD_SUPERVISOR_SPARES_H
#define NBDCURLD_SUPERVISOR_SPARES_H

#include <sys/types.h>

#include "ipc.h"
#include "ipc-messages.h"
#include "supervisor.h"

/* Once every export has been opened (or needed no check): the spares
 * start; o is read from here on. */
void spares_begin (const struct options *o);

/* A graceful stop: every spare let go, and none started again. */
void spares_end (void);

/* Process pid ended: if it was a spare, forget it. */
void spare_exited (pid_t pid);

/* IPC_SPAWN_FETCHER (its export index checked): give the front-end, on
 * control_fd, a fetcher for export req->length.  Returns the errno
 * reported, 0 on success. */
int spawn_fetcher (int control_fd, const struct ipc_header *req);

#endif
