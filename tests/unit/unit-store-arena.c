/* unit-store-arena.c: where the prefetch store puts a new segment in its
 * region (src/fetcher/store-arena.c): chosen cases, random cases against
 * a search of every aligned place, and a forward reader's windows coming
 * and leaving oldest first through a region of 16 MiB, TAP output. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "limits-readahead-windows.h"
#include "store-arena.h"
#include "unit.h"

#define KiB 1024u
#define MiB (KiB * KiB)

static bool
overlaps (const struct arena_piece *p, uint64_t at, uint32_t length)
{
  return p->length > 0 && p->offset < at + length && at < (uint64_t) p->offset + p->length;
}

/* The lowest aligned place at or after start, tried one by one. */
static int64_t
search_from (const struct arena_piece *taken, unsigned n, uint32_t limit, uint32_t length,
             uint64_t start)
{
  for (uint64_t at = start; at + length <= limit; at += ARENA_ALIGN) {
    bool clear = true;
    for (unsigned i = 0; i < n && clear; i++)
      clear = !overlaps (&taken[i], at, length);
    if (clear)
      return (int64_t) at;
  }
  return -1;
}

static int64_t
fit_by_search (const struct arena_piece *taken, unsigned n, uint32_t limit, uint32_t length,
               uint32_t from)
{
  int64_t at;

  if (length == 0)
    return -1;
  at = search_from (taken, n, limit, length, (from + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN);
  return at >= 0 ? at : search_from (taken, n, limit, length, 0);
}

static void
chosen_cases (void)
{
  struct arena_piece none[1] = { { 0, 0 } };
  struct arena_piece two[2] = { { 8192, 100 }, { 0, 4096 } };
  struct arena_piece tail[1] = { { 0, 1 } };

  CHECK (arena_fit (none, 1, MiB, MiB, 0) == 0, "the whole region fits an empty region");
  CHECK (arena_fit (none, 1, MiB, MiB + 1, 0) == -1, "more than the region fits nowhere");
  CHECK (arena_fit (none, 1, MiB, 0, 0) == -1, "nothing fits nowhere");
  CHECK (arena_fit (two, 2, MiB, 4096, 0) == 4096, "a gap of exactly the length, pieces out of order");
  CHECK (arena_fit (two, 2, MiB, 4097, 0) == 12288, "one byte more goes past the pieces, aligned");
  CHECK (arena_fit (tail, 1, 8192, 4096, 0) == 4096, "a one-byte piece takes its page");
  CHECK (arena_fit (tail, 1, 8192, 4097, 0) == -1, "and what is left of the region is one page");
  CHECK (arena_fit (tail, 1, UINT32_MAX, UINT32_MAX - 4096, 0) == 4096,
         "a length near the type's end fits where it ends the region");
  CHECK (arena_fit (tail, 1, UINT32_MAX, UINT32_MAX - 4095, 0) == -1,
         "and one byte more does not wrap");
  CHECK (arena_fit (two, 2, MiB, 4096, 8292) == 12288, "after the newest piece first, aligned");
  CHECK (arena_fit (two, 2, MiB, 4096, MiB - 4095) == 4096,
         "then from the start when the end is too near");
}

static void
random_cases (void)
{
  unsigned mismatches = 0;

  srand (26);
  for (unsigned round = 0; round < 20000; round++) {
    struct arena_piece taken[READAHEAD_MAX_SEGMENTS];
    uint32_t limit = (uint32_t) (1 + rand () % (256 * KiB));
    uint32_t length = (uint32_t) (rand () % (64 * KiB));
    uint32_t from = (uint32_t) (rand () % (limit + 1));
    unsigned n = (unsigned) (rand () % (READAHEAD_MAX_SEGMENTS + 1));

    for (unsigned i = 0; i < n; i++)
      taken[i] = (struct arena_piece) { (uint32_t) (rand () % limit),
                                        (uint32_t) (rand () % 3 == 0 ? 0 : rand () % (32 * KiB)) };
    mismatches += arena_fit (taken, n, limit, length, from) !=
                  fit_by_search (taken, n, limit, length, from);
  }
  CHECK (mismatches == 0, "20000 random regions: the place a search of every aligned place finds");
}

/* A forward reader: windows of 128 KiB to 2.6 MiB (the store's largest
 * for a 16 MiB store) come in order; the oldest leaves when the bytes
 * kept would pass the bound, or when no place fits.  With a bound of
 * the whole region, the free bytes may lie at the region's two ends,
 * neither large enough: the oldest then leaves early (in the store, a
 * window the reader has passed, if there is one).  With a bound a window
 * and the alignment's losses short of the region, one of the two is
 * always large enough. */
static unsigned
forward_windows (uint32_t bound)
{
  const uint32_t limit = 16 * MiB, max_window = limit / (READAHEAD_MAX_INFLIGHT + 2);
  struct arena_piece seg[READAHEAD_MAX_SEGMENTS] = { { 0, 0 } };
  unsigned order[READAHEAD_MAX_SEGMENTS], kept = 0;
  uint64_t used = 0;
  uint32_t newest_end = 0;
  unsigned bad = 0, fragmented = 0, windows = 20000;

  srand (5);
  for (unsigned w = 0; w < windows; w++) {
    uint32_t length = 128 * KiB + (uint32_t) rand () % (max_window - 128 * KiB + 1);
    int64_t at;
    unsigned slot;

    for (;;) {
      at = kept < READAHEAD_MAX_SEGMENTS && used + length <= bound
         ? arena_fit (seg, READAHEAD_MAX_SEGMENTS, limit, length, newest_end) : -1;
      if (at >= 0)
        break;
      if (kept < READAHEAD_MAX_SEGMENTS && used + length <= bound)
        fragmented++;
      used -= seg[order[0]].length;         /* the oldest leaves */
      seg[order[0]].length = 0;
      for (unsigned i = 1; i < kept; i++)
        order[i - 1] = order[i];
      kept--;
    }
    for (slot = 0; seg[slot].length != 0; slot++)
      ;
    bad += at % ARENA_ALIGN != 0 || at + length > limit;
    for (unsigned i = 0; i < READAHEAD_MAX_SEGMENTS; i++)
      bad += overlaps (&seg[i], (uint64_t) at, length);
    seg[slot] = (struct arena_piece) { (uint32_t) at, length };
    newest_end = (uint32_t) at + length;
    order[kept++] = slot;
    used += length;
  }
  printf ("# %u windows, at most %u KiB kept: %u times the oldest left only because "
          "no place fit\n", windows, bound / KiB, fragmented);
  CHECK (bad == 0, "windows lie aligned, inside the region, apart from each other");
  return fragmented;
}

int
main (void)
{
  unsigned fragmented;

  chosen_cases ();
  random_cases ();
  forward_windows (16 * MiB);
  fragmented = forward_windows (16 * MiB - 16 * MiB / (READAHEAD_MAX_INFLIGHT + 2)
                                - READAHEAD_MAX_SEGMENTS * ARENA_ALIGN);
  CHECK (fragmented == 0, "kept a window short of the region, a window always has a place");
  return UNIT_END ();
}
