/*
 * limits-readahead-windows.h: how a network fetcher fills its prefetch
 * store (fetcher-readahead.c), whose size READAHEAD_MAX_BYTES bounds
 * (limits-readahead.h).
 */
#ifndef NBDCURLD_LIMITS_READAHEAD_WINDOWS_H
#define NBDCURLD_LIMITS_READAHEAD_WINDOWS_H

/* Once a read belongs to a forward run (forward-reader.h decides, with
 * its own FORWARD_TRIGGER_READS), windows are fetched ahead: the first
 * READAHEAD_MIN_WINDOW (or four reads' worth), each next twice the last,
 * up to READAHEAD_MAX_WINDOW and a quarter of the store; at most
 * READAHEAD_MAX_INFLIGHT prefetches at once, in at most
 * READAHEAD_MAX_SEGMENTS pieces.  Doubling reaches a link's rate in a
 * few windows without fetching much for a reader that stops.
 * READAHEAD_TRIGGER_READS is read by no code (SECURITY.md's table names
 * it): forward-reader.h's rule is the one that applies. */
#define READAHEAD_TRIGGER_READS   2u
#define READAHEAD_MIN_WINDOW      (128u * 1024)
#define READAHEAD_MAX_WINDOW      (4u * 1024 * 1024)
#define READAHEAD_MAX_INFLIGHT    2u
#define READAHEAD_MAX_SEGMENTS    16u

#endif
