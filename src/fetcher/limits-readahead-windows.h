/*
 * limits-readahead-windows.h: how a network fetcher fills its prefetch
 * store (fetcher-readahead.c), whose size READAHEAD_MAX_BYTES bounds
 * (limits-readahead.h).
 */
#ifndef NBDCURLD_LIMITS_READAHEAD_WINDOWS_H
#define NBDCURLD_LIMITS_READAHEAD_WINDOWS_H

/* After READAHEAD_TRIGGER_READS reads that each continue the last,
 * windows are fetched ahead: the first READAHEAD_MIN_WINDOW (or four
 * reads' worth), each next twice the last, up to READAHEAD_MAX_WINDOW and
 * a quarter of the store; at most READAHEAD_MAX_INFLIGHT prefetches at
 * once, in at most READAHEAD_MAX_SEGMENTS pieces.  Two reads tell a
 * forward reader from a random one; doubling reaches a link's rate in a
 * few windows without fetching much for a reader that stops. */
#define READAHEAD_TRIGGER_READS   2u
#define READAHEAD_MIN_WINDOW      (128u * 1024)
#define READAHEAD_MAX_WINDOW      (4u * 1024 * 1024)
#define READAHEAD_MAX_INFLIGHT    2u
#define READAHEAD_MAX_SEGMENTS    16u

#endif
