/*
 * store-arena.c: where a segment goes among the prefetch store's
 * segments (store-arena.h says why the store keeps one region).
 *
 * A forward reader's windows come in order and leave oldest first.
 * Placed each after the newest, wrapping to the region's start when the
 * end is too near, they keep the region a ring: the bytes kept are one
 * run (or two, at the wrap), and the free bytes lie in at most two
 * pieces, so that a window fits whenever the free bytes are twice its
 * length.  The lowest place that fits would not do: it fills holes that
 * the oldest windows leave behind newer ones, and the free bytes end up
 * in many pieces too small for a window.
 */
#include <stdbool.h>

#include "store-arena.h"

static uint64_t
align_up (uint64_t x)
{
  return (x + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
}

/* The first place at or after at. */
static int64_t
fit_from (const struct arena_piece *taken, unsigned n, uint32_t limit, uint32_t length,
          uint64_t at)
{
  bool moved = true;

  /* Each pass moves at past the end of a piece that overlaps
   * [at, at + length); at only grows, so a piece moves it once: at most
   * n + 1 passes. */
  while (moved) {
    moved = false;
    if (at > limit || length > limit - at)
      return -1;
    for (unsigned i = 0; i < n; i++) {
      uint64_t lo = taken[i].offset, hi = lo + taken[i].length;
      if (taken[i].length > 0 && lo < at + length && at < hi) {
        at = align_up (hi);
        moved = true;
      }
    }
  }
  return (int64_t) at;
}

int64_t
arena_fit (const struct arena_piece *taken, unsigned n, uint32_t limit, uint32_t length,
           uint32_t from)
{
  int64_t at;

  if (length == 0)
    return -1;
  at = fit_from (taken, n, limit, length, align_up (from));
  return at >= 0 ? at : fit_from (taken, n, limit, length, 0);
}
