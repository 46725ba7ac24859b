/*
 * remover-client.h: the file remover, for the files --user may not
 * remove at exit (remover-client.c).
 */
#ifndef NBDCURLD_SUPERVISOR_REMOVER_CLIENT_H
#define NBDCURLD_SUPERVISOR_REMOVER_CLIENT_H

#include <stdbool.h>
#include <sys/types.h>

#include "supervisor.h"

/* Started as root, before our rights go: execute the file remover if a
 * file we made is one uid (in group gid) may not remove. */
void start_remover (const struct options *o, uid_t uid, gid_t gid);

/* Whether path (the very pointer) was handed to the remover. */
bool handed_to_remover (const char *path);

/* At exit: let the remover remove its files now, and wait for it. */
void finish_remover (void);

/* pid ended: true if it was the remover (then said so). */
bool remover_reaped (pid_t pid);

#endif
