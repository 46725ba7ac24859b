/*
 * limits-readahead-windows.h: how a network fetcher fills its prefetch
 * store (fetcher-readahead.c), whose size READAHEAD_MAX_BYTES bounds
 * (limits-readahead.h).
 */
#ifndef NBDCURLD_LIMITS_READAHEAD_WINDOWS_H
#define NBDCURLD_LIMITS_READAHEAD_WINDOWS_H

/* Once a read belongs to a forward run (forward-reader.h decides),
 * windows are fetched ahead of it until the lead (readahead-lead.c) is
 * stored or coming past its furthest byte: up to READAHEAD_MAX_INFLIGHT
 * windows at once, each on its own web connection, so that a cap per
 * connection or a long round trip does not hold the reader to one
 * connection's rate; in at most READAHEAD_MAX_SEGMENTS pieces.  A
 * window is at least READAHEAD_MIN_WINDOW (a request costs the server
 * and this process more than its header bytes), at most
 * READAHEAD_MAX_WINDOW and what the store holds READAHEAD_MAX_INFLIGHT
 * + 2 of (those coming, the one being read and the one before it). */
#define READAHEAD_MIN_WINDOW      (128u * 1024)
#define READAHEAD_MAX_WINDOW      (4u * 1024 * 1024)
#define READAHEAD_MAX_INFLIGHT    4u
#define READAHEAD_MAX_SEGMENTS    16u

/* The lead: what the reader takes in the time a window takes to come,
 * READAHEAD_LEAD_GAIN times over (a window's time varies from one to the
 * next, and a reader takes in bursts: qemu-img reads several clusters
 * quickly, then decompresses), and at least READAHEAD_LEAD_MIN_MS of its
 * reading (the event loops' and the scheduler's delays, which the window
 * times do not show).  Never less than READAHEAD_MIN_LEAD.  A read that
 * must wait for the store doubles it, at most once per window time: a
 * reader held back by the link cannot show how fast it would read.  It
 * moves toward the measure by at most a doubling or a halving per
 * interval of READAHEAD_RATE_MS (or four window times, if longer), over
 * which the reader's rate is measured: a reader that slows down or stops
 * has less fetched ahead of it, one that keeps up and waits gets more. */
#define READAHEAD_LEAD_GAIN       2u
#define READAHEAD_LEAD_MIN_MS     100u
#define READAHEAD_MIN_LEAD        (4u * READAHEAD_MIN_WINDOW)
#define READAHEAD_RATE_MS         100u

/* The first lead on a distant server.  Each doubling of a short lead
 * costs a window's time, a round trip and more, in which the reader
 * waits: from 4 x READAHEAD_MIN_WINDOW, a reader of 64 MB/s on a link of
 * 20 ms waited through three of them.  So the lead starts at what a
 * reader at READAHEAD_FIRST_RATE (bytes a second) takes in
 * READAHEAD_LEAD_GAIN round trips, when that is more: qemu-img converting
 * a compressed qcow2 reads some 60 to 80 MB/s on a small machine.  A
 * slower reader's lead halves in each interval after; a near server's
 * round trip makes this less than the least lead, which then applies. */
#define READAHEAD_FIRST_RATE      (64u * 1000 * 1000)

/* The first interval is shorter: a fast reader's windows grow to its
 * rate before it has read much (a reader at 100 MB/s reads 2 MB in it),
 * while a reader's first reads are seldom all of its pace. */
#define READAHEAD_RATE_FIRST_MS   20u

/* A window carries at least READAHEAD_WINDOW_MIN_MS of the reader's
 * reading, so that a fast reader on a near server costs the server at
 * most some twenty requests a second, however short its lead. */
#define READAHEAD_WINDOW_MIN_MS   50u

/* A client whose first read was at offset 0 and whose second jumps
 * forward inside the object's first READAHEAD_HEAD_BYTES, with little
 * else in flight, gets those bytes fetched in one request: every disk
 * image format, partition table and file system keeps its headers and
 * first tables there, and a client that opens one reads its header
 * first, then the tables (qemu-img reads a qcow2's header, then its L1
 * table, refcount table and first L2 table, a few bytes to 64 KiB each),
 * each of which would otherwise wait a round trip of its own.  A random
 * reader's first read is almost never at offset 0. */
#define READAHEAD_HEAD_BYTES      (1024u * 1024)

/* A forward reader is read ahead while it keeps fewer than this many
 * other reads in flight, of fewer bytes than this in all, when its read
 * comes.  qemu-img
 * converting a compressed qcow2 keeps one of about 20 KiB, now and then
 * up to six; converting a raw image, eight of 2 MiB; nbdcopy 64 of
 * 256 KiB, or with --requests=2 two of 512 KiB: those are served by
 * coalescing and the direct path, without the store's copy. */
#define READAHEAD_MAX_CLIENT_READS 8u
#define READAHEAD_MAX_CLIENT_BYTES (256u * 1024)

/* A client that had this many bytes in flight besides its newest read,
 * at any of its last READAHEAD_PIPELINED_MEMORY reads, is pipelining:
 * nbdcopy (64 reads of 256 KiB) drains to a read or two now and then,
 * where a worker starts a new region, and windows through the store then
 * slow it.  Counted in bytes, not reads: qemu-img converting a compressed
 * qcow2 queues a few reads of some 20 KiB now and then, far below this,
 * and must stay read ahead. */
#define READAHEAD_PIPELINED_BYTES  (1024u * 1024)
#define READAHEAD_PIPELINED_MEMORY 64u

#endif
