/*
 * cache-backing.h: the backing of each export's read cache, made by the
 * supervisor at start (cache-backing.c) and handed to every fetcher of
 * that export (fetchers.c), which maps it (fetcher-cache.c).
 */
#ifndef NBDCURLD_CACHE_BACKING_H
#define NBDCURLD_CACHE_BACKING_H

#include "supervisor.h"

/* For each network export with a cache (export_spec's cache_entries):
 * a memfd sealed against resizing, or with --cache-dir an unlinked file
 * there with all its blocks allocated; e->cache_fd.  A file: export
 * gets none (its reads are local already).  Fails the start, naming the
 * option, when the backing cannot be made. */
void cache_backing_make (struct options *o);

#endif
