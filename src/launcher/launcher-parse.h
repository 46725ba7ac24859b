/*
 * launcher-parse.h: the supervisor's messages to the fetcher launcher,
 * checked (launcher-parse.c).  Nothing here starts anything: launcher.c
 * forks a fetcher on what passes.
 */
#ifndef NBDCURLD_LAUNCHER_PARSE_H
#define NBDCURLD_LAUNCHER_PARSE_H

#include <stdbool.h>

#include "ipc-messages.h"

/* Is h, which came with nfds descriptors, a start of one fetcher: an
 * IPC_LAUNCH_FETCHER of its table row whose length field counts exactly
 * the descriptors that came (the fetcher's, at 3 and up)? */
bool launcher_request_acceptable (const struct ipc_header *h, unsigned nfds);

#endif
