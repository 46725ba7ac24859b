/*
 * read-cache.h: an export's read cache as one fetcher sees it: a mapping
 * shared with every other fetcher of the export (cache-layout.h), which
 * any of them may have written anything into.  Lookups copy whole blocks
 * out under a seqlock check; inserts claim an entry with a
 * compare-and-swap, fill it and publish it.  No lock is ever held: a
 * fetcher that dies mid-write leaves an entry others reclaim after
 * CACHE_CLAIM_STALE_MS.
 *
 * Pure logic on memory (the clock is passed in), so that the unit test
 * and the fuzzer run it on a buffer; fetcher-cache.c maps the descriptor
 * and hooks it into the reads.
 */
#ifndef NBDCURLD_READ_CACHE_H
#define NBDCURLD_READ_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "cache-layout.h"

struct read_cache {
  uint8_t *base;            /* the mapping, cache_backing_bytes long */
  int fd;                   /* its descriptor, which hits read with pread
                               (-1: they copy from the mapping) */
  uint32_t nentries, block_size;
  uint32_t owner;           /* this connection */
  uint64_t tag;             /* this connection's object, CACHE_TAG_NONE: the
                               cache is not used */
  uint64_t size;            /* of the object */
  /* Counted for the log line at the end. */
  uint64_t hits, misses, inserted;
};

/* c over the mapping at base (of descriptor fd, or -1), of a geometry
 * cache_geometry_ok allows, for connection owner; not used until
 * read_cache_pin.  Hits copy the blocks with pread when there is a
 * descriptor: a connection's first touch of each page of a mapping is a
 * page fault, and pread copies from the same pages without any. */
void read_cache_init (struct read_cache *c, void *base, int fd, uint32_t nentries,
                      uint32_t block_size, uint32_t owner);
/* The object is open, with this tag (from its pinned URL, size and
 * validators; CACHE_TAG_NONE: it cannot be pinned, do not use the cache)
 * and size: it is the current object now. */
void read_cache_pin (struct read_cache *c, uint64_t tag, uint64_t size);
/* A reply said the object changed: nobody is answered from the cache for
 * this tag again. */
void read_cache_object_changed (struct read_cache *c);
/* Copy [offset, offset + length) of the object into dst if every block
 * it touches is in the cache, for this object, and the object is still
 * current.  True then; false (dst's bytes undefined) otherwise. */
bool read_cache_read (struct read_cache *c, uint64_t offset, uint32_t length,
                      uint8_t *dst, uint64_t now_ms);
/* As read_cache_read, but up to the first block that is not there: how
 * many bytes from offset it copied (0 when the first is not there, or
 * the object changed meanwhile). */
uint32_t read_cache_read_prefix (struct read_cache *c, uint64_t offset, uint32_t length,
                                 uint8_t *dst, uint64_t now_ms);
/* Does the cache hold every block [offset, offset + length) touches, for
 * this object?  (Nothing copied, no use recorded.) */
bool read_cache_holds (const struct read_cache *c, uint64_t offset, uint64_t length);
/* --prefetch=all: claim the next chunk of chunk bytes (a multiple of the
 * block size) of this object to fetch, below limit.  Returns its offset,
 * or UINT64_MAX when the scan is over (or another object's is running). */
uint64_t read_cache_scan_claim (struct read_cache *c, uint64_t chunk, uint64_t limit);
/* src holds [offset, offset + length) of the object, and passed every
 * check: keep the whole blocks it covers (and the object's last block,
 * if it reaches the end). */
void read_cache_insert (struct read_cache *c, uint64_t offset, uint64_t length,
                        const uint8_t *src, uint64_t now_ms);

#endif
