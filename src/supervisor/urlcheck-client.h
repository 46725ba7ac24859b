/*
 * urlcheck-client.h: every export's URL and proxy read by the URL checker
 * at start (urlcheck-client.c).
 */
#ifndef NBDCURLD_SUPERVISOR_URLCHECK_CLIENT_H
#define NBDCURLD_SUPERVISOR_URLCHECK_CLIENT_H

#include <stdbool.h>
#include <sys/types.h>

#include "supervisor.h"

/* Have every export of o checked, filling in what the checker says of
 * each (log_url, kind, file_path, ...) and its proxy; the checker runs as
 * uid and gid when change_user.  Stops the start (fatal) on any refusal. */
void check_urls (struct options *o, bool change_user, uid_t uid, gid_t gid);

#endif
