/*
 * fetcher-scan.c: --prefetch=all (nbdkit's scan filter): the export's
 * object is fetched in order into its read cache, in the background, by
 * the fetchers of its connections.
 *
 * Clients' own reads go first: a fetcher starts a chunk of the scan only
 * while none of its client's reads waits or runs and its readahead is
 * idle, so a scan never delays a read by more than the chunks already
 * under way.  The fetchers of an export share one cursor in the cache's
 * head (read_cache_scan_claim), so each chunk is fetched once, whichever
 * connection is idle; a chunk already in the cache is skipped.  The scan
 * stops at the object's end or once it has fetched as much as the cache
 * holds (more would evict what it fetched).  Each chunk is an ordinary
 * range read through libcurl, checked like any other (web-reply.c), and
 * kept only if it passed; a failure ends this fetcher's part of the scan.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "fetcher-cache.h"
#include "fetcher-curl.h"
#include "limits-cache.h"

static struct {
  bool on;                      /* scanning: not over, no failure */
  uint64_t chunk;               /* bytes a transfer brings */
  uint64_t limit;               /* where the scan ends */
  unsigned max_inflight, inflight;
  uint8_t *buffers[SCAN_MAX_INFLIGHT];
  bool busy[SCAN_MAX_INFLIGHT];
  uint64_t chunks, bytes;       /* fetched, for the summary */
} scan;

void
scan_init (const struct fetcher *f, uint32_t block_size, uint64_t capacity)
{
  if (!(f->cfg->flags & FETCHER_PREFETCH_ALL) || !http.range_is_http || !fetcher_cache_on ())
    return;
  scan.chunk = block_size > SCAN_CHUNK_BYTES ? block_size : SCAN_CHUNK_BYTES;
  scan.limit = capacity < f->size ? capacity : f->size;
  /* Within the client's readahead budget (--client-memory): at least one. */
  scan.max_inflight = (unsigned) (f->cfg->readahead / scan.chunk);
  if (scan.max_inflight > SCAN_MAX_INFLIGHT)
    scan.max_inflight = SCAN_MAX_INFLIGHT;
  if (scan.max_inflight == 0)
    scan.max_inflight = 1;
  scan.on = true;
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

static void
start_chunk (uint64_t offset)
{
  struct transfer *t = http.free_list;
  uint64_t length = http.f->size - offset < scan.chunk ? http.f->size - offset : scan.chunk;

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

void
scan_progress (void)
{
  /* Each pass starts one chunk or ends the scan: at most max_inflight. */
  while (scan.on && scan.inflight < scan.max_inflight && http.free_list != NULL &&
         http.queue_len == 0 && http.active == scan.inflight && readahead_idle () &&
         !script_hold_reads ()) {
    uint64_t offset = fetcher_cache_scan_claim (scan.chunk, scan.limit);
    if (offset == UINT64_MAX) {
      scan.on = false;
      debug ("export \"%s\": prefetch: this connection fetched %" PRIu64 " chunks "
             "(%" PRIu64 " bytes); the scan is over", http.f->export_name, scan.chunks,
             scan.bytes);
      break;
    }
    if (!fetcher_cache_holds (offset, scan.chunk))
      start_chunk (offset);
  }
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
    warn ("export \"%s\" (%s): prefetch of %" PRIu32 " bytes at offset %" PRIu64
          " failed: %s; this connection fetches no more of it", http.f->export_name,
          http.f->log_url, t->length, t->offset, why);
    if (t->reply.object_changed)
      fetcher_cache_changed ();
    scan.on = false;
    return;
  }
  fetcher_cache_keep (t->offset, t->data, t->length);
  scan.chunks++;
  scan.bytes += t->length;
}
