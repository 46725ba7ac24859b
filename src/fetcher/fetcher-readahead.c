/*
 * fetcher-readahead.c: the network fetcher's prefetch store: readahead
 * for sequential readers, and NBD_CMD_CACHE (IPC_CACHE).
 *
 * A reader at queue depth 1 (dd, a booting VM, qemu-img converting a
 * compressed qcow2) asks for one small range at a time; without this
 * each costs a whole HTTP round trip.  So the reads are watched
 * (forward-reader.c): once a read belongs to a forward run (reads that
 * move forward, each near what was asked before: exact successors,
 * overlaps and small gaps alike) and the client keeps little in flight
 * (a client with much in flight gains nothing from this), a
 * read that misses the store fetches a window starting at its offset
 * instead of just itself, and waits for it; a read answered from the
 * store fetches the next windows, until its lead is stored or coming
 * past its run's furthest byte, up to READAHEAD_MAX_INFLIGHT windows at
 * once, each on its own web connection.  How long the lead is, and in
 * windows of what size, is measured as the reader goes
 * (readahead-lead.c): what it takes while a window comes, more when it
 * has to wait, less when it slows or stops.  A read that belongs to no
 * forward run fetches nothing ahead, so a random reader pays nothing (its
 * reads go out exactly as without the store).
 *
 * The store is a few segments in one region of the fetcher's own memory
 * (store-arena.h), at most http.ra_max bytes (READAHEAD_MAX_BYTES, and no
 * more than the client's --client-memory).  A segment is fetched by an
 * ordinary range request, through the direct path when it runs (received straight into the
 * segment: no libcurl buffer, no copy out of it; never the data pipe,
 * as the bytes must land here), else through libcurl, with the same
 * preconditions, and its reply goes through the same checks
 * (web-reply.c) as any read's: a segment's bytes are used only once its
 * transfer ended with every check passed and the body exactly as long
 * as asked, never before: a window that fails half-way serves nothing.
 * Reads that need a segment still in flight wait for it; none is
 * fetched twice.  When a segment fails, the
 * reads waiting for it are fetched on their own (they then succeed or
 * fail by their own replies) and a CACHE waiting for it gets EIO.
 *
 * A read is answered from the store by copying into its place in the
 * data area; a read whose start is stored but not its end gets the stored
 * part copied and fetches the rest through libcurl into the data area.
 * A segment is freed once its run's reads have moved further past it than
 * a read that continues the run may start back; when room is needed, the
 * oldest complete segments go first.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clock.h"
#include "fetcher-cache.h"
#include "fetcher-http.h"
#include "forward-reader.h"
#include "ipc-messages.h"
#include "limits-readahead-windows.h"
#include "limits-staging.h"
#include "limits-web.h"
#include "readahead-lead.h"
#include "store-arena.h"

/* Under AddressSanitizer, the arena's bytes that no segment holds are
 * poisoned, so that a segment read or written past its end is caught as
 * it would be if each were allocated on its own. */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define ARENA_POISON(p, n) ASAN_POISON_MEMORY_REGION ((p), (n))
#define ARENA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION ((p), (n))
#else
#define ARENA_POISON(p, n) ((void) (p), (void) (n))
#define ARENA_UNPOISON(p, n) ((void) (p), (void) (n))
#endif

enum segment_state { SEG_FREE, SEG_FETCHING, SEG_READY };

struct ra_segment {
  enum segment_state state;
  uint64_t offset;
  uint32_t length;
  uint64_t serial;            /* when made: the oldest is evicted first */
  uint64_t requested_us;      /* when its request went out */
  uint8_t *data;              /* length bytes, in the arena */
};

/* A request that waits for segments in flight: a READ (its data area
 * place in req.data) or a CACHE. */
struct waiter {
  struct fetcher_request req;
  bool failed;                /* a segment it waited for failed */
  uint64_t budget;            /* a CACHE: bytes it may still fetch */
};

static struct {
  uint32_t max;               /* store bytes, 0: readahead off */
  uint8_t *arena;             /* the segments' region: arena_size bytes,
                                 mapped at the first window; segments lie
                                 in its first max bytes */
  uint32_t arena_size;
  uint32_t arena_next;        /* where the newest segment placed ends */
  uint64_t used;              /* bytes of the segments not free */
  uint64_t serial;
  struct ra_segment seg[READAHEAD_MAX_SEGMENTS];
  unsigned fetching;          /* segments in flight */
  struct waiter waiters[QUEUE_SIZE];
  unsigned nwaiters;
  /* Is the client reading forward, and where is it? */
  struct forward_reader reader;
  struct forward_verdict verdict;   /* of the newest read */
  bool follow;                /* read ahead of it (sequential) */
  uint64_t pipelined_until;   /* the reader's clock until which it counts
                                 as pipelining (little_in_flight) */
  struct readahead_lead lead; /* how far ahead, in windows of what size */
  uint32_t first_end;         /* the first read's end, if it was at offset 0 */
} ra;

static uint32_t max_window (void);

void
readahead_init (uint32_t max)
{
  ra.max = max;
  forward_reader_init (&ra.reader);
  lead_init (&ra.lead, max_window ());
}

static unsigned
free_transfers (void)
{
  unsigned n = 0;
  for (struct transfer *t = http.free_list; t != NULL; t = t->next_free)
    n++;
  return n;
}

/* Give back the whole pages of the arena in [from, to), which no
 * segment holds: the store shrank below them. */
static void
arena_release (uint64_t from, uint64_t to)
{
  const uint64_t page = (uint64_t) getpagesize ();

  from = (from + page - 1) / page * page;
  to = to / page * page;
  if (from < to && madvise (ra.arena + from, to - from, MADV_DONTNEED) == -1)
    debug ("readahead: madvise of %" PRIu64 " bytes: %m", to - from);
}

static void
segment_free (struct ra_segment *s)
{
  uint64_t start = (uint64_t) (s->data - ra.arena), end = start + s->length;

  /* Past the store's bound, its pages will not be used again. */
  if (end > ra.max)
    arena_release (start > ra.max ? start : ra.max, end);
  ARENA_POISON (s->data, s->length);
  s->data = NULL;
  ra.used -= s->length;
  s->state = SEG_FREE;
}

/* Where len more bytes fit in the arena's first ra.max bytes beside the
 * segments there, or NULL.  The arena is mapped at the first call. */
static uint8_t *
arena_place (uint32_t len)
{
  struct arena_piece taken[READAHEAD_MAX_SEGMENTS];
  int64_t at;

  if (ra.arena == NULL) {
    void *p = mmap (NULL, ra.max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return NULL;              /* no memory: read as if there were no store */
    ra.arena = p;
    ra.arena_size = ra.max;
    /* Huge pages where the kernel has them: a fault per 2 MiB instead of
     * per 4 KiB. */
    (void) madvise (p, ra.max, MADV_HUGEPAGE);
    ARENA_POISON (p, ra.max);
  }
  for (unsigned i = 0; i < READAHEAD_MAX_SEGMENTS; i++) {
    const struct ra_segment *s = &ra.seg[i];
    taken[i] = s->state == SEG_FREE ? (struct arena_piece) { 0, 0 }
             : (struct arena_piece) { (uint32_t) (s->data - ra.arena), s->length };
  }
  at = arena_fit (taken, READAHEAD_MAX_SEGMENTS, ra.max, len, ra.arena_next);
  if (at < 0)
    return NULL;
  ra.arena_next = (uint32_t) at + len;
  ARENA_UNPOISON (ra.arena + at, len);
  return ra.arena + at;
}

/* The segment holding byte pos, or NULL. */
static struct ra_segment *
segment_at (uint64_t pos)
{
  for (unsigned i = 0; i < READAHEAD_MAX_SEGMENTS; i++) {
    struct ra_segment *s = &ra.seg[i];
    if (s->state != SEG_FREE && pos >= s->offset && pos - s->offset < s->length)
      return s;
  }
  return NULL;
}

/* Make room for len more bytes and a free slot, evicting the oldest
 * complete segments that do not overlap [keep_lo, keep_hi).  Returns the
 * free slot, its place in the arena in *data, or NULL when there is no
 * room. */
static struct ra_segment *
make_room (uint32_t len, uint64_t keep_lo, uint64_t keep_hi, uint8_t **data)
{
  /* Each pass frees one segment or ends: at most READAHEAD_MAX_SEGMENTS. */
  for (;;) {
    struct ra_segment *slot = NULL, *oldest = NULL;
    for (unsigned i = 0; i < READAHEAD_MAX_SEGMENTS; i++) {
      struct ra_segment *s = &ra.seg[i];
      if (s->state == SEG_FREE)
        slot = slot ? slot : s;
      else if (s->state == SEG_READY &&
               (s->offset >= keep_hi || s->offset + s->length <= keep_lo) &&
               (oldest == NULL || s->serial < oldest->serial))
        oldest = s;
    }
    if (slot != NULL && ra.used + len <= ra.max && (*data = arena_place (len)) != NULL)
      return slot;
    if (oldest == NULL)
      return NULL;
    segment_free (oldest);
  }
}

/* The transfers fetching reads for the client (not prefetches): those
 * of the pool not on its free list.  Their ranges include the queued
 * reads that joined a read as its parts (start_read's coalescing), which
 * this store never saw. */
static void
reads_in_flight (bool busy[MAX_CONNECTIONS])
{
  for (unsigned i = 0; i < http.f->cfg->connections; i++)
    busy[i] = true;
  for (struct transfer *t = http.free_list; t != NULL; t = t->next_free)
    busy[t - http.pool] = false;
  for (unsigned i = 0; i < http.f->cfg->connections; i++)
    busy[i] = busy[i] && http.pool[i].mode == MODE_READ && http.pool[i].prefetch == NULL;
}

/* pos, or if a read in flight is fetching byte pos, the end of its
 * range: a window starts there, so that it fetches none of the bytes the
 * client's own reads are fetching.  (Each pass moves pos on, past one of
 * at most MAX_CONNECTIONS ranges, or ends.) */
static uint64_t
past_reads_in_flight (uint64_t pos)
{
  bool busy[MAX_CONNECTIONS], moved = true;

  reads_in_flight (busy);
  while (moved) {
    moved = false;
    for (unsigned i = 0; i < http.f->cfg->connections; i++) {
      const struct transfer *t = &http.pool[i];
      if (busy[i] && pos >= t->offset && pos - t->offset < t->length) {
        pos = t->offset + t->length;
        moved = true;
      }
    }
  }
  return pos;
}

/* len, or less: up to the next byte after pos that is stored, coming, or
 * fetched by a read in flight, which is not itself: no byte is fetched
 * twice. */
static uint32_t
up_to_next (uint64_t pos, uint32_t len)
{
  bool busy[MAX_CONNECTIONS];

  for (unsigned i = 0; i < READAHEAD_MAX_SEGMENTS; i++)
    if (ra.seg[i].state != SEG_FREE && ra.seg[i].offset > pos &&
        ra.seg[i].offset - pos < len)
      len = (uint32_t) (ra.seg[i].offset - pos);
  reads_in_flight (busy);
  for (unsigned i = 0; i < http.f->cfg->connections; i++)
    if (busy[i] && http.pool[i].offset > pos && http.pool[i].offset - pos < len)
      len = (uint32_t) (http.pool[i].offset - pos);
  return len;
}

/* len, or more: to the end of the cache block where [pos, pos + len)
 * ends, or the object's.  With a cache, windows that end on block
 * boundaries leave no block in part between two of them, to be completed
 * by the next (cache-partial.c) or fetched again whole. */
static uint32_t
to_block_end (uint64_t pos, uint32_t len)
{
  const uint32_t block = fetcher_cache_block_size ();
  uint64_t end = pos + len;

  if (block == 0 || end % block == 0)
    return len;
  end += block - end % block;
  if (end > http.f->size)
    end = http.f->size;
  return (uint32_t) (end - pos);      /* len + less than a block */
}

/* Fetch [offset, offset + len) into a new segment (len clipped to the
 * export's end, taken to a cache block's end).  Needs a free transfer.  Returns the segment, or NULL
 * when there is no room. */
static struct ra_segment *
prefetch (uint64_t offset, uint32_t len, uint64_t keep_lo, uint64_t keep_hi)
{
  struct ra_segment *s;
  uint8_t *data;

  if (offset >= http.f->size || http.free_list == NULL)
    return NULL;
  if (len > http.f->size - offset)
    len = (uint32_t) (http.f->size - offset);
  len = up_to_next (offset, to_block_end (offset, len));
  if ((s = make_room (len, keep_lo, keep_hi, &data)) == NULL)
    return NULL;
  s->data = data;
  s->state = SEG_FETCHING;
  s->offset = offset;
  s->length = len;
  s->serial = ++ra.serial;
  s->requested_us = monotonic_us ();
  ra.used += len;
  ra.fetching++;
  debug ("readahead: fetching %" PRIu32 " bytes at offset %" PRIu64, len, offset);
  start_prefetch (s, offset, len, s->data);   /* may end it at once */
  return s;
}

/* The largest window the store allows: READAHEAD_MAX_INFLIGHT coming,
 * and two more, the one being read and the one before it; and what one
 * range GET should carry at most. */
static uint32_t
max_window (void)
{
  uint32_t w = ra.max / (READAHEAD_MAX_INFLIGHT + 2);
  return w < READAHEAD_MAX_WINDOW ? w : READAHEAD_MAX_WINDOW;
}

/* Does the client keep little in flight besides its newest read?  Its
 * other reads not answered yet: queued, fetched on their own, or waiting
 * for the store.  A client that keeps much in flight (nbdcopy, qemu-img
 * converting a raw image: eight reads of 2 MiB) is read ahead already,
 * by the coalescing of queued reads (start_read) and the direct reads'
 * splicing; windows through the store would only slow it and fetch some
 * bytes twice.  One that keeps one small read in flight, or a few
 * (qemu-img converting a compressed qcow2), waits a round trip for each
 * unless it is read ahead here.  A pipelining client has little in
 * flight now and then too (nbdcopy where a worker starts a new region),
 * so one that had READAHEAD_PIPELINED_BYTES in flight at any of its last
 * READAHEAD_PIPELINED_MEMORY reads is not read ahead either. */
static bool
little_in_flight (void)
{
  bool busy[MAX_CONNECTIONS];
  uint64_t bytes = 0;
  unsigned reads = 0;

  for (unsigned i = 0; i < http.queue_len; i++) {
    const struct fetcher_request *r = &http.queue[(http.queue_head + i) % QUEUE_SIZE];
    reads += r->type == IPC_READ;
    bytes += r->type == IPC_READ ? r->length : 0;
  }
  for (unsigned i = 0; i < ra.nwaiters; i++) {
    reads += ra.waiters[i].req.type == IPC_READ;
    bytes += ra.waiters[i].req.type == IPC_READ ? ra.waiters[i].req.length : 0;
  }
  reads_in_flight (busy);
  for (unsigned i = 0; i < http.f->cfg->connections; i++) {
    const struct transfer *t = &http.pool[i];
    if (busy[i]) {
      reads += t->nparts - t->next_part;
      bytes += t->length - t->received;
    }
  }
  if (bytes >= READAHEAD_PIPELINED_BYTES)
    ra.pipelined_until = ra.reader.clock + READAHEAD_PIPELINED_MEMORY;
  return reads < READAHEAD_MAX_CLIENT_READS && bytes < READAHEAD_MAX_CLIENT_BYTES &&
         ra.reader.clock >= ra.pipelined_until;
}

/* Does a read waiting in the store need a byte of s? */
static bool
segment_awaited (const struct ra_segment *s)
{
  for (unsigned i = 0; i < ra.nwaiters; i++) {
    const struct fetcher_request *r = &ra.waiters[i].req;
    if (r->offset < s->offset + s->length && s->offset < r->offset + r->length)
      return true;
  }
  return false;
}

/* The segments wholly behind the forward run of the newest read (req),
 * further back than any read that continues the run may start, and
 * behind req itself, which is yet to be answered (its run's frontier is
 * its end already: a read of 2 MiB starts further back than
 * FORWARD_MAX_DISTANCE before it): they will not be read again, and go
 * before they are evicted.  (Not by counting the bytes read out of them:
 * a reader whose reads overlap reads some twice, and one that leaves gaps
 * never reads them all.)  A segment a waiting read needs stays. */
static void
release_behind (const struct fetcher_request *req)
{
  uint64_t lo = ra.verdict.run_start, hi;

  if (ra.verdict.frontier - lo <= FORWARD_MAX_DISTANCE)
    return;
  hi = ra.verdict.frontier - FORWARD_MAX_DISTANCE;
  if (req->offset < hi)
    hi = req->offset;
  if (hi <= lo)
    return;
  for (unsigned i = 0; i < READAHEAD_MAX_SEGMENTS; i++) {
    struct ra_segment *s = &ra.seg[i];
    if (s->state == SEG_READY && s->offset >= lo && s->length <= hi - lo &&
        s->offset - lo <= hi - lo - s->length && !segment_awaited (s))
      segment_free (s);
  }
}

/* Watch a new read: does it belong to a forward run? */
static void
observe (const struct fetcher_request *req)
{
  ra.verdict = forward_reader_observe (&ra.reader, req->offset, req->length);
  if (ra.reader.clock == 1 && req->offset == 0)
    ra.first_end = req->length;
  ra.follow = ra.verdict.forward && little_in_flight ();
  /* A read elsewhere (a qcow2 reader's table, a jump) leaves the lead
   * as it is: it measures the reader, not the run. */
  if (ra.verdict.forward) {
    lead_consumed (&ra.lead, req->length, monotonic_us ());
    release_behind (req);
  }
}

/* Fetch ahead for the newest read?  Its run must be forward, and the
 * client must have kept little in flight when it came (little_in_flight). */
static bool
sequential (void)
{
  return ra.follow;
}

/* The bytes of s that may be read now: all once its transfer ended with
 * every check passed, none before.  A window that fails half-way (a
 * short body, a reset) serves nothing: the reads that wait for it are
 * fetched on their own and get their own reply's verdict. */
static uint64_t
usable (const struct ra_segment *s)
{
  return s->state == SEG_READY ? s->length : 0;
}

/* How much of [offset, offset + length) the store holds or fetches from
 * offset on, without a gap; *fetching: some of it has yet to arrive. */
static uint64_t
covered (uint64_t offset, uint64_t length, bool *fetching)
{
  uint64_t pos = offset, end = offset + length;
  struct ra_segment *s;

  *fetching = false;
  while (pos < end && (s = segment_at (pos)) != NULL) {
    uint64_t seg_end = s->offset + s->length;
    if ((seg_end < end ? seg_end : end) - s->offset > usable (s))
      *fetching = true;
    pos = seg_end;
  }
  return (pos < end ? pos : end) - offset;
}

/* Walk [offset, offset + n) over complete segments (covered said so):
 * each piece's segment, its offset in it, and its length. */
static struct ra_segment *
piece (uint64_t pos, uint64_t end, uint64_t *in, uint64_t *take)
{
  struct ra_segment *s = segment_at (pos);

  if (s == NULL)
    fatal ("internal error: readahead copy from a gap at %" PRIu64, pos);
  *in = pos - s->offset;
  *take = s->length - *in < end - pos ? s->length - *in : end - pos;
  if (*in + *take > usable (s))
    fatal ("internal error: readahead copy of bytes still to come at %" PRIu64, pos);
  return s;
}

/* Copy [offset, offset + n) from the store to dst. */
static void
copy_out (uint8_t *dst, uint64_t offset, uint64_t n)
{
  uint64_t pos = offset, end = offset + n, in = 0, take = 0;

  while (pos < end) {
    struct ra_segment *s = piece (pos, end, &in, &take);
    memcpy (dst + (pos - offset), s->data + in, take);
    pos += take;
  }
}

/* Answer a read that the data pipe takes through it, when no direct read
 * is using it: the front-end splices the bytes on to the client, and its
 * data area is not touched (shared memory pages cost a fault each time
 * the front-end gives them back, as it does for reads of this size).
 * Returns false when the pipe cannot take it all now: whatever went in
 * is announced as discarded, and the caller copies to the data area. */
static bool
pipe_out (const struct fetcher_request *req)
{
  struct iovec iov[READAHEAD_MAX_SEGMENTS];
  uint64_t pos = req->offset, end = req->offset + req->length, in = 0, take = 0;
  unsigned n = 0;
  ssize_t r;

  if (fetcher_pipe_fd < 0 || !direct_piped () || req->length > fetcher_pipe_read_max ||
      !direct_pipe_idle ())
    return false;
  /* Each piece is a different segment: at most READAHEAD_MAX_SEGMENTS. */
  while (pos < end) {
    struct ra_segment *s = piece (pos, end, &in, &take);
    iov[n++] = (struct iovec) { .iov_base = s->data + in, .iov_len = take };
    pos += take;
  }
  do
    r = writev (fetcher_pipe_fd, iov, (int) n);
  while (r == -1 && errno == EINTR);
  if (r != (ssize_t) req->length) {
    if (r > 0)
      fetcher_pipe_discard ((uint32_t) r);
    return false;
  }
  fetcher_reply_piped (req->id);
  return true;
}

/* Keep the forward reader ahead: its lead (readahead-lead.c) stored or
 * coming past its furthest byte, or past what is staged beyond it (the
 * reader may be anywhere in there: the front-end tells only when a span
 * comes back, and a reader that leaves its span should find the store's
 * bytes there already), in windows fetched at once over up to
 * READAHEAD_MAX_INFLIGHT web connections.  One at a time would hold the
 * reader to what one connection brings, which a server's cap per
 * connection or a long round trip keeps below what a reader such as
 * qemu-img takes. */
static void
keep_ahead (uint64_t frontier, unsigned spare_transfers)
{
  uint64_t keep_lo, lead = lead_bytes (&ra.lead);
  bool fetching;

  if (!sequential () || frontier >= http.f->size)
    return;
  /* What the run may still read again stays too. */
  keep_lo = frontier - ra.verdict.run_start > FORWARD_MAX_DISTANCE
          ? frontier - FORWARD_MAX_DISTANCE : ra.verdict.run_start;
  /* Each pass starts a window or ends, and at most READAHEAD_MAX_INFLIGHT
   * start (one that fails at once is not tried again here). */
  for (unsigned pass = 0; pass < READAHEAD_MAX_INFLIGHT; pass++) {
    uint64_t have = covered (frontier, http.f->size - frontier, &fetching);
    uint64_t pos = past_reads_in_flight (frontier + have);
    if (pos >= http.f->size || have >= lead + staging_ahead (frontier, ra.verdict.run_start) ||
        ra.fetching >= READAHEAD_MAX_INFLIGHT || free_transfers () <= spare_transfers)
      return;
    if (prefetch (pos, lead_window (&ra.lead), keep_lo, pos) == NULL || segment_at (pos) == NULL)
      return;
  }
}

enum outcome { ANSWERED, WAITING, FETCH };

/* Is req the client's second read, the first having been at offset 0
 * (ra.first_end: where it ended), a jump forward inside the object's head
 * from a client with little else in flight: an image being opened, its
 * header read and now its tables (READAHEAD_HEAD_BYTES)?  Not with a read
 * cache: it keeps what each read fetched, the head of an object read
 * before among it, in blocks a client's share may hold. */
static bool
head_read (const struct fetcher_request *req)
{
  return ra.reader.clock == 2 && ra.first_end > 0 && req->offset > ra.first_end &&
    req->length <= READAHEAD_HEAD_BYTES && req->offset <= READAHEAD_HEAD_BYTES - req->length &&
    ra.fetching == 0 && !fetcher_cache_on () && little_in_flight ();
}

/* A read, new or waiting: answer it from the store, let it wait, or
 * leave it (or its part past the stored start) to be fetched. */
static enum outcome
try_read (struct fetcher_request *req, bool fresh)
{
  bool fetching;
  uint64_t have = covered (req->offset, req->length, &fetching);

  if (have == req->length) {
    if (fetching) {
      if (fresh && sequential ())
        lead_starved (&ra.lead, monotonic_us ());
      return WAITING;
    }
    if (!pipe_out (req)) {
      copy_out (req->data, req->offset, have);
      fetcher_reply (req->id, 0);
    }
    fetcher_stats.readahead_hits++;
    fetcher_stats.readahead_bytes += have;
    if (fresh)
      keep_ahead (ra.verdict.frontier, 0);
    return ANSWERED;
  }
  if (have == 0 && fresh && head_read (req)) {
    /* The rest of the object's head, in one request (first_end <
     * req->offset < READAHEAD_HEAD_BYTES). */
    if (prefetch (ra.first_end, READAHEAD_HEAD_BYTES - ra.first_end, 0, 0) != NULL)
      return segment_at (req->offset) == NULL ? FETCH : WAITING;
  }
  if (fresh && sequential ()) {
    /* The reader came for bytes not stored yet: the lead was short. */
    lead_start (&ra.lead, req->length, direct_round_trip_us (), monotonic_us ());
    lead_starved (&ra.lead, monotonic_us ());
  }
  if (have == 0 && fresh && sequential () && ra.fetching < READAHEAD_MAX_INFLIGHT) {
    /* A sequential miss: fetch a window from here and wait for it.  A
     * transfer stays for the reads after it unless this is the only one. */
    uint32_t w = lead_window (&ra.lead);
    if (w < req->length && req->length <= max_window ())
      w = req->length;
    if (w >= req->length && prefetch (req->offset, w, req->offset, req->offset) != NULL) {
      if (segment_at (req->offset) == NULL)
        return FETCH;
      keep_ahead (ra.verdict.frontier, 1);
      return WAITING;
    }
  }
  if (fetching)
    return WAITING;             /* the stored start is still coming */
  if (have > 0) {
    /* The start is here: copy it, fetch the rest into the data area. */
    copy_out (req->data, req->offset, have);
    req->offset += have;
    req->length -= (uint32_t) have;
    req->data += have;
    req->flags |= REQ_READAHEAD_SEEN | REQ_NOT_PIPED;
  }
  return FETCH;
}

/* A CACHE, new or waiting: fetch what is missing of its range (as much as
 * the store holds), answer once all of it is stored. */
static enum outcome
try_cache (struct fetcher_request *req, uint64_t *budget)
{
  uint64_t pos = req->offset;
  uint64_t end = req->offset + (req->length < ra.max ? req->length : ra.max);
  bool waiting = false;

  /* Each pass moves pos past a segment, or starts one, or ends. */
  while (pos < end) {
    struct ra_segment *s = segment_at (pos);
    if (s != NULL) {
      waiting |= s->state == SEG_FETCHING;
      pos = s->offset + s->length;
      continue;
    }
    if (http.free_list == NULL || ra.fetching >= READAHEAD_MAX_INFLIGHT) {
      waiting = true;           /* again when a transfer is free */
      break;
    }
    /* A window at most (prefetch stops it at the next stored byte);
     * and no more than twice the range in all, should other prefetches
     * evict what this one fetched before it is complete. */
    {
      uint64_t gap = end - pos < max_window () ? end - pos : max_window ();
      if (*budget < gap)
        break;                  /* advice: what could be done is done */
      s = prefetch (pos, (uint32_t) gap, req->offset, end);
      if (s == NULL)
        break;                  /* no room: the rest is not cached (advice) */
      if (segment_at (pos) == NULL)
        break;                  /* failed at once */
      *budget -= s->length;
      waiting = true;
      pos = s->offset + s->length;
    }
  }
  if (waiting)
    return WAITING;
  fetcher_reply (req->id, 0);
  return ANSWERED;
}

static void
wait_for_store (const struct fetcher_request *req, uint64_t budget)
{
  if (ra.nwaiters == QUEUE_SIZE) {
    /* Only a front-end past MAX_INFLIGHT_PER_CLIENT gets here. */
    fetcher_reply (req->id, EIO);
    return;
  }
  ra.waiters[ra.nwaiters++] = (struct waiter) { .req = *req, .budget = budget };
}

bool
readahead_take (struct fetcher_request *req)
{
  enum outcome o;
  uint64_t budget = 2 * (uint64_t) req->length;

  if (req->type == IPC_CACHE) {
    if (ra.max == 0) {
      fetcher_reply (req->id, 0);    /* advice nothing here can take */
      return true;
    }
    o = try_cache (req, &budget);
  }
  else {
    if (ra.max == 0 || (req->flags & REQ_READAHEAD_SEEN))
      return false;
    observe (req);
    o = try_read (req, true);
  }
  if (o == WAITING)
    wait_for_store (req, budget);
  staging_fill ();
  return o != FETCH;
}

/* A waiting read that is to be fetched after all goes back to the head
 * of the queue, marked so that it is fetched into the data area. */
static void
refetch (struct fetcher_request *req)
{
  req->flags |= REQ_READAHEAD_SEEN | REQ_NOT_PIPED;
  if (http.queue_len == QUEUE_SIZE) {
    fetcher_reply (req->id, EIO);    /* a front-end past its limit */
    return;
  }
  queue_push_front (req);
}

void
readahead_progress (void)
{
  unsigned i = 0;

  /* Each pass answers or keeps one waiter. */
  while (i < ra.nwaiters) {
    struct waiter *w = &ra.waiters[i];
    enum outcome o;

    if (w->req.type == IPC_CACHE) {
      if (w->failed) {
        fetcher_reply (w->req.id, EIO);
        o = ANSWERED;
      }
      else
        o = try_cache (&w->req, &w->budget);
    }
    else {
      o = try_read (&w->req, false);
      if (o == FETCH)
        refetch (&w->req);
    }
    if (o == WAITING)
      i++;
    else
      ra.waiters[i] = ra.waiters[--ra.nwaiters];
  }
  staging_fill ();
}

/* ---- What staging (fetcher-staging.c) asks of the store ---- */

bool
readahead_following (uint64_t *frontier, uint64_t *run_start)
{
  *frontier = ra.verdict.frontier;
  *run_start = ra.verdict.run_start;
  return sequential () && ra.verdict.forward;
}

void
readahead_shrink (uint32_t bytes)
{
  /* At least a window's worth stays (the front-end lends spans only to a
   * client with STAGE_MIN_CLIENT_MEMORY, the store's bound). */
  ra.max = ra.max > 2 * bytes ? ra.max - bytes : ra.max / 2;
  lead_set_max_window (&ra.lead, max_window ());
  /* The arena's pages past the new bound that no segment holds go back
   * now; a segment's go back when it is freed.  Each pass moves pos past
   * the lowest segment still beyond it, or ends. */
  for (uint64_t pos = ra.max; ra.arena != NULL && pos < ra.arena_size; ) {
    const struct ra_segment *next = NULL;
    for (unsigned i = 0; i < READAHEAD_MAX_SEGMENTS; i++) {
      const struct ra_segment *s = &ra.seg[i];
      if (s->state != SEG_FREE && (uint64_t) (s->data - ra.arena) + s->length > pos &&
          (next == NULL || s->data < next->data))
        next = s;
    }
    if (next == NULL) {
      arena_release (pos, ra.arena_size);
      break;
    }
    if ((uint64_t) (next->data - ra.arena) > pos)
      arena_release (pos, (uint64_t) (next->data - ra.arena));
    pos = (uint64_t) (next->data - ra.arena) + next->length;
  }
}

uint32_t
readahead_stored (uint64_t pos, uint32_t max)
{
  uint64_t end = pos, limit = pos + max;   /* pos < size, max small: no overflow */
  struct ra_segment *s;

  /* Each pass moves end past a segment: at most READAHEAD_MAX_SEGMENTS. */
  while (end < limit && (s = segment_at (end)) != NULL && s->state == SEG_READY)
    end = s->offset + s->length;
  return (uint32_t) ((end < limit ? end : limit) - pos);
}

uint32_t
readahead_stage_max (void)
{
  uint64_t lead = lead_bytes (&ra.lead);

  return lead < STAGE_MIN_BYTES ? STAGE_MIN_BYTES
       : lead < STAGE_SPAN_BYTES ? (uint32_t) lead : STAGE_SPAN_BYTES;
}

void
readahead_copy (uint8_t *dst, uint64_t pos, uint32_t n)
{
  copy_out (dst, pos, n);
}

void
readahead_staged_progress (uint64_t offset, uint32_t length)
{
  const struct fetcher_request req = { .type = IPC_READ, .offset = offset, .length = length };

  ra.verdict = forward_reader_observe (&ra.reader, offset, length);
  ra.follow = ra.follow && ra.verdict.forward;
  if (!ra.verdict.forward)
    return;
  lead_consumed (&ra.lead, length, monotonic_us ());
  release_behind (&req);
  keep_ahead (ra.verdict.frontier, 0);
}

void
readahead_finished (struct ra_segment *s, const char *why)
{
  ra.fetching--;
  if (why == NULL) {
    s->state = SEG_READY;
    lead_fetched (&ra.lead, monotonic_us () - s->requested_us);
    return;
  }
  warn ("export \"%s\" (%s): readahead of %" PRIu32 " bytes at offset %" PRIu64
        " failed: %s", http.f->export_name, http.f->log_url, s->length, s->offset, why);
  /* The waiters that needed it: a CACHE fails, reads go out on their own
   * (readahead_progress finds them uncovered). */
  for (unsigned i = 0; i < ra.nwaiters; i++) {
    const struct fetcher_request *r = &ra.waiters[i].req;
    if (r->offset < s->offset + s->length && s->offset < r->offset + r->length)
      ra.waiters[i].failed = true;
  }
  segment_free (s);
  /* A failing server: start small again. */
  lead_restart (&ra.lead);
}

bool
readahead_overlaps (uint64_t offset, uint32_t length)
{
  for (unsigned i = 0; i < READAHEAD_MAX_SEGMENTS; i++) {
    const struct ra_segment *seg = &ra.seg[i];
    if (seg->state != SEG_FREE && seg->offset < offset + length &&
        offset < seg->offset + seg->length)
      return true;
  }
  return false;
}

bool
readahead_fetching (uint64_t offset, uint32_t length)
{
  for (unsigned i = 0; i < READAHEAD_MAX_SEGMENTS; i++) {
    const struct ra_segment *seg = &ra.seg[i];
    if (seg->state == SEG_FETCHING && seg->offset < offset + length &&
        offset < seg->offset + seg->length)
      return true;
  }
  return false;
}

unsigned
readahead_windows_in_flight (void)
{
  return ra.fetching;
}

unsigned
readahead_waiters (void)
{
  return ra.nwaiters;
}

bool
readahead_idle (void)
{
  return ra.nwaiters == 0 && ra.fetching == 0;
}
