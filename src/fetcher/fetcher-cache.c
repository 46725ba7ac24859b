/*
 * fetcher-cache.c: the export's shared read cache, as the network
 * fetcher uses it (fetcher-cache.h): the descriptor the supervisor made
 * (cache-backing.c), mapped once before the sandbox, so no file is opened
 * here; the tag that pins it to the object; and the hooks the reads call.
 */
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache-layout.h"
#include "cache-partial.h"
#include "child-fds.h"
#include "clock.h"
#include "fetcher-cache.h"
#include "fetcher-wire.h"
#include "log.h"
#include "read-cache.h"

static struct read_cache cache;
static struct partial_blocks partial;
static bool cache_mapped;
static const char *export_name = "";

/* The cache's descriptor: after the script channel and the CA
 * certificates, those of them the fetcher has. */
static int
cache_fd (const struct fetcher_config *cfg)
{
  int fd = CHILD_FD_CACHE_FIRST;

  if (cfg->flags & (FETCHER_HEADER_SCRIPT | FETCHER_COOKIE_SCRIPT))
    fd++;
  if (cfg->ca_bundle_len > 0)
    fd++;
  return fd;
}

void
fetcher_cache_take (const struct fetcher_config *cfg)
{
  const int fd = cache_fd (cfg);
  uint64_t bytes;
  struct stat st;
  void *p;

  if (cfg->cache_entries == 0)
    return;
  export_name = cfg->export_name;
  /* config.c checked the geometry; the supervisor sized the backing. */
  bytes = cache_backing_bytes (cfg->cache_entries, cfg->cache_block_size);
  if (fstat (fd, &st) == -1 || !S_ISREG (st.st_mode) || (uint64_t) st.st_size != bytes)
    fatal ("the cache's descriptor is not the %" PRIu64 " bytes the configuration says",
           bytes);
  p = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    fatal_errno ("mapping the cache");
  /* Kept open: hits read the blocks with pread (read-cache.h). */
  read_cache_init (&cache, p, fd, cfg->cache_entries, cfg->cache_block_size,
                   cfg->cache_owner);
  cache_mapped = true;
}

bool
fetcher_cache_on (void)
{
  return cache_mapped;
}

/* FNV-1a over a string and its terminating zero. */
static uint64_t
hash_string (uint64_t h, const char *s)
{
  do {
    h ^= (unsigned char) *s;
    h *= 0x100000001b3u;
  } while (*s++ != '\0');
  return h;
}

void
fetcher_cache_pin (const char *url, uint64_t size, const char *etag,
                   const char *last_modified)
{
  uint64_t tag = 0xcbf29ce484222325u;

  if (!cache_mapped)
    return;
  if (etag == NULL && last_modified == NULL) {
    warn ("export \"%s\": the server gives neither ETag nor Last-Modified, so a changed "
          "object cannot be told from the one cached: this connection does not use "
          "the cache", export_name);
    read_cache_pin (&cache, CACHE_TAG_NONE, size);
    return;
  }
  tag = hash_string (tag, url);
  for (unsigned i = 0; i < 8; i++) {
    tag ^= (size >> (8 * i)) & 0xff;
    tag *= 0x100000001b3u;
  }
  tag = hash_string (tag, etag ? etag : "");
  tag = hash_string (tag, last_modified ? last_modified : "");
  if (tag <= CACHE_TAG_CHANGED)
    tag += 2;
  read_cache_pin (&cache, tag, size);
  partial_init (&partial, cache.block_size, size);
}

bool
fetcher_cache_copy (uint64_t offset, uint32_t length, uint8_t *buf)
{
  return cache_mapped && read_cache_read (&cache, offset, length, buf, monotonic_ms ());
}

uint32_t
fetcher_cache_copy_prefix (uint64_t offset, uint32_t length, uint8_t *buf)
{
  return cache_mapped ? read_cache_read_prefix (&cache, offset, length, buf, monotonic_ms ())
                      : 0;
}

bool
fetcher_cache_answer (const struct fetcher_request *req)
{
  if (!cache_mapped || req->type != IPC_READ ||
      !read_cache_read (&cache, req->offset, req->length, req->data, monotonic_ms ()))
    return false;
  fetcher_stats.cache_hits++;
  fetcher_stats.cache_bytes += req->length;
  fetcher_reply (req->id, 0);
  return true;
}

static void
keep_whole (void *ctx, uint64_t offset, uint32_t length, const uint8_t *bytes)
{
  (void) ctx;
  read_cache_insert (&cache, offset, length, bytes, monotonic_ms ());
}

void
fetcher_cache_keep (uint64_t offset, const uint8_t *data, uint64_t length)
{
  if (!cache_mapped || cache.tag == CACHE_TAG_NONE)
    return;
  read_cache_insert (&cache, offset, length, data, monotonic_ms ());
  /* The blocks at its edges, with what neighbouring reads brought. */
  partial_add (&partial, offset, length, data, keep_whole, NULL);
}

bool
fetcher_cache_holds (uint64_t offset, uint64_t length)
{
  if (!cache_mapped || offset >= cache.size)
    return false;
  if (length > cache.size - offset)
    length = cache.size - offset;
  return read_cache_holds (&cache, offset, length);
}

/* partial_next_fill's judge: done once the cache holds the block,
 * later while a transfer in flight (ctx's test) may bring its rest. */
struct fill_judge {
  bool (*in_flight) (uint64_t offset, uint32_t length);
};

static enum partial_fill
judge_fill (void *ctx, uint64_t b)
{
  const struct fill_judge *j = ctx;
  uint64_t offset = b * cache.block_size;
  uint32_t length = cache_block_length (b, cache.block_size, cache.size);

  if (length == 0 || read_cache_holds (&cache, offset, length))
    return PARTIAL_FILL_DONE;
  return j->in_flight (offset, length) ? PARTIAL_FILL_LATER : PARTIAL_FILL_NOW;
}

bool
fetcher_cache_next_fill (bool (*in_flight) (uint64_t offset, uint32_t length),
                         uint64_t *offset, uint32_t *length)
{
  struct fill_judge j = { .in_flight = in_flight };
  uint64_t b;

  if (!cache_mapped || cache.tag == CACHE_TAG_NONE ||
      !partial_next_fill (&partial, judge_fill, &j, &b))
    return false;
  *offset = b * cache.block_size;
  *length = cache_block_length (b, cache.block_size, cache.size);
  return true;
}

unsigned
fetcher_cache_fills_listed (void)
{
  return cache_mapped ? partial.nunfilled : 0;
}

uint64_t
fetcher_cache_scan_claim (uint64_t chunk, uint64_t limit)
{
  return cache_mapped ? read_cache_scan_claim (&cache, chunk, limit) : UINT64_MAX;
}

uint32_t
fetcher_cache_block_size (void)
{
  return cache_mapped ? cache.block_size : 0;
}

uint64_t
fetcher_cache_capacity (void)
{
  return cache_mapped ? (uint64_t) cache.nentries * cache.block_size : 0;
}

void
fetcher_cache_changed (void)
{
  if (cache_mapped)
    read_cache_object_changed (&cache);
}

void
fetcher_cache_summary (void)
{
  if (cache_mapped)
    debug ("export \"%s\": cache: %" PRIu64 " reads answered, %" PRIu64 " missed, %"
           PRIu64 " blocks kept; %u blocks left in part, %" PRIu64 " more dropped",
           export_name, cache.hits, cache.misses, cache.inserted, partial.nunfilled,
           partial.dropped);
}
