/*
 * stats-wire.h: the statistics messages' payloads (ipc-messages.h:
 * IPC_FETCHER_STATS, IPC_CLIENT_STATS, IPC_EXPORT_STATS).  Fixed sizes,
 * host byte order (every end is on one machine), every field a counter:
 * a peer that lies can only make the figures wrong, since every sum is
 * saturating (stats.h) and no count sizes anything.
 */
#ifndef NBDCURLD_STATS_WIRE_H
#define NBDCURLD_STATS_WIRE_H

#include <assert.h>
#include <stdint.h>

/* A fetcher's own figures, since it opened its export: what only it
 * sees.  Sent to the front-end in IPC_FETCHER_STATS whenever they
 * changed, before the replies they came with. */
struct fetcher_stats_wire {
  uint64_t web_bytes;         /* body bytes from the web server (or the file) */
  uint64_t web_requests;      /* transfers started: requests, retries, prefetches */
  uint64_t retries;           /* reads tried again (--retries) */
  uint64_t readahead_hits;    /* reads answered from the prefetch store */
  uint64_t readahead_bytes;   /* bytes of those reads */
  uint64_t cache_hits;        /* reads answered from the export's read cache */
  uint64_t cache_bytes;       /* bytes of those reads */
};
#define FETCHER_STATS_WIRE_SIZE 56
static_assert (sizeof (struct fetcher_stats_wire) == FETCHER_STATS_WIRE_SIZE,
               "fetcher stats size");

/* The kinds of request counted apart (NBD_CMD_*; the rest is "other"). */
enum stats_kind {
  STATS_READ, STATS_WRITE, STATS_FLUSH, STATS_CACHE, STATS_BLOCK_STATUS, STATS_OTHER,
  STATS_KINDS
};

/* The NBD errors a reply may carry (transmission.c's nbd_errno). */
enum stats_errno {
  STATS_EPERM, STATS_EIO, STATS_ENOMEM, STATS_EINVAL, STATS_ENOSPC, STATS_EOVERFLOW,
  STATS_ENOTSUP, STATS_ESHUTDOWN, STATS_ERRNOS
};

/* Why a request failed. */
enum stats_cause {
  STATS_CAUSE_REFUSED,        /* the front-end's checks (range, flags, kind) */
  STATS_CAUSE_EXPORT,         /* the fetcher answered with an error */
  STATS_CAUSE_FETCHER_LOST,   /* the fetcher died or broke the protocol */
  STATS_CAUSES
};

/* Request service times as the front-end sees them, from the request's
 * header to its reply queued, in microseconds on a log scale: 4 buckets
 * per power of two (stats.h), from 0 to 2^33 us (about 2.4 hours; longer
 * ones count in the last). */
#define STATS_LATENCY_BUCKETS 128

/* One client's figures (IPC_CLIENT_STATS), or an export's sums over its
 * clients (IPC_EXPORT_STATS). */
struct stats_wire {
  uint64_t connections;       /* clients that opened the export */
  uint64_t connected_ms;      /* their time connected, summed */
  uint64_t requests[STATS_KINDS];
  uint64_t bytes_read;        /* data sent to clients in read replies */
  uint64_t bytes_written;     /* data clients wrote, acknowledged */
  uint64_t errors[STATS_ERRNOS];
  uint64_t causes[STATS_CAUSES];
  struct fetcher_stats_wire fetcher;
  uint64_t latency[STATS_LATENCY_BUCKETS];
};
#define STATS_WIRE_SIZE (8 * (2 + STATS_KINDS + 2 + STATS_ERRNOS + STATS_CAUSES) + \
                         FETCHER_STATS_WIRE_SIZE + 8 * STATS_LATENCY_BUCKETS)
static_assert (sizeof (struct stats_wire) == STATS_WIRE_SIZE, "stats size");

/* IPC_CLIENT_STATS: one client's figures at its close, and its address
 * as the front-end's log lines name it (NUL-terminated). */
#define STATS_PEER_SIZE 64
struct client_stats_wire {
  struct stats_wire stats;
  char peer[STATS_PEER_SIZE];
};
#define CLIENT_STATS_WIRE_SIZE (STATS_WIRE_SIZE + STATS_PEER_SIZE)
static_assert (sizeof (struct client_stats_wire) == CLIENT_STATS_WIRE_SIZE,
               "client stats size");

/* IPC_EXPORT_STATS flags. */
#define EXPORT_STATS_LAST   (1u << 0)   /* the report's last export */
#define EXPORT_STATS_FINAL  (1u << 1)   /* the front-end's last report: it exits */

#endif
