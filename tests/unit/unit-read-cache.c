/*
 * unit-read-cache: the read cache's index arithmetic (cache-layout.h)
 * and its lookups, inserts, eviction and shares (read-cache.c), on a
 * buffer standing for the shared mapping: several "connections" are
 * several struct read_cache over the same bytes.  And a mapping full of
 * garbage, as a hostile fetcher of the export could leave it: no lookup
 * may return its bytes as a block, nor copy out of bounds (run under
 * ASan in the sanitizer build).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "cache-layout.h"
#include "cache-partial.h"
#include "read-cache.h"
#include "unit.h"

#define BLOCK CACHE_MIN_BLOCK_SIZE
#define ENTRIES (4 * CACHE_WAYS)
#define OBJECT (64u * BLOCK + 100)      /* a short last block */

static uint8_t object[OBJECT];

static void
layout (void)
{
  CHECK (cache_geometry_ok (CACHE_WAYS, CACHE_DEFAULT_BLOCK_SIZE), "one set allowed");
  CHECK (!cache_geometry_ok (CACHE_WAYS - 1, CACHE_DEFAULT_BLOCK_SIZE), "part of a set refused");
  CHECK (!cache_geometry_ok (CACHE_WAYS, 3 * 4096), "a block not a power of two refused");
  CHECK (!cache_geometry_ok (CACHE_WAYS, 2048), "a block under a page refused");
  CHECK (!cache_geometry_ok (UINT32_MAX / CACHE_WAYS * CACHE_WAYS, CACHE_MAX_BLOCK_SIZE),
         "over CACHE_MAX_BYTES refused");
  CHECK (cache_data_offset (1) == 2 * CACHE_HEAD_BYTES &&
         cache_data_offset (64) == 2 * CACHE_HEAD_BYTES &&
         cache_data_offset (65) == 3 * CACHE_HEAD_BYTES, "blocks start page-aligned after the table");
  CHECK (cache_backing_bytes (CACHE_WAYS, 65536) == 2 * 4096 + 16 * 65536ull, "backing size");
  CHECK (cache_entries_for (1, 65536) == CACHE_WAYS, "at least one set");
  CHECK (cache_entries_for ((1u << 20) + 65536, 65536) == 16, "whole sets, rounded down");
  CHECK (cache_entries_for (UINT64_MAX, 4096) % CACHE_WAYS == 0 &&
         (uint64_t) cache_entries_for (UINT64_MAX, 4096) * 4096 <= CACHE_MAX_BYTES,
         "at most CACHE_MAX_BYTES");
  CHECK (cache_block_length (0, 4096, 100) == 100 && cache_block_length (1, 4096, 100) == 0 &&
         cache_block_length (1, 4096, 8192) == 4096 && cache_block_length (2, 4096, 8192) == 0,
         "block lengths at the end");
  CHECK (cache_block_length (UINT64_MAX, 4096, UINT64_MAX) == 0 &&
         cache_block_length (UINT64_MAX / 4096, 4096, UINT64_MAX) == 4095,
         "block lengths near 2^64 do not overflow");
  {
    bool in_range = true;
    for (uint64_t b = 0; b < 100000; b++)
      in_range &= cache_set_first (12345, b, 64) % CACHE_WAYS == 0 &&
                  cache_set_first (12345, b, 64) < 64;
    CHECK (in_range, "every set inside the table");
  }
}

/* A memfd of the backing's size, mapped as a fetcher maps it. */
static int map_fd = -1;
static uint8_t *
new_mapping (void)
{
  uint64_t bytes = cache_backing_bytes (ENTRIES, BLOCK);
  void *m;

  if (map_fd >= 0)
    close (map_fd);
  map_fd = memfd_create ("unit-read-cache", MFD_CLOEXEC);
  if (map_fd == -1 || ftruncate (map_fd, (off_t) bytes) == -1)
    exit (1);
  m = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
  if (m == MAP_FAILED)
    exit (1);
  return m;
}

static void
drop_mapping (uint8_t *m)
{
  munmap (m, cache_backing_bytes (ENTRIES, BLOCK));
}

static void
hits_and_misses (void)
{
  uint8_t *m = new_mapping (), out[3 * BLOCK];
  struct read_cache a, b;

  read_cache_init (&a, m, -1, ENTRIES, BLOCK, 1);
  read_cache_init (&b, m, map_fd, ENTRIES, BLOCK, 2);    /* hits with pread */
  read_cache_pin (&a, 1000, OBJECT);
  read_cache_pin (&b, 1000, OBJECT);
  CHECK (!read_cache_read (&a, 0, 100, out, 1), "an empty cache misses");
  /* Not on block boundaries: only the whole blocks inside are kept. */
  read_cache_insert (&a, 10, 3 * BLOCK, object + 10, 1);
  CHECK (a.inserted == 2, "the two whole blocks inside a read are kept");
  CHECK (read_cache_read (&b, BLOCK + 5, 2 * BLOCK - 10, out, 2) &&
         memcmp (out, object + BLOCK + 5, 2 * BLOCK - 10) == 0,
         "another connection reads them, exact");
  CHECK (!read_cache_read (&b, 0, 10, out, 2), "a block never whole is not there");
  read_cache_insert (&a, 64 * BLOCK, 100, object + 64 * BLOCK, 3);
  CHECK (read_cache_read (&b, 64 * BLOCK + 50, 50, out, 4) &&
         memcmp (out, object + 64 * BLOCK + 50, 50) == 0, "the short last block");
  CHECK (!read_cache_read (&b, OBJECT - 10, 20, out, 4), "a read past the end misses");
  /* What is there from a range's start: blocks 1 and 2, not 3. */
  CHECK (read_cache_read_prefix (&b, BLOCK + 7, 3 * BLOCK, out, 4) == 2 * BLOCK - 7 &&
         memcmp (out, object + BLOCK + 7, 2 * BLOCK - 7) == 0,
         "a prefix: the blocks there from the start, exact, up to one not there");
  CHECK (read_cache_read_prefix (&b, 3, BLOCK, out, 4) == 0, "no prefix when block 0 is not there");
  CHECK (read_cache_read_prefix (&b, BLOCK, 100, out, 4) == 100, "a prefix inside one block");
  CHECK (read_cache_read_prefix (&b, OBJECT - 10, 20, out, 4) == 0, "no prefix past the end");
  /* A connection that saw another object: nobody reads the old one. */
  {
    struct read_cache c;
    read_cache_init (&c, m, -1, ENTRIES, BLOCK, 3);
    read_cache_pin (&c, 2000, OBJECT);
    CHECK (!read_cache_read (&c, BLOCK, BLOCK, out, 5), "another object's blocks miss");
    CHECK (!read_cache_read (&b, BLOCK, BLOCK, out, 5),
           "the old object is not answered once a newer one was seen");
    CHECK (read_cache_read_prefix (&b, BLOCK, BLOCK, out, 5) == 0,
           "nor any prefix of it");
  }
  read_cache_pin (&a, 1000, OBJECT);
  CHECK (read_cache_read (&b, BLOCK, BLOCK, out, 6), "the old object current again");
  read_cache_object_changed (&a);
  CHECK (!read_cache_read (&b, BLOCK, BLOCK, out, 7) && !read_cache_read (&a, BLOCK, BLOCK, out, 7),
         "after a reply said it changed, no connection is answered");
  drop_mapping (m);
}

/* A writer that died mid-write: the entry is reclaimed once stale. */
static void
dead_claim (void)
{
  uint8_t *m = new_mapping (), out[BLOCK];
  struct read_cache a;
  struct cache_entry *table = (struct cache_entry *) (void *) (m + CACHE_HEAD_BYTES);
  uint32_t first;

  read_cache_init (&a, m, -1, CACHE_WAYS, BLOCK, 1);
  read_cache_pin (&a, 1000, OBJECT);
  for (unsigned w = 0; w < CACHE_WAYS; w++)
    table[w] = (struct cache_entry) { .version = 1, .claimed_ms = 100 };
  read_cache_insert (&a, 0, BLOCK, object, 200);
  CHECK (a.inserted == 0, "fresh claims are left alone");
  read_cache_insert (&a, 0, BLOCK, object, 100 + CACHE_CLAIM_STALE_MS + 1);
  CHECK (a.inserted == 1 && read_cache_read (&a, 0, BLOCK, out, 100 + CACHE_CLAIM_STALE_MS + 2),
         "a stale claim is taken over");
  first = cache_set_first (1000, 0, CACHE_WAYS);
  CHECK (first == 0, "one set");
  drop_mapping (m);
}

/* A connection that fills the cache with a scan keeps to its share once
 * others hold blocks. */
static void
shares (void)
{
  uint8_t *m = new_mapping (), out[BLOCK];
  struct read_cache hot, scan;
  bool kept = true;
  uint64_t now = 1000;

  read_cache_init (&hot, m, -1, CACHE_WAYS, BLOCK, 1);
  read_cache_init (&scan, m, -1, CACHE_WAYS, BLOCK, 2);
  read_cache_pin (&hot, 1000, OBJECT);
  read_cache_pin (&scan, 1000, OBJECT);
  read_cache_insert (&hot, 0, CACHE_SHARE_WAYS * BLOCK, object, now++);
  for (unsigned pass = 0; pass < 3; pass++)
    for (uint64_t b = 0; b < 64; b++)
      read_cache_insert (&scan, b * BLOCK, BLOCK, object + b * BLOCK, now++);
  for (uint64_t b = 0; b < CACHE_SHARE_WAYS; b++)
    kept &= read_cache_read (&hot, b * BLOCK, BLOCK, out, now) &&
            memcmp (out, object + b * BLOCK, BLOCK) == 0;
  CHECK (kept, "a scan leaves another connection's share");
  CHECK (read_cache_read (&scan, 63 * BLOCK, BLOCK, out, now), "the scan keeps its latest");
  /* Idle entries are nobody's: a new connection takes them over. */
  now += CACHE_IDLE_MS + 1;
  for (uint64_t b = 0; b < 64; b++)
    read_cache_insert (&scan, b * BLOCK, BLOCK, object + b * BLOCK, now++);
  CHECK (!read_cache_read (&hot, 0, BLOCK, out, now), "idle blocks are evicted");
  drop_mapping (m);
}

/* Garbage everywhere, as a compromised fetcher could write it. */
static void
hostile_mapping (void)
{
  uint64_t bytes = cache_backing_bytes (ENTRIES, BLOCK);
  uint8_t *m = new_mapping (), out[2 * BLOCK];
  struct read_cache a;
  unsigned seed = 7, hits = 0;

  for (uint64_t i = 0; i < bytes; i++)
    m[i] = (uint8_t) rand_r (&seed);
  read_cache_init (&a, m, -1, ENTRIES, BLOCK, 1);
  read_cache_pin (&a, 1000, OBJECT);
  for (uint64_t off = 0; off + 2 * BLOCK <= OBJECT; off += 777)
    hits += read_cache_read (&a, off, 2 * BLOCK, out, 5);
  CHECK (hits == 0, "garbage entries are never a hit");
  for (uint64_t off = 0; off < OBJECT; off += 5000)
    read_cache_insert (&a, off, OBJECT - off < 3 * BLOCK ? OBJECT - off : 3 * BLOCK,
                       object + off, 6);
  CHECK (read_cache_read (&a, 2 * BLOCK, BLOCK, out, 7) || a.inserted > 0,
         "inserts over garbage go in bounds");
  drop_mapping (m);
}

/* Edges of blocks, completed by pieces in any order. */
static uint64_t whole_offset[8];
static unsigned nwhole;
static bool whole_exact = true;

static void
got_whole (void *ctx, uint64_t offset, uint32_t len, const uint8_t *bytes)
{
  (void) ctx;
  whole_exact &= memcmp (bytes, object + offset, len) == 0;
  if (nwhole < 8)
    whole_offset[nwhole] = offset;
  nwhole++;
}

static void
partial_blocks (void)
{
  struct partial_blocks p;

  partial_init (&p, BLOCK, OBJECT);
  /* Block 1 in three pieces: the middle first, overlapping, out of order. */
  partial_add (&p, BLOCK + 1000, 2000, object + BLOCK + 1000, got_whole, NULL);
  partial_add (&p, BLOCK + 2500, BLOCK - 2500, object + BLOCK + 2500, got_whole, NULL);
  CHECK (nwhole == 0, "a block with a gap is not whole");
  partial_add (&p, BLOCK - 10, 1020, object + BLOCK - 10, got_whole, NULL);
  CHECK (nwhole == 1 && whole_offset[0] == BLOCK && whole_exact,
         "the piece that fills the gap makes it whole, exact");
  /* A range over whole blocks leaves only its edges here. */
  partial_add (&p, 3 * BLOCK + 7, 3 * BLOCK, object + 3 * BLOCK + 7, got_whole, NULL);
  CHECK (nwhole == 1, "the whole blocks inside a range are the caller's");
  partial_add (&p, 3 * BLOCK, 7, object + 3 * BLOCK, got_whole, NULL);
  partial_add (&p, 6 * BLOCK + 7, BLOCK - 7, object + 6 * BLOCK + 7, got_whole, NULL);
  CHECK (nwhole == 3 && whole_offset[1] == 3 * BLOCK && whole_offset[2] == 6 * BLOCK &&
         whole_exact, "both edges completed");
  /* The short last block. */
  partial_add (&p, 64 * BLOCK + 50, 50, object + 64 * BLOCK + 50, got_whole, NULL);
  partial_add (&p, 64 * BLOCK, 60, object + 64 * BLOCK, got_whole, NULL);
  CHECK (nwhole == 4 && whole_offset[3] == 64 * BLOCK && whole_exact, "the last block");
  /* More blocks than slots: the oldest is dropped, never mixed up. */
  for (uint64_t b = 10; b < 10 + CACHE_PARTIAL_SLOTS + 2; b++)
    partial_add (&p, b * BLOCK, 100, object + b * BLOCK, got_whole, NULL);
  partial_add (&p, 10 * BLOCK + 100, BLOCK - 100, object + 10 * BLOCK + 100, got_whole, NULL);
  CHECK (nwhole == 4, "a dropped block's start is not assumed");
  partial_add (&p, 19 * BLOCK + 100, BLOCK - 100, object + 19 * BLOCK + 100, got_whole, NULL);
  CHECK (nwhole == 5 && whole_offset[4] == 19 * BLOCK && whole_exact, "a recent one completes");
  partial_add (&p, OBJECT - 5, 10, object, got_whole, NULL);
  CHECK (nwhole == 5, "a range past the end is ignored");
  partial_free (&p);
}

/* The blocks left in part, listed to be fetched whole: every one, slot
 * or no slot, until the list's bound. */
static bool block_whole[OBJECT / BLOCK + 1];
static unsigned judged_later = 99;    /* a block a window in flight may complete */

static void
mark_whole (void *ctx, uint64_t offset, uint32_t len, const uint8_t *bytes)
{
  (void) ctx; (void) len; (void) bytes;
  block_whole[offset / BLOCK] = true;
}

static enum partial_fill
judge (void *ctx, uint64_t b)
{
  (void) ctx;
  if (block_whole[b])
    return PARTIAL_FILL_DONE;
  return b == judged_later ? PARTIAL_FILL_LATER : PARTIAL_FILL_NOW;
}

static void
fills (void)
{
  struct partial_blocks p;
  uint64_t b, got[CACHE_FILL_QUEUE + 1];
  unsigned n = 0;
  bool ordered = true;

  partial_init (&p, BLOCK, OBJECT);
  /* Reads from the middle of block 2i to the middle of 2i + 1, more of
   * them than slots: twice as many blocks left in part. */
  for (unsigned i = 0; i < CACHE_PARTIAL_SLOTS + 4; i++)
    partial_add (&p, 2 * i * BLOCK + 500, BLOCK, object + 2 * i * BLOCK + 500, mark_whole,
                 NULL);
  CHECK (p.nunfilled == 2 * (CACHE_PARTIAL_SLOTS + 4) && p.dropped == 0,
         "every block left in part is listed, those whose slot was reused too");
  /* The newest, block 23, completed by a neighbour; block 4 waits for a
   * window. */
  partial_add (&p, 23 * BLOCK + 500, BLOCK - 500, object + 23 * BLOCK + 500, mark_whole, NULL);
  CHECK (block_whole[23], "block 23 completed");
  judged_later = 4;
  while (n <= CACHE_FILL_QUEUE && partial_next_fill (&p, judge, NULL, &b))
    got[n++] = b;
  for (unsigned i = 1; i < n; i++)
    ordered &= got[i] > got[i - 1];
  CHECK (n == 2 * (CACHE_PARTIAL_SLOTS + 4) - 2 && got[0] == 0 && got[1] == 1 &&
         got[n - 1] == 22 && ordered,
         "the list gives the rest oldest first, not a whole block, not one a window may complete");
  CHECK (p.nunfilled == 1 && p.unfilled[0] == 4, "the one to complete stays listed");
  judged_later = 99;
  CHECK (partial_next_fill (&p, judge, NULL, &b) && b == 4 && p.nunfilled == 0,
         "and is given once the window is gone");
  /* More than the list holds: the oldest go. */
  for (b = 0; b < CACHE_FILL_QUEUE + 6 && b <= OBJECT / BLOCK; b++)
    partial_add (&p, b * BLOCK + 7, 10, object + b * BLOCK + 7, mark_whole, NULL);
  CHECK (b > CACHE_FILL_QUEUE && p.nunfilled == CACHE_FILL_QUEUE &&
         p.dropped == b - CACHE_FILL_QUEUE && p.unfilled[0] == p.dropped,
         "a full list drops its oldest");
  partial_free (&p);
}

int
main (void)
{
  for (unsigned i = 0; i < OBJECT; i++)
    object[i] = (uint8_t) (i * 31 + (i >> 8));
  layout ();
  hits_and_misses ();
  dead_claim ();
  shares ();
  hostile_mapping ();
  partial_blocks ();
  fills ();
  return UNIT_END ();
}
