/*
 * read-cache.c: lookups and inserts in an export's shared read cache
 * (read-cache.h, cache-layout.h).
 *
 * Every word of the mapping may have been written by another fetcher of
 * the export, which may be compromised: the entry an operation looks at
 * comes from this fetcher's own arithmetic (cache_set_first, its own
 * geometry), and the mapping's words are only compared with what this
 * fetcher expects.  A copy's length is always this fetcher's own
 * (cache_block_length), never an entry's.
 *
 * Concurrency, per entry (a seqlock): a writer moves version from even v
 * to v + 1 with a compare-and-swap (its claim), writes the key, the
 * block and the times, and publishes with a compare-and-swap to v + 2.
 * A reader loads version, checks it is even and the key is the one it
 * wants, copies the block, and loads version again: any change, and the
 * copy is a miss.  A claim older than CACHE_CLAIM_STALE_MS is taken over
 * by moving version from odd v to v + 2, which makes the old writer's
 * publish fail.
 */
#include <string.h>
#include <unistd.h>

#include "read-cache.h"

#define LOAD(p)      __atomic_load_n ((p), __ATOMIC_RELAXED)
#define STORE(p, v)  __atomic_store_n ((p), (v), __ATOMIC_RELAXED)

static struct cache_head *
head_of (const struct read_cache *c)
{
  return (struct cache_head *) (void *) c->base;
}

static struct cache_entry *
entry_at (const struct read_cache *c, uint32_t i)
{
  return (struct cache_entry *) (void *) (c->base + CACHE_HEAD_BYTES) + i;
}

static uint8_t *
block_at (const struct read_cache *c, uint32_t i)
{
  return c->base + cache_data_offset (c->nentries) + (uint64_t) i * c->block_size;
}

void
read_cache_init (struct read_cache *c, void *base, int fd, uint32_t nentries,
                 uint32_t block_size, uint32_t owner)
{
  *c = (struct read_cache) {
    .base = base, .fd = fd, .nentries = nentries, .block_size = block_size, .owner = owner,
  };
}

void
read_cache_pin (struct read_cache *c, uint64_t tag, uint64_t size)
{
  c->tag = tag;
  c->size = size;
  if (tag != CACHE_TAG_NONE)
    __atomic_store_n (&head_of (c)->current_tag, tag, __ATOMIC_SEQ_CST);
}

void
read_cache_object_changed (struct read_cache *c)
{
  uint64_t expected = c->tag;

  if (c->tag == CACHE_TAG_NONE)
    return;
  /* Only if no connection has seen a newer object since. */
  (void) __atomic_compare_exchange_n (&head_of (c)->current_tag, &expected,
                                      (uint64_t) CACHE_TAG_CHANGED, false,
                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  c->tag = CACHE_TAG_NONE;
}

static bool
usable (const struct read_cache *c)
{
  return c->tag != CACHE_TAG_NONE &&
         __atomic_load_n (&head_of (c)->current_tag, __ATOMIC_ACQUIRE) == c->tag;
}

/* Copy the part [skip, skip + n) of block b (of length len) into dst, if
 * the cache holds it stably.  True on a hit. */
static bool
copy_block (const struct read_cache *c, uint64_t b, uint32_t len, uint32_t skip,
            uint32_t n, uint8_t *dst, uint64_t now_ms)
{
  uint32_t first = cache_set_first (c->tag, b, c->nentries), w;

  for (w = 0; w < CACHE_WAYS; w++) {
    struct cache_entry *e = entry_at (c, first + w);
    uint64_t v = __atomic_load_n (&e->version, __ATOMIC_ACQUIRE);

    if ((v & 1) != 0 || LOAD (&e->tag) != c->tag || LOAD (&e->block) != b ||
        LOAD (&e->length) != len)
      continue;
    if (c->fd < 0)
      memcpy (dst, block_at (c, first + w) + skip, n);
    else if (pread (c->fd, dst, n, (off_t) (cache_data_offset (c->nentries) +
                                           (uint64_t) (first + w) * c->block_size + skip))
             != (ssize_t) n)
      return false;
    __atomic_thread_fence (__ATOMIC_ACQUIRE);
    if (LOAD (&e->version) != v)
      return false;             /* rewritten meanwhile */
    STORE (&e->used_ms, now_ms);
    return true;
  }
  return false;
}

bool
read_cache_read (struct read_cache *c, uint64_t offset, uint32_t length, uint8_t *dst,
                 uint64_t now_ms)
{
  uint64_t b, end = offset + length;  /* inside the object: no overflow */

  if (!usable (c) || length == 0 || offset > c->size || length > c->size - offset)
    return false;
  /* Each pass copies one block's part and moves offset past it. */
  for (b = offset / c->block_size; offset < end; b++) {
    uint32_t len = cache_block_length (b, c->block_size, c->size);
    uint32_t skip = (uint32_t) (offset - b * c->block_size);   /* < block_size */
    uint32_t n = len - skip;    /* offset < size, so skip < len */

    if (n > end - offset)
      n = (uint32_t) (end - offset);
    if (!copy_block (c, b, len, skip, n, dst, now_ms)) {
      c->misses++;
      return false;
    }
    dst += n;
    offset += n;
  }
  /* A copy that began before another connection saw the object change
   * is not served either. */
  if (!usable (c)) {
    c->misses++;
    return false;
  }
  c->hits++;
  return true;
}

uint32_t
read_cache_read_prefix (struct read_cache *c, uint64_t offset, uint32_t length,
                        uint8_t *dst, uint64_t now_ms)
{
  uint64_t b, end = offset + length, start = offset;

  if (!usable (c) || length == 0 || offset > c->size || length > c->size - offset)
    return 0;
  /* Each pass copies one block's part, or stops at a block not there. */
  for (b = offset / c->block_size; offset < end; b++) {
    uint32_t len = cache_block_length (b, c->block_size, c->size);
    uint32_t skip = (uint32_t) (offset - b * c->block_size);   /* < block_size */
    uint32_t n = len - skip;

    if (n > end - offset)
      n = (uint32_t) (end - offset);
    if (!copy_block (c, b, len, skip, n, dst, now_ms))
      break;
    dst += n;
    offset += n;
  }
  /* A copy that began before another connection saw the object change
   * is not served either. */
  if (offset == start || !usable (c))
    return 0;
  c->hits++;
  return (uint32_t) (offset - start);
}

/* Is block b (of length len) there, stable? */
static bool
holds_block (const struct read_cache *c, uint64_t b, uint32_t len)
{
  uint32_t first = cache_set_first (c->tag, b, c->nentries), w;

  for (w = 0; w < CACHE_WAYS; w++) {
    struct cache_entry *e = entry_at (c, first + w);
    uint64_t v = __atomic_load_n (&e->version, __ATOMIC_ACQUIRE);

    if ((v & 1) == 0 && LOAD (&e->tag) == c->tag && LOAD (&e->block) == b &&
        LOAD (&e->length) == len)
      return true;
  }
  return false;
}

bool
read_cache_holds (const struct read_cache *c, uint64_t offset, uint64_t length)
{
  uint64_t b, last;

  if (!usable (c) || length == 0 || offset > c->size || length > c->size - offset)
    return false;
  last = (offset + length - 1) / c->block_size;
  /* Each pass looks at one block of the range. */
  for (b = offset / c->block_size; b <= last; b++)
    if (!holds_block (c, b, cache_block_length (b, c->block_size, c->size)))
      return false;
  return true;
}

uint64_t
read_cache_scan_claim (struct read_cache *c, uint64_t chunk, uint64_t limit)
{
  struct cache_head *h = head_of (c);
  uint64_t tag, next;

  if (!usable (c) || chunk == 0 || chunk % c->block_size != 0)
    return UINT64_MAX;
  /* The first connection of this object to get here starts its scan at
   * 0; a scan of an older object is over. */
  tag = __atomic_load_n (&h->scan_tag, __ATOMIC_ACQUIRE);
  if (tag != c->tag &&
      __atomic_compare_exchange_n (&h->scan_tag, &tag, c->tag, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE))
    __atomic_store_n (&h->scan_next, (uint64_t) 0, __ATOMIC_RELEASE);
  else if (tag != c->tag)
    return UINT64_MAX;
  next = __atomic_fetch_add (&h->scan_next, chunk, __ATOMIC_ACQ_REL);
  /* Another fetcher may have written anything there: a chunk that is not
   * one of ours ends the scan here. */
  if (next >= limit || next >= c->size || next % chunk != 0)
    return UINT64_MAX;
  return next;
}

/* ---- Inserting ---- */

/* What an entry of a set is to a writer looking for room. */
struct way {
  uint64_t version, used_ms;
  uint32_t owner;
  bool free;                    /* empty, stale, idle or a dead claim */
  bool live;                    /* stable, this object's, used lately */
};

static void
look_at_way (const struct read_cache *c, struct cache_entry *e, uint64_t now_ms,
             struct way *w)
{
  uint64_t claimed;

  w->version = __atomic_load_n (&e->version, __ATOMIC_ACQUIRE);
  w->used_ms = LOAD (&e->used_ms);
  w->owner = LOAD (&e->owner);
  w->live = false;
  if ((w->version & 1) != 0) {
    claimed = LOAD (&e->claimed_ms);
    /* A claim from the future is as stale as an old one: the clock is
     * the same for every fetcher, so another fetcher made it up. */
    w->free = now_ms - claimed > CACHE_CLAIM_STALE_MS && claimed - now_ms > CACHE_CLAIM_STALE_MS;
    return;
  }
  w->free = LOAD (&e->tag) != c->tag ||
            (now_ms - w->used_ms > CACHE_IDLE_MS && w->used_ms - now_ms > CACHE_IDLE_MS);
  w->live = !w->free;
}

/* Among ways[] (CACHE_WAYS), the least recently used that passes: those
 * of owner (mine), those of an owner holding more than its share
 * (over), or any live one.  Returns its index, or CACHE_WAYS. */
enum pick { PICK_MINE, PICK_OVER_SHARE, PICK_ANY };
static uint32_t
least_recent (const struct way *ways, uint32_t owner, enum pick pick)
{
  uint32_t i, j, best = CACHE_WAYS, count;

  for (i = 0; i < CACHE_WAYS; i++) {
    if (!ways[i].live || (pick == PICK_MINE && ways[i].owner != owner))
      continue;
    if (pick == PICK_OVER_SHARE) {
      for (count = 0, j = 0; j < CACHE_WAYS; j++)
        count += ways[j].live && ways[j].owner == ways[i].owner;
      if (count <= CACHE_SHARE_WAYS)
        continue;
    }
    if (best == CACHE_WAYS || ways[i].used_ms < ways[best].used_ms)
      best = i;
  }
  return best;
}

/* The way of the set to fill: a free one; else, once this connection
 * holds its share of the set, its own least recently used; else the
 * least recently used of an owner over its share, or of anyone. */
static uint32_t
choose_victim (const struct way *ways, uint32_t owner)
{
  uint32_t i, mine = 0, v;

  for (i = 0; i < CACHE_WAYS; i++) {
    if (ways[i].free)
      return i;
    mine += ways[i].live && ways[i].owner == owner;
  }
  if (mine >= CACHE_SHARE_WAYS)
    return least_recent (ways, owner, PICK_MINE);
  v = least_recent (ways, owner, PICK_OVER_SHARE);
  return v < CACHE_WAYS ? v : least_recent (ways, owner, PICK_ANY);
}

/* Fill entry i with block b (len bytes at src) under a claim from
 * version v; a lost race leaves it to the winner. */
static void
fill_entry (struct read_cache *c, uint32_t i, uint64_t v, uint64_t b, uint32_t len,
            const uint8_t *src, uint64_t now_ms)
{
  struct cache_entry *e = entry_at (c, i);
  /* Even: claim with v + 1; a dead writer's odd claim: take it with v + 2. */
  uint64_t claim = (v & 1) != 0 ? v + 2 : v + 1;

  if (!__atomic_compare_exchange_n (&e->version, &v, claim, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED))
    return;
  STORE (&e->claimed_ms, now_ms);
  STORE (&e->tag, (uint64_t) CACHE_TAG_NONE);
  __atomic_thread_fence (__ATOMIC_RELEASE);
  memcpy (block_at (c, i), src, len);
  STORE (&e->block, b);
  STORE (&e->length, len);
  STORE (&e->owner, c->owner);
  STORE (&e->used_ms, now_ms);
  STORE (&e->tag, c->tag);
  v = claim;
  if (__atomic_compare_exchange_n (&e->version, &v, claim + 1, false, __ATOMIC_RELEASE,
                                   __ATOMIC_RELAXED))
    c->inserted++;
}

/* Keep block b (len bytes at src), unless it is there already. */
static void
insert_block (struct read_cache *c, uint64_t b, uint32_t len, const uint8_t *src,
              uint64_t now_ms)
{
  uint32_t first = cache_set_first (c->tag, b, c->nentries), w;
  struct way ways[CACHE_WAYS];

  for (w = 0; w < CACHE_WAYS; w++) {
    struct cache_entry *e = entry_at (c, first + w);
    look_at_way (c, e, now_ms, &ways[w]);
    if (ways[w].live && LOAD (&e->block) == b && LOAD (&e->length) == len) {
      STORE (&e->used_ms, now_ms);
      return;
    }
  }
  w = choose_victim (ways, c->owner);
  if (w < CACHE_WAYS)
    fill_entry (c, first + w, ways[w].version, b, len, src, now_ms);
}

void
read_cache_insert (struct read_cache *c, uint64_t offset, uint64_t length,
                   const uint8_t *src, uint64_t now_ms)
{
  uint64_t b, end;

  if (!usable (c) || length == 0 || offset > c->size || length > c->size - offset)
    return;
  end = offset + length;
  /* The first whole block at or after offset; each pass keeps one. */
  b = (offset + c->block_size - 1) / c->block_size;
  for (; b * c->block_size < end; b++) {
    uint64_t start = b * c->block_size;
    uint32_t len = cache_block_length (b, c->block_size, c->size);

    if (len == 0 || len > end - start)
      break;                    /* not all of the block is here */
    insert_block (c, b, len, src + (start - offset), now_ms);
  }
}
