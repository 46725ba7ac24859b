/*
 * limits-direct.h: the fetcher's direct reads (fetcher-direct.c), which
 * skip libcurl: plain http bodies spliced into the data pipe, https bodies
 * decrypted into the data area.  How many bytes they keep requested ahead,
 * how they size themselves to the link, and how they read TLS.
 */
#ifndef NBDCURLD_LIMITS_DIRECT_H
#define NBDCURLD_LIMITS_DIRECT_H

#include "data-path.h"

/* Bytes that direct reads may have requested and not yet put in the data
 * pipe; later reads wait in the queue.  Only the pipe's owner moves data,
 * so a body requested much earlier sits in its socket, where the kernel
 * may compact it into small pieces (which fill the pipe's slots).  Less
 * starves the pipe, more lets bodies wait in sockets: a few times the
 * pipe's capacity keeps it fed from one connection or several.  Small
 * random reads never reach it. */
#define DIRECT_AHEAD_BYTES        (4u * 1024 * 1024)
/* Sizing direct reads to a distant link (direct-sizing.c).
 * The look-ahead above grows to DIRECT_AHEAD_GAIN x the measured rate x
 * the round trip, DIRECT_AHEAD_MAX_BYTES at most (MAX_CLIENT_MEMORY: a
 * client never has more reads in flight), adjusted every
 * DIRECT_RATE_WINDOW_MS (and four round trips) of reads.  The round trip
 * is the least of the last DIRECT_RTT_SAMPLES to 2 x DIRECT_RTT_SAMPLES
 * replies.  From DIRECT_FAR_RTT_US on, ranges are split over the
 * connections in pieces of DIRECT_PIECE_MIN_BYTES or more (below it, a
 * LAN: ranges of up to COALESCE_MAX_BYTES). */
#define DIRECT_AHEAD_MAX_BYTES    MAX_CLIENT_MEMORY
#define DIRECT_AHEAD_GAIN         4u
#define DIRECT_RATE_WINDOW_MS     100u
#define DIRECT_RTT_SAMPLES        64u
#define DIRECT_FAR_RTT_US         2000u
#define DIRECT_PIECE_MIN_BYTES    (512u * 1024)
/* Direct reads over https (direct-tls.c) read each
 * connection's records DIRECT_TLS_READ_BUFFER bytes at a time (OpenSSL's
 * read-ahead): one system call for many 16 KiB records instead of two
 * for each.  A connection is read until it has nothing, so the buffer's
 * size decides how many calls a body takes: a large one takes few, for
 * at most 4 MiB per client with the default 16 connections (16 MiB at
 * MAX_CONNECTIONS; a buffer is allocated once its connection is read). */
#define DIRECT_TLS_READ_BUFFER    (256u * 1024)
/* Direct reads of at most this many bytes neither make their socket hold
 * the whole body nor wait for a whole part before moving it
 * (direct-sizing.c's hold_body, direct-body.c's wait_for_part): Linux's
 * first receive window already holds them, and small random reads are
 * spared the system calls. */
#define DIRECT_HOLD_MIN_BYTES     (64u * 1024)
/* Direct reads that may fill the data pipe before they are complete (the
 * server's data in pieces too small for the pipe's slots; each such read
 * goes to libcurl) before every later read does: a server that does it
 * often is not worth the detours. */
#define MAX_PIPE_OVERFLOWS        16u

#endif
