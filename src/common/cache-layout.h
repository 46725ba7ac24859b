/*
 * cache-layout.h: the layout of an export's read cache, a mapping every
 * fetcher of the export shares (read-cache.c; the supervisor makes the
 * backing, cache-backing.c):
 *
 *   [0, CACHE_HEAD_BYTES)        struct cache_head
 *   [CACHE_HEAD_BYTES, data)     nentries struct cache_entry, the table
 *   [data, data + nentries * block_size)
 *                                entry i's block at data + i * block_size
 *
 * The table has nentries / CACHE_WAYS sets of CACHE_WAYS entries; a
 * block of the object goes in the set its key hashes to.  The geometry
 * (nentries, block_size) is each fetcher's own, from its configuration:
 * nothing in the mapping says where anything is, so nothing another
 * fetcher wrote there can move a copy out of bounds.  What the mapping
 * holds is compared, never used as an index or a length.
 *
 * Only arithmetic here, without side effects, for the supervisor, the
 * fetcher and the unit test and fuzzer.
 */
#ifndef NBDCURLD_CACHE_LAYOUT_H
#define NBDCURLD_CACHE_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "limits-cache.h"

/* The first page: words every fetcher of the export reads and writes. */
#define CACHE_HEAD_BYTES 4096u
struct cache_head {
  uint64_t current_tag;     /* the tag of the object as last seen by a
                               connection, CACHE_TAG_CHANGED after one saw
                               it change, 0 before any */
  /* --prefetch=all: the object (by its tag) whose blocks are being
   * fetched in order, and the offset of the next chunk to claim. */
  uint64_t scan_tag;
  uint64_t scan_next;
};

/* Tags: a hash of the object's pinned URL, size and validators. */
#define CACHE_TAG_NONE    0u  /* an empty entry; a connection that cannot use it */
#define CACHE_TAG_CHANGED 1u  /* the object changed: no tag is current */

/* One entry of the table, 64 bytes.  version: even while the entry is
 * stable, odd while a writer fills it (seqlock). */
struct cache_entry {
  uint64_t version;
  uint64_t tag;             /* CACHE_TAG_NONE: empty */
  uint64_t block;           /* its block number in the object */
  uint64_t used_ms;         /* last read or written (CLOCK_MONOTONIC) */
  uint64_t claimed_ms;      /* when the writer claimed it */
  uint32_t length;          /* bytes of the block held: the block size, or
                               the object's last block's */
  uint32_t owner;           /* the connection that filled it */
  uint64_t reserved[2];
};
_Static_assert (sizeof (struct cache_entry) == 64, "one cache line an entry");

/* Is (nentries, block_size) a geometry the limits allow? */
static inline bool
cache_geometry_ok (uint32_t nentries, uint32_t block_size)
{
  return block_size >= CACHE_MIN_BLOCK_SIZE && block_size <= CACHE_MAX_BLOCK_SIZE &&
         (block_size & (block_size - 1)) == 0 &&
         nentries >= CACHE_WAYS && nentries % CACHE_WAYS == 0 &&
         (uint64_t) nentries * block_size <= CACHE_MAX_BYTES;
}

/* Where the blocks start: after the head and the table, page-aligned. */
static inline uint64_t
cache_data_offset (uint32_t nentries)
{
  uint64_t table = (uint64_t) nentries * sizeof (struct cache_entry);

  return CACHE_HEAD_BYTES + (table + CACHE_HEAD_BYTES - 1) / CACHE_HEAD_BYTES * CACHE_HEAD_BYTES;
}

/* The backing's size for a geometry cache_geometry_ok allows (no
 * overflow: at most 256 GiB of blocks and 256 MiB of table). */
static inline uint64_t
cache_backing_bytes (uint32_t nentries, uint32_t block_size)
{
  return cache_data_offset (nentries) + (uint64_t) nentries * block_size;
}

/* The entries for a cache of about bytes (--cache=SIZE) of blocks of
 * block_size: whole sets, rounded down, at least one. */
static inline uint32_t
cache_entries_for (uint64_t bytes, uint32_t block_size)
{
  uint64_t n = bytes / block_size / CACHE_WAYS * CACHE_WAYS;

  if (n < CACHE_WAYS)
    n = CACHE_WAYS;
  if (n > CACHE_MAX_BYTES / block_size)
    n = CACHE_MAX_BYTES / block_size / CACHE_WAYS * CACHE_WAYS;
  return (uint32_t) n;
}

/* The first entry of the set of (tag, block), in a table of nentries
 * (a multiple of CACHE_WAYS): consecutive blocks in consecutive sets, so
 * that an object no larger than the cache fits it whole (every set gets
 * its share of the blocks, none overflows), from a start that depends on
 * the object (splitmix64's mixing of its tag). */
static inline uint32_t
cache_set_first (uint64_t tag, uint64_t block, uint32_t nentries)
{
  uint64_t z = tag, nsets = nentries / CACHE_WAYS;

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  return (uint32_t) ((z % nsets + block % nsets) % nsets) * CACHE_WAYS;
}

/* The bytes of block b of an object of size bytes: block_size, less at
 * the end; 0 past it. */
static inline uint32_t
cache_block_length (uint64_t b, uint32_t block_size, uint64_t size)
{
  uint64_t start;

  if (b > size / block_size)
    return 0;
  start = b * block_size;             /* <= size: no overflow */
  if (start >= size)
    return 0;
  return size - start < block_size ? (uint32_t) (size - start) : block_size;
}

#endif
