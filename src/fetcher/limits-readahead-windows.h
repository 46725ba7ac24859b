/*
 * limits-readahead-windows.h: how a network fetcher fills its prefetch
 * store (fetcher-readahead.c), whose size READAHEAD_MAX_BYTES bounds
 * (limits-readahead.h).
 */
#ifndef NBDCURLD_LIMITS_READAHEAD_WINDOWS_H
#define NBDCURLD_LIMITS_READAHEAD_WINDOWS_H

/* Once a read belongs to a forward run (forward-reader.h decides),
 * windows are fetched ahead: the first READAHEAD_MIN_WINDOW (or four
 * reads' worth), each next twice the last, up to READAHEAD_MAX_WINDOW and
 * what the store holds READAHEAD_MAX_INFLIGHT + 2 of; up to
 * READAHEAD_MAX_INFLIGHT at once, each on its own web connection, so that
 * a cap per connection or a long round trip does not hold the reader to
 * one connection's rate; in at most READAHEAD_MAX_SEGMENTS pieces.
 * Doubling reaches a link's rate in a few windows without fetching much
 * for a reader that stops. */
#define READAHEAD_MIN_WINDOW      (128u * 1024)

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
#define READAHEAD_MAX_WINDOW      (4u * 1024 * 1024)
#define READAHEAD_MAX_INFLIGHT    4u
#define READAHEAD_MAX_SEGMENTS    16u

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
