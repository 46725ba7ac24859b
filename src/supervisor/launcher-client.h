/*
 * launcher-client.h: the supervisor's side of the fetcher launcher, and
 * start_child, which asks it for fetchers (launcher-client.c).
 */
#ifndef NBDCURLD_SUPERVISOR_LAUNCHER_CLIENT_H
#define NBDCURLD_SUPERVISOR_LAUNCHER_CLIENT_H

#include <stdbool.h>
#include <sys/types.h>

#include "event.h"
#include "roles.h"
#include "supervisor.h"

/* Make a config pipe, spawn the child with its peer socket and the pipe
 * (a fetcher through the launcher when it can), then write its
 * configuration with send_config (fd, arg).  Returns the pid or -1. */
pid_t start_child (enum role_id id, int peer_fd, const int *extra, unsigned nextra,
                   int (*send_config) (int fd, const void *arg), const void *arg);

/* The first launcher, unless o says fetchers are exec'd; o is read from
 * here on. */
void launcher_begin (const struct options *o);

/* A graceful stop began: no new launcher from now on. */
void launcher_stopping (void);

/* Let the launcher go and reap it (why: for the log). */
void launcher_retire (const char *why);

/* A fetcher died of signal sig: a crash gives the next ones a new layout. */
void launcher_fetcher_crashed (int sig);

/* pid ended with status: true if it was the launcher (then handled). */
bool launcher_reaped (pid_t pid, int status);

/* For the loop's round: the launcher's socket, and a new launcher's
 * time when one is due.  Returns 0, or -1 when ev is full. */
int launcher_register (struct event_loop *ev);

#endif
