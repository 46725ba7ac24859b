/*
 * exports.h: each export made ready at start, after the URL checker has
 * read its URL (exports.c).
 */
#ifndef NBDCURLD_SUPERVISOR_EXPORTS_H
#define NBDCURLD_SUPERVISOR_EXPORTS_H

#include <stdbool.h>

#include "supervisor.h"

/* Make o's relative paths absolute (the socket, the pid file and each
 * unix-socket-path=), before anything may change directory. */
void exports_make_paths_absolute (struct options *o);

/* Open each file: export's image, read each export's secrets and CA
 * certificates into o; stops the start (fatal) on anything unusable. */
void exports_prepare (struct options *o);

/* "FILE:LINE: " of the --config line that gave e's URL, or "": what
 * begins every message about an export from a file (a static buffer,
 * good until the next call). */
const char *export_where (const struct export_spec *e);

/* After exports_prepare: whether every export is read-only, so that
 * clients may open several connections (NBD_FLAG_CAN_MULTI_CONN). */
bool exports_multi_conn (void);

#endif
