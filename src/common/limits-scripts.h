/*
 * limits-scripts.h: header-script= and cookie-script=.  Only the
 * supervisor starts programs: it runs an export's scripts with /bin/sh,
 * reads their output through the bounded reader, and pushes the result
 * to that export's live fetchers over each one's script channel
 * (CHILD_FD_SCRIPTS, IPC_SCRIPT_*, script-values.h).  A fetcher asks for
 * a renewal when a web server answers 401 or 403, and retries the refused
 * read once with the new values.  The limits of a run itself are the
 * supervisor's (limits-script-runs.h).
 */
#ifndef NBDCURLD_LIMITS_SCRIPTS_H
#define NBDCURLD_LIMITS_SCRIPTS_H

/* Seconds a script may run; then its process group is killed and the run
 * has failed.  A fetcher waiting for a run's values, and the supervisor
 * checking that an export opens, allow for a run this long.  The build
 * with test hooks (never installed) waits 6 s, so that the suite's test
 * of the kill takes seconds, not a minute: the same code either way. */
#ifdef NBDCURLD_TEST_HOOKS
#define SCRIPT_TIMEOUT            6u
#else
#define SCRIPT_TIMEOUT            60u
#endif

#endif
