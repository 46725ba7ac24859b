/*
 * options-cache.c: the options and keys of the exports' read caches:
 * --cache SIZE and --cache-dir DIR, and nbdkit's cache filter's keys
 * (--filter=cache with cache-max-size=, cache-min-block-size=,
 * cache-on-read=, and cache-high-threshold=, cache-low-threshold=, which
 * change nothing here), each per export in a --config file's sections
 * too; and the geometry each export gets.
 *
 * Apart because the cache's options are one concern: what a size means,
 * which of nbdkit's values are taken and why, and how an export's keys,
 * --cache and --filter=cache combine.  --filter=cache or --cache-dir
 * without a size gives every network export CACHE_DEFAULT_BYTES.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cache-layout.h"
#include "options-internal.h"

/* A size with K, M, G or T (powers of 1024), or -1 if it is not one. */
static int64_t
size_value (const char *arg)
{
  char *end;
  unsigned long long v, unit = 1;

  errno = 0;
  v = strtoull (arg, &end, 10);
  if (errno != 0 || end == arg || arg[0] < '0' || arg[0] > '9')
    return -1;
  switch (*end) {
  case 'k': case 'K': unit = 1ull << 10; end++; break;
  case 'm': case 'M': unit = 1ull << 20; end++; break;
  case 'g': case 'G': unit = 1ull << 30; end++; break;
  case 't': case 'T': unit = 1ull << 40; end++; break;
  }
  if (*end != '\0' || v > (unsigned long long) INT64_MAX / unit)
    return -1;
  return (int64_t) (v * unit);
}

uint64_t
parse_cache_bytes (const char *what, const char *arg)
{
  int64_t v = size_value (arg);

  if (v < (int64_t) CACHE_MIN_BYTES || (uint64_t) v > CACHE_MAX_BYTES)
    usage_error ("%s must be a size from %" PRIu64 "M to %" PRIu64 "G (K, M, G or T), "
                 "not \"%s\"", what, CACHE_MIN_BYTES >> 20, CACHE_MAX_BYTES >> 30, arg);
  return (uint64_t) v;
}

int64_t
parse_cache_size_key (const char *key, const char *v, uint32_t min, uint32_t max)
{
  char what[64];

  (void) min, (void) max;
  snprintf (what, sizeof what, "%s=", key);
  return (int64_t) parse_cache_bytes (what, v);
}

int64_t
parse_cache_block_key (const char *key, const char *v, uint32_t min, uint32_t max)
{
  int64_t n = size_value (v);

  (void) min, (void) max;
  if (n < CACHE_MIN_BLOCK_SIZE || n > CACHE_MAX_BLOCK_SIZE || (n & (n - 1)) != 0)
    usage_error ("%s= must be a power of two from %uK to %uM, not \"%s\"", key,
                 CACHE_MIN_BLOCK_SIZE >> 10, CACHE_MAX_BLOCK_SIZE >> 20, v);
  return n;
}

/* nbdkit's cache-on-read=true keeps what was read: what the cache does.
 * Its false (keep only writes) and /PATH (only while PATH exists) have
 * no meaning for a read-only export. */
void
check_cache_on_read (const char *key, const char *v, const char **url)
{
  (void) url;
  if (parse_bool (key, v))
    return;
  usage_error ("cache-on-read=%s: nbdcurld's cache always keeps what was read (its "
               "exports are read-only, so there is nothing else to keep): give "
               "cache-on-read=true, or leave it out", v);
}

/* cache-high-threshold=, cache-low-threshold=: when nbdkit reclaims; the
 * cache here is bounded by its size and evicts one block per block it
 * keeps once full. */
void
ignored_cache_threshold (const char *key, const char *v, const char **url)
{
  char what[64];

  (void) url;
  snprintf (what, sizeof what, "%s=", key);
  (void) parse_uint (what, v, 1, 100);
}

void
options_check_cache (struct options *o)
{
  unsigned i;
  bool any = false;

  for (i = 0; i < o->nexports; i++) {
    struct export_spec *e = &o->exports[i];
    uint64_t bytes = e->keys.cache_bytes > 0 ? (uint64_t) e->keys.cache_bytes
                     : o->cache_filter || o->cache_dir ? CACHE_DEFAULT_BYTES : 0;
    uint32_t block = e->keys.cache_block_size > 0 ? (uint32_t) e->keys.cache_block_size
                     : CACHE_DEFAULT_BLOCK_SIZE;

    e->cache_fd = -1;
    if (bytes == 0) {
      if (e->keys.cache_block_size > 0)
        usage_error ("export \"%s\": cache-min-block-size= without a cache: give "
                     "--cache SIZE, cache-max-size= or --filter=cache too", e->name);
      continue;
    }
    if (bytes / block < CACHE_WAYS)
      usage_error ("export \"%s\": a cache of %" PRIu64 " bytes holds fewer than %u "
                   "blocks of %u bytes: make it larger or its blocks smaller "
                   "(cache-min-block-size=)", e->name, bytes, CACHE_WAYS, block);
    e->cache_block_size = block;
    e->cache_entries = cache_entries_for (bytes, block);
    any = true;
  }
  if (o->prefetch_all && !any)
    usage_error ("--prefetch=all (--filter=scan) fetches the object into its export's "
                 "read cache: give a cache too (--cache SIZE, cache-max-size= or "
                 "--filter=cache)");
  if (o->cache_dir && strlen (o->cache_dir) > MAX_PATH_LENGTH)
    usage_error ("--cache-dir path too long");
}
