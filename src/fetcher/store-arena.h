/*
 * store-arena.h: where the prefetch store (fetcher-readahead.c) puts a
 * new segment inside the one region of memory it keeps for all of them:
 * the first place after the newest segment where it fits between those
 * already there, else the first from the region's start.
 * Pure arithmetic on offsets, so that a test can drive it.
 *
 * One region instead of an allocation per window: a window of a few
 * MiB allocated and freed each time comes from fresh pages, which the
 * kernel faults in and zeroes on the first byte received and unmaps
 * again at the free; on a virtual machine each fault costs several
 * microseconds.  A region reused for every window pays that once per
 * page.
 */
#ifndef NBDCURLD_STORE_ARENA_H
#define NBDCURLD_STORE_ARENA_H

#include <stdint.h>

/* Segments start on multiples of this: whole pages of a segment that
 * leaves can be given back (fetcher-readahead.c, when the store shrinks),
 * and a direct read receives into an aligned buffer. */
#define ARENA_ALIGN               4096u

struct arena_piece {
  uint32_t offset;            /* from the region's start */
  uint32_t length;            /* 0: no piece */
};

/* The lowest multiple of ARENA_ALIGN, at or after from (the end of the
 * newest piece placed), else at or after 0, at which length bytes lie
 * inside [0, limit) and overlap none of the n pieces taken (in any
 * order), or -1 when there is no such place.  length 0 fits nowhere. */
int64_t arena_fit (const struct arena_piece *taken, unsigned n, uint32_t limit,
                   uint32_t length, uint32_t from);

#endif
