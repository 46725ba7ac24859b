/*
 * cache-partial.c: the edges of cache blocks, kept until a block is
 * whole (cache-partial.h).
 *
 * A slot holds any of a block's bytes, with a bit for each that says it
 * is there: pieces may overlap, leave gaps that later pieces fill, and
 * come in any order.  With every slot in use, the least recently added
 * to is reused.  Every block a piece leaves in part is listed, slot or
 * not, so that a slot reused is never a block forgotten.
 */
#include <stdlib.h>
#include <string.h>

#include "cache-layout.h"
#include "cache-partial.h"
#include "log.h"

void
partial_init (struct partial_blocks *p, uint32_t block_size, uint64_t size)
{
  memset (p, 0, sizeof *p);
  p->block_size = block_size;
  p->size = size;
}

void
partial_free (struct partial_blocks *p)
{
  for (unsigned i = 0; i < CACHE_PARTIAL_SLOTS; i++) {
    free (p->slots[i].buf);
    free (p->slots[i].have);
  }
  memset (p->slots, 0, sizeof p->slots);
}

/* Block b's slot, else a free one, else the least recently used. */
static struct partial_slot *
slot_for (struct partial_blocks *p, uint64_t b)
{
  struct partial_slot *pick = NULL;

  for (unsigned i = 0; i < CACHE_PARTIAL_SLOTS; i++) {
    struct partial_slot *s = &p->slots[i];
    if (s->on && s->block == b)
      return s;
    if (pick == NULL || (pick->on && (!s->on || s->used < pick->used)))
      pick = s;
  }
  pick->on = false;
  return pick;
}

/* Set the bits [lo, hi) of have; returns how many were not set. */
static uint32_t
mark (uint8_t *have, uint32_t lo, uint32_t hi)
{
  uint32_t added = 0;

  /* Each pass sets one bit, or eight at once on a byte boundary. */
  while (lo < hi) {
    if ((lo & 7) == 0 && hi - lo >= 8) {
      added += 8 - (uint32_t) __builtin_popcount (have[lo >> 3]);
      have[lo >> 3] = 0xff;
      lo += 8;
      continue;
    }
    if ((have[lo >> 3] & (1u << (lo & 7))) == 0) {
      have[lo >> 3] |= (uint8_t) (1u << (lo & 7));
      added++;
    }
    lo++;
  }
  return added;
}

/* List block b to be fetched whole, unless it is listed already; with
 * the list full, the oldest goes. */
static void
note_unfilled (struct partial_blocks *p, uint64_t b)
{
  unsigned i;

  for (i = 0; i < p->nunfilled; i++)
    if (p->unfilled[i] == b)
      return;
  if (p->nunfilled == CACHE_FILL_QUEUE) {
    memmove (p->unfilled, p->unfilled + 1, (CACHE_FILL_QUEUE - 1) * sizeof p->unfilled[0]);
    p->nunfilled--;
    p->dropped++;
  }
  p->unfilled[p->nunfilled++] = b;
}

bool
partial_next_fill (struct partial_blocks *p, partial_judge_fn *judge, void *ctx,
                   uint64_t *block)
{
  unsigned i = 0;

  /* Each pass keeps one block listed or takes one off. */
  while (i < p->nunfilled) {
    enum partial_fill verdict = judge (ctx, p->unfilled[i]);
    if (verdict == PARTIAL_FILL_LATER) {
      i++;
      continue;
    }
    *block = p->unfilled[i];
    memmove (p->unfilled + i, p->unfilled + i + 1,
             (p->nunfilled - i - 1) * sizeof p->unfilled[0]);
    p->nunfilled--;
    if (verdict == PARTIAL_FILL_NOW)
      return true;
  }
  return false;
}

/* [lo, hi) of block b (of length len), at bytes: into its slot. */
static void
add_piece (struct partial_blocks *p, uint64_t b, uint32_t len, uint32_t lo, uint32_t hi,
           const uint8_t *bytes, partial_whole_fn *whole, void *ctx)
{
  struct partial_slot *s = slot_for (p, b);

  if (s->buf == NULL) {
    s->buf = malloc (p->block_size);
    s->have = malloc (p->block_size / 8);
    if (s->buf == NULL || s->have == NULL)
      fatal_errno ("malloc");
  }
  if (!s->on) {
    s->on = true;
    s->block = b;
    s->filled = 0;
    memset (s->have, 0, p->block_size / 8);
  }
  memcpy (s->buf + lo, bytes, hi - lo);
  s->filled += mark (s->have, lo, hi);    /* <= len: one bit a byte */
  s->used = ++p->clock;
  if (s->filled == len) {
    whole (ctx, b * p->block_size, len, s->buf);
    s->on = false;
    return;
  }
  note_unfilled (p, b);
}

/* The part of [offset, end) in block b, if it is not all of the block. */
static void
edge (struct partial_blocks *p, uint64_t b, uint64_t offset, uint64_t end,
      const uint8_t *data, partial_whole_fn *whole, void *ctx)
{
  uint64_t start = b * p->block_size;
  uint32_t len = cache_block_length (b, p->block_size, p->size);
  uint64_t lo = offset > start ? offset : start;
  uint64_t hi = end < start + len ? end : start + len;

  if (len == 0 || lo >= hi || (lo == start && hi == start + len))
    return;                     /* nothing here, or whole: the caller's */
  add_piece (p, b, len, (uint32_t) (lo - start), (uint32_t) (hi - start),
             data + (lo - offset), whole, ctx);
}

void
partial_add (struct partial_blocks *p, uint64_t offset, uint64_t length,
             const uint8_t *data, partial_whole_fn *whole, void *ctx)
{
  uint64_t end = offset + length, first, last;

  if (length == 0 || offset > p->size || length > p->size - offset)
    return;
  first = offset / p->block_size;
  last = (end - 1) / p->block_size;
  edge (p, first, offset, end, data, whole, ctx);
  if (last != first)
    edge (p, last, offset, end, data, whole, ctx);
}
