/*
 * limits-readahead.h: the largest prefetch store a network fetcher may
 * keep (fetcher-readahead.c), which the supervisor sizes within
 * --client-memory (fetchers.c) and config.c checks.  How the store is
 * filled is the fetcher's own (limits-readahead-windows.h).
 */
#ifndef NBDCURLD_LIMITS_READAHEAD_H
#define NBDCURLD_LIMITS_READAHEAD_H

/* A fetcher's prefetched ranges, in its own memory: the default
 * --client-memory, which bounds the store too, so that a client's
 * readahead holds no more than its requests may. */
#define READAHEAD_MAX_BYTES       (16u * 1024 * 1024)

#endif
