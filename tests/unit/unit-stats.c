/*
 * unit-stats.c: the statistics' arithmetic (src/common/stats.c): every
 * sum saturates, whatever a fetcher said; each service time falls in the
 * bucket whose bounds hold it, the buckets in order and within the
 * histogram; percentiles read back the bucket they fall in.  TAP output.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int tests, failures;

static void
check (bool ok, const char *what)
{
  tests++;
  printf ("%s %d - %s\n", ok ? "ok" : "not ok", tests, what);
  if (!ok)
    failures++;
}

/* Each time lands in a bucket whose range holds it, the ranges touch and
 * grow, and nothing lands past the last. */
static void
buckets (void)
{
  static const uint64_t samples[] = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 100, 1000, 4095, 4096, 123456, 1000000,
    (1ull << 33) - 1, 1ull << 33, 1ull << 40, UINT64_MAX,
  };
  bool inside = true, ordered = true;
  unsigned i, b, prev = 0;

  for (i = 0; i < sizeof samples / sizeof samples[0]; i++) {
    b = stats_latency_bucket (samples[i]);
    if (b >= STATS_LATENCY_BUCKETS || samples[i] > stats_bucket_upper_us (b) ||
        (b > 0 && samples[i] <= stats_bucket_upper_us (b - 1)))
      inside = false;
    if (b < prev)
      ordered = false;
    prev = b;
  }
  check (inside, "each time falls in the bucket whose bounds hold it");
  check (ordered, "longer times never fall in earlier buckets");
  for (b = 1, ordered = true; b < STATS_LATENCY_BUCKETS; b++)
    if (stats_bucket_upper_us (b) <= stats_bucket_upper_us (b - 1) ||
        stats_latency_bucket (stats_bucket_upper_us (b - 1) + 1) != b)
      ordered = false;
  check (ordered, "the buckets touch, each after the last");
  check (stats_latency_bucket (UINT64_MAX) == STATS_LATENCY_BUCKETS - 1 &&
         stats_bucket_upper_us (STATS_LATENCY_BUCKETS - 1) == UINT64_MAX,
         "the last bucket takes everything longer");
  /* Four buckets per power of two: at most a quarter too high. */
  for (i = 0, inside = true; i < 1000000; i += 977) {
    uint64_t up = stats_bucket_upper_us (stats_latency_bucket (i));
    if (i >= 4 && (up - i) * 4 > i)
      inside = false;
  }
  check (inside, "a bucket's bound is at most a quarter above the time");
}

static void
saturation (void)
{
  struct stats_wire a, b;
  struct fetcher_stats_wire f;

  memset (&a, 0xff, sizeof a);
  memset (&b, 0xff, sizeof b);
  stats_add (&a, &b);
  check (a.fetcher.web_bytes == UINT64_MAX && a.latency[7] == UINT64_MAX &&
         a.requests[STATS_READ] == UINT64_MAX && a.connections == UINT64_MAX,
         "2^64-1 + 2^64-1 stays 2^64-1");
  memset (&b, 0, sizeof b);
  b.bytes_read = 1;
  stats_add (&a, &b);
  check (a.bytes_read == UINT64_MAX, "2^64-1 + 1 stays 2^64-1");
  memset (&f, 0xff, sizeof f);
  memset (&b, 0, sizeof b);
  b.fetcher.retries = 5;
  stats_add_fetcher (&b.fetcher, &f);
  check (b.fetcher.retries == UINT64_MAX, "a fetcher's lie saturates its client's sum");
  check (stats_total_requests (&a) == UINT64_MAX, "the total of saturated kinds saturates");
  /* Every bucket at 2^64-1: the first already holds 99% of the total. */
  check (stats_percentile_us (&a, 990) == stats_bucket_upper_us (0),
         "percentiles of saturated buckets still answer");
}

static void
percentiles (void)
{
  struct stats_wire s;
  unsigned i;

  memset (&s, 0, sizeof s);
  check (stats_percentile_us (&s, 500) == 0, "no replies: percentiles 0");
  for (i = 0; i < 90; i++)
    stats_count_reply (&s, 100, 0, STATS_CAUSE_EXPORT);
  for (i = 0; i < 9; i++)
    stats_count_reply (&s, 10000, 0, STATS_CAUSE_EXPORT);
  stats_count_reply (&s, 1000000, EIO, STATS_CAUSE_EXPORT);
  check (stats_percentile_us (&s, 500) == stats_bucket_upper_us (stats_latency_bucket (100)),
         "p50 is the bucket of 100 us");
  check (stats_percentile_us (&s, 900) == stats_bucket_upper_us (stats_latency_bucket (100)),
         "p90 is the bucket of 100 us (90 of 100 replies)");
  check (stats_percentile_us (&s, 990) == stats_bucket_upper_us (stats_latency_bucket (10000)),
         "p99 is the bucket of 10 ms");
  check (stats_percentile_us (&s, 1000) == stats_bucket_upper_us (stats_latency_bucket (1000000)),
         "p100 is the slowest's bucket");
  check (s.errors[STATS_EIO] == 1 && s.causes[STATS_CAUSE_EXPORT] == 1,
         "an error counts under its errno and its cause");
  stats_count_reply (&s, 0, EROFS, STATS_CAUSE_REFUSED);
  stats_count_reply (&s, 0, 12345, STATS_CAUSE_FETCHER_LOST);
  check (s.errors[STATS_EPERM] == 1 && s.errors[STATS_EIO] == 2 &&
         s.causes[STATS_CAUSE_FETCHER_LOST] == 1,
         "errnos map as the NBD errors do, unknown ones to EIO");
}

int
main (void)
{
  buckets ();
  saturation ();
  percentiles ();
  printf ("1..%d\n", tests);
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
