/* stats.c: the statistics' arithmetic (stats.h). */
#include <errno.h>

#include "nbd-protocol.h"
#include "stats.h"

const char *const stats_kind_names[STATS_KINDS] = {
  "read", "write", "flush", "cache", "block-status", "other",
};
const char *const stats_errno_names[STATS_ERRNOS] = {
  "EPERM", "EIO", "ENOMEM", "EINVAL", "ENOSPC", "EOVERFLOW", "ENOTSUP", "ESHUTDOWN",
};
const char *const stats_cause_names[STATS_CAUSES] = {
  "refused", "export", "fetcher-lost",
};

/* Below 4 us a bucket per microsecond; from there 4 per power of two:
 * 2^e .. 2^(e+1)-1 splits into quarters.  Bucket 4(e-1)+q, e >= 2. */
#define SUB_BUCKETS 4

static unsigned
log2_floor (uint64_t v)
{
  return 63u - (unsigned) __builtin_clzll (v);   /* v > 0 */
}

unsigned
stats_latency_bucket (uint64_t us)
{
  unsigned e, b;

  if (us < SUB_BUCKETS)
    return (unsigned) us;
  e = log2_floor (us);                            /* >= 2 */
  b = SUB_BUCKETS * (e - 1) + (unsigned) ((us >> (e - 2)) & (SUB_BUCKETS - 1));
  return b < STATS_LATENCY_BUCKETS ? b : STATS_LATENCY_BUCKETS - 1;
}

uint64_t
stats_bucket_upper_us (unsigned b)
{
  unsigned e, q;

  if (b >= STATS_LATENCY_BUCKETS - 1)
    return UINT64_MAX;
  if (b < SUB_BUCKETS)
    return b;
  e = b / SUB_BUCKETS + 1;
  q = b % SUB_BUCKETS;
  /* The bucket holds 2^e + q 2^(e-2) .. 2^e + (q+1) 2^(e-2) - 1. */
  return (1ull << e) + ((uint64_t) (q + 1) << (e - 2)) - 1;
}

void
stats_add_fetcher (struct fetcher_stats_wire *into, const struct fetcher_stats_wire *from)
{
  into->web_bytes = stats_sat_add (into->web_bytes, from->web_bytes);
  into->web_requests = stats_sat_add (into->web_requests, from->web_requests);
  into->retries = stats_sat_add (into->retries, from->retries);
  into->readahead_hits = stats_sat_add (into->readahead_hits, from->readahead_hits);
  into->readahead_bytes = stats_sat_add (into->readahead_bytes, from->readahead_bytes);
  into->cache_hits = stats_sat_add (into->cache_hits, from->cache_hits);
  into->cache_bytes = stats_sat_add (into->cache_bytes, from->cache_bytes);
}

static void
add_array (uint64_t *into, const uint64_t *from, unsigned n)
{
  unsigned i;

  for (i = 0; i < n; i++)
    into[i] = stats_sat_add (into[i], from[i]);
}

void
stats_add (struct stats_wire *into, const struct stats_wire *from)
{
  into->connections = stats_sat_add (into->connections, from->connections);
  into->connected_ms = stats_sat_add (into->connected_ms, from->connected_ms);
  add_array (into->requests, from->requests, STATS_KINDS);
  into->bytes_read = stats_sat_add (into->bytes_read, from->bytes_read);
  into->bytes_written = stats_sat_add (into->bytes_written, from->bytes_written);
  add_array (into->errors, from->errors, STATS_ERRNOS);
  add_array (into->causes, from->causes, STATS_CAUSES);
  stats_add_fetcher (&into->fetcher, &from->fetcher);
  add_array (into->latency, from->latency, STATS_LATENCY_BUCKETS);
}

static int
errno_index (uint32_t e)
{
  switch (e) {
  case EPERM: case EACCES: case EROFS: return STATS_EPERM;
  case ENOMEM: return STATS_ENOMEM;
  case EINVAL: return STATS_EINVAL;
  case ENOSPC: case EFBIG: case EDQUOT: return STATS_ENOSPC;
  case EOVERFLOW: return STATS_EOVERFLOW;
  case ENOTSUP: return STATS_ENOTSUP;
  case ESHUTDOWN: return STATS_ESHUTDOWN;
  default: return STATS_EIO;           /* as nbd_errno maps the rest */
  }
}

void
stats_count_reply (struct stats_wire *s, uint64_t us, uint32_t host_errno,
                   enum stats_cause cause)
{
  unsigned b = stats_latency_bucket (us);

  s->latency[b] = stats_sat_add (s->latency[b], 1);
  if (host_errno == 0)
    return;
  s->errors[errno_index (host_errno)] = stats_sat_add (s->errors[errno_index (host_errno)], 1);
  s->causes[cause] = stats_sat_add (s->causes[cause], 1);
}

enum stats_kind
stats_kind_of (uint16_t nbd_cmd)
{
  switch (nbd_cmd) {
  case NBD_CMD_READ: return STATS_READ;
  case NBD_CMD_WRITE: return STATS_WRITE;
  case NBD_CMD_FLUSH: return STATS_FLUSH;
  case NBD_CMD_CACHE: return STATS_CACHE;
  case NBD_CMD_BLOCK_STATUS: return STATS_BLOCK_STATUS;
  default: return STATS_OTHER;
  }
}

uint64_t
stats_total_requests (const struct stats_wire *s)
{
  uint64_t n = 0;
  unsigned i;

  for (i = 0; i < STATS_KINDS; i++)
    n = stats_sat_add (n, s->requests[i]);
  return n;
}

uint64_t
stats_percentile_us (const struct stats_wire *s, unsigned permille)
{
  uint64_t total = 0, seen = 0, want;
  unsigned b;

  for (b = 0; b < STATS_LATENCY_BUCKETS; b++)
    total = stats_sat_add (total, s->latency[b]);
  if (total == 0)
    return 0;
  /* The rank of the percentile, rounded up: ceil (total * permille / 1000)
   * without overflow. */
  want = total / 1000 * permille + (total % 1000 * permille + 999) / 1000;
  if (want == 0)
    want = 1;
  for (b = 0; b < STATS_LATENCY_BUCKETS; b++) {
    seen = stats_sat_add (seen, s->latency[b]);
    if (seen >= want)
      return stats_bucket_upper_us (b);
  }
  return UINT64_MAX;
}
