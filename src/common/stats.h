/*
 * stats.h: the arithmetic of the statistics (stats-wire.h): saturating
 * sums, so that figures a peer made up can be wrong but never wrap; the
 * latency histogram's buckets; percentiles read from it.  No state, no
 * I/O: unit-tested alone (tests/unit/unit-stats.c).
 */
#ifndef NBDCURLD_STATS_H
#define NBDCURLD_STATS_H

#include <stdint.h>

#include "stats-wire.h"

static inline uint64_t
stats_sat_add (uint64_t a, uint64_t b)
{
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The bucket of a service time of us microseconds. */
unsigned stats_latency_bucket (uint64_t us);
/* The largest time (microseconds) bucket b holds; UINT64_MAX for the last. */
uint64_t stats_bucket_upper_us (unsigned b);

/* into += from, field by field, saturating. */
void stats_add (struct stats_wire *into, const struct stats_wire *from);
void stats_add_fetcher (struct fetcher_stats_wire *into, const struct fetcher_stats_wire *from);

/* Count one reply: its kind's latency bucket, and its error (a host
 * errno, 0 for success) and the cause of it. */
void stats_count_reply (struct stats_wire *s, uint64_t us, uint32_t host_errno,
                        enum stats_cause cause);

/* The request kind of an NBD command. */
enum stats_kind stats_kind_of (uint16_t nbd_cmd);

/* Requests counted: the sum of requests[]. */
uint64_t stats_total_requests (const struct stats_wire *s);
/* The service time (upper bound of its bucket, microseconds) under which
 * permille/1000 of the replies fall; 0 when none was counted. */
uint64_t stats_percentile_us (const struct stats_wire *s, unsigned permille);

/* Short names, for the reports. */
extern const char *const stats_kind_names[STATS_KINDS];
extern const char *const stats_errno_names[STATS_ERRNOS];
extern const char *const stats_cause_names[STATS_CAUSES];

#endif
