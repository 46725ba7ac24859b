/*
 * fetchers.h: starting fetchers and the table of those alive
 * (fetchers.c).
 */
#ifndef NBDCURLD_SUPERVISOR_FETCHERS_H
#define NBDCURLD_SUPERVISOR_FETCHERS_H

#include <stdbool.h>
#include <sys/types.h>

#include "supervisor.h"

/* Fetchers alive at once: one per client, plus ones still exiting after
 * their client moved to another export or left (--max-clients). */
static inline unsigned
max_fetchers (const struct options *o)
{
  return 2 * o->max_clients;
}

/* The table of fetchers, max_fetchers (o) long; o is read from here on. */
void fetchers_alloc (const struct options *o);

/* -s: whether the one client's standard output takes splice(2)'s writes,
 * checked once before it is handed to the front-end. */
void fetchers_check_data_pipe (void);

/* Whether fetchers get a data pipe (FETCHER_DATA_PIPE). */
bool fetchers_data_pipe_usable (void);

/* Start a fetcher of export idx, counted among the fetchers (reaped like
 * any other).  Returns its pid and our ends: its socket, its data area
 * and the data pipe's read end (fds[0..2]); or -1 with errno, after
 * logging why. */
pid_t launch_fetcher (unsigned idx, int fds[3]);

/* IPC_FETCHER_OPEN on our end fd of a fetcher's new socket: 0, or -1
 * after logging why. */
int tell_fetcher_to_open (int fd);

/* Process pid ended: if it was a fetcher, forget it. */
void remove_fetcher (pid_t pid);

/* The fetchers alive; each sent sig; each killed and reaped, at the end. */
unsigned fetchers_count (void);
void fetchers_signal (int sig);
void fetchers_kill_all (void);

#endif
