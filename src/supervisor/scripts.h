/*
 * scripts.h: the supervisor's header-script= and cookie-script= runs
 * (scripts.c).  Only the supervisor includes it.
 */
#ifndef NBDCURLD_SCRIPTS_H
#define NBDCURLD_SCRIPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "event.h"
#include "supervisor.h"

/* Before the sandbox: each export's scripts and temporary directory (as
 * --user's when change_user), the scripts' environment; max: fetchers
 * alive at once. */
void scripts_prepare (struct options *o, unsigned max, bool change_user, uid_t uid, gid_t gid);
void scripts_alloc_fetchers (void);
/* Does export e have scripts?  And its fetchers' FETCHER_*_SCRIPT flags. */
bool scripts_configured (unsigned e);
uint32_t scripts_fetcher_flags (unsigned e);
/* A fetcher of export e started, with fd our end of its script channel
 * (taken: closed when the fetcher goes).  It gets the values now, or when
 * the run it waits for ends.  Returns 0, or -1 (fd closed). */
int scripts_new_fetcher (unsigned e, pid_t pid, int fd);
void scripts_fetcher_exited (pid_t pid);
/* A child was reaped: true if it was a script (then it is handled). */
bool scripts_child_exited (pid_t pid, int status);
/* For the loop's round: the runs' pipes, the fetchers' script channels,
 * and when the next timer is due (a run's time limit, a renewal, a run
 * asked for).  Returns 0, or -1 when ev is full. */
int scripts_register (struct event_loop *ev);
/* At exit: kill what runs, remove the temporary directories. */
void scripts_cleanup (void);

#endif
