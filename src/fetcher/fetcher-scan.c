/*
 * fetcher-scan.c: what a fetcher fetches into its export's read cache
 * in the background, while its client's reads leave it idle:
 *   - the blocks that reads and windows fetched only in part (a qcow2
 *     image's header and tables, read a few bytes at a time; the gaps
 *     between its compressed clusters), listed by cache-partial.c, so
 *     that the next read of them is a hit: the cache keeps whole blocks
 *     only;
 *   - with --prefetch=all (nbdkit's scan filter), the whole object, in
 *     order.
 *
 * Clients' own reads go first: a fetcher fills a block only while none
 * of its client's reads waits or runs, and scans only while its
 * readahead is idle too, so it never delays a read by more than the
 * transfers already under way.  A block that a window in flight may
 * complete waits for it.  When the client leaves, the blocks still
 * listed are fetched before the fetcher exits, for a bounded time
 * (scan_fills_waiting, CACHE_FILL_LINGER_MS).  The fetchers of an export share the scan's cursor in the
 * cache's head (read_cache_scan_claim), so each chunk is fetched once,
 * whichever connection is idle; a chunk or block already in the cache is
 * skipped.  The scan stops at the object's end or once it has fetched as
 * much as the cache holds (more would evict what it fetched).  Each
 * transfer is an ordinary range read through libcurl, checked like any
 * other (web-reply.c), and kept only if it passed; a failure ends this
 * fetcher's background fetches.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "cache-layout.h"
#include "fetcher-cache.h"
#include "fetcher-curl.h"
#include "limits-cache.h"

static struct {
  bool cache;                   /* background fetches: a cache, no failure */
  bool on;                      /* scanning: --prefetch=all, not over */
  uint64_t chunk;               /* bytes a scan transfer brings */
  uint64_t limit;               /* where the scan ends */
  uint32_t block_size;
  unsigned max_inflight, inflight;
  uint8_t *buffers[SCAN_MAX_INFLIGHT];  /* chunk bytes each */
  bool busy[SCAN_MAX_INFLIGHT];
  uint64_t chunks, bytes;       /* fetched, for the summary */
} scan;

void
scan_init (const struct fetcher *f, uint32_t block_size, uint64_t capacity)
{
  if (!http.range_is_http || !fetcher_cache_on ())
    return;
  scan.cache = true;
  scan.block_size = block_size;
  scan.chunk = block_size > SCAN_CHUNK_BYTES ? block_size : SCAN_CHUNK_BYTES;
  scan.limit = capacity < f->size ? capacity : f->size;
  /* Within the client's readahead budget (--client-memory): at least one. */
  scan.max_inflight = (unsigned) (f->cfg->readahead / scan.chunk);
  if (scan.max_inflight > SCAN_MAX_INFLIGHT)
    scan.max_inflight = SCAN_MAX_INFLIGHT;
  if (scan.max_inflight == 0)
    scan.max_inflight = 1;
  scan.on = (f->cfg->flags & FETCHER_PREFETCH_ALL) != 0;
}

void
scan_stop (void)
{
  scan.on = false;
}

unsigned
scan_inflight (void)
{
  return scan.inflight;
}

/* A free buffer's index (inflight < max_inflight: there is one). */
static unsigned
take_buffer (void)
{
  unsigned i;

  for (i = 0; i < scan.max_inflight && scan.busy[i]; i++)
    ;
  if (scan.buffers[i] == NULL) {
    scan.buffers[i] = malloc (scan.chunk);
    if (scan.buffers[i] == NULL)
      fatal_errno ("malloc");
  }
  scan.busy[i] = true;
  return i;
}

/* Fetch [offset, offset + up to length) of the object in the background. */
static void
start_chunk (uint64_t offset, uint64_t length)
{
  struct transfer *t = http.free_list;

  if (length > http.f->size - offset)
    length = http.f->size - offset;
  http.free_list = t->next_free;
  http.active++;
  scan.inflight++;
  transfer_reset (t, MODE_READ);
  t->offset = offset;
  t->length = (uint32_t) length;          /* <= chunk <= CACHE_MAX_BLOCK_SIZE */
  t->data = scan.buffers[take_buffer ()]; /* no parts: the body goes here */
  t->scan = true;
  start_curl_read (t);
}

/* Is a window in flight fetching bytes of [offset, offset + length)?
 * Then it may complete the block: wait for it. */
static bool
window_in_flight (uint64_t offset, uint32_t length)
{
  return readahead_fetching (offset, length);
}

/* Does no read of the client wait or run (windows and background
 * transfers may)? */
static bool
client_reads_idle (void)
{
  return http.queue_len == 0 && readahead_waiters () == 0 &&
         http.active == scan.inflight + readahead_windows_in_flight ();
}

/* The next background transfer: a block to fill, else, with nothing but
 * background transfers running, the scan's next chunk.  False when there
 * is none. */
static bool
start_next (void)
{
  uint64_t offset;
  uint32_t length;

  if (fetcher_cache_next_fill (window_in_flight, &offset, &length)) {
    start_chunk (offset, length);
    return true;
  }
  /* Each pass claims one chunk: the cursor only grows, to limit. */
  while (scan.on && http.active == scan.inflight && readahead_idle ()) {
    offset = fetcher_cache_scan_claim (scan.chunk, scan.limit);
    if (offset == UINT64_MAX) {
      scan.on = false;
      debug ("export \"%s\": prefetch: this connection fetched %" PRIu64 " pieces "
             "(%" PRIu64 " bytes); the scan is over", http.f->export_name, scan.chunks,
             scan.bytes);
      break;
    }
    if (!fetcher_cache_holds (offset, scan.chunk)) {
      start_chunk (offset, scan.chunk);
      return true;
    }
  }
  return false;
}

void
scan_progress (void)
{
  /* Each pass starts one transfer or stops: at most max_inflight. */
  while (scan.cache && scan.inflight < scan.max_inflight && http.free_list != NULL &&
         client_reads_idle () && !script_hold_reads () && start_next ())
    ;
}

bool
scan_fills_waiting (void)
{
  return scan.cache && (scan.inflight > 0 || fetcher_cache_fills_listed () > 0);
}

void
scan_finished (struct transfer *t, const char *why)
{
  unsigned i;

  scan.inflight--;
  for (i = 0; i < scan.max_inflight; i++)
    if (scan.buffers[i] == t->data)
      scan.busy[i] = false;
  if (why != NULL) {
    warn ("export \"%s\" (%s): fetching %" PRIu32 " bytes at offset %" PRIu64 " into "
          "the cache failed: %s; this connection fetches no more in the background",
          http.f->export_name, http.f->log_url, t->length, t->offset, why);
    if (t->reply.object_changed)
      fetcher_cache_changed ();
    scan_stop ();
    return;
  }
  fetcher_cache_keep (t->offset, t->data, t->length);
  scan.chunks++;
  scan.bytes += t->length;
}
