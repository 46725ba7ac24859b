/*
 * data-path.h: how request data crosses between a fetcher and the
 * front-end without passing through messages: the data area (shared
 * memory) and the data pipe, and the requests one client may have in
 * flight through them.  The supervisor makes both for each fetcher
 * (fetchers.c); the front-end allocates the area (data-area.c) and reads
 * the pipe (transmission.c); the fetcher writes them (fetcher.c,
 * fetcher-direct.c).
 */
#ifndef NBDCURLD_DATA_PATH_H
#define NBDCURLD_DATA_PATH_H

#include <assert.h>

#include "limits-nbd.h"

/* Requests of one client in flight at once; past this the front-end stops
 * reading that client until replies drain.  A fetcher's request table has
 * as many slots, so it never refuses one the front-end sends. */
#define MAX_INFLIGHT_PER_CLIENT   128u

/* The data area: one shared memory region per fetcher, made by the
 * supervisor (a sealed memfd: neither side can shrink it under the other)
 * and mapped by the fetcher and the front-end.  The front-end hands out
 * parts of it: a READ names where the fetcher puts the data, which the
 * front-end then writes to the client from there; a WRITE's data is read
 * from the client straight into it.  So request data crosses between the
 * processes without a copy.  The front-end allocates in chunks; a request
 * waits while the area is full.  It holds at least two requests of the
 * largest size, so one in flight never blocks the next. */
#define DATA_AREA_SIZE            (64u * 1024 * 1024)
#define DATA_AREA_CHUNK           (64u * 1024)
#define DATA_AREA_CHUNKS          (DATA_AREA_SIZE / DATA_AREA_CHUNK)
static_assert (DATA_AREA_SIZE >= 2 * NBD_MAX_REQUEST_SIZE, "data area too small");
/* How much of it one client's requests may hold at once unless they hold
 * nothing (--client-memory): memory touched stays near this (first fit
 * reuses the same chunks), and the requests beyond it wait in the client's
 * socket.  Reads through the data pipe hold their part without touching
 * it, so for them it only bounds the requests in flight.  The default
 * keeps a fetcher busy with coalesced reads on a loaded machine with few
 * CPUs; less makes a sequential copy slower. */
#define DEFAULT_CLIENT_MEMORY     (16u * 1024 * 1024)
#define MIN_CLIENT_MEMORY         DATA_AREA_CHUNK
#define MAX_CLIENT_MEMORY         (DATA_AREA_SIZE / 2)
static_assert (DATA_AREA_SIZE % DATA_AREA_CHUNK == 0, "data area in chunks");

/* The data pipe: one pipe per fetcher, made by the supervisor, written by
 * the fetcher, read by the front-end.  Reads of plain http URLs skip
 * libcurl: the fetcher splices the body from its TCP socket into the pipe
 * and the front-end splices it on into the client's socket, so the bytes
 * are never copied in user space (the data area path copies them three
 * times: socket to libcurl, libcurl to the area, area to the client's
 * socket).  Reads of read-only file: exports splice the page cache's pages
 * the same way.  A reply is announced only once all of its bytes
 * are in the pipe, so a body that fails half-way costs the client nothing
 * but that read's error.  The supervisor asks for DATA_PIPE_SIZE bytes of
 * capacity (the kernel may give less: fs.pipe-max-size,
 * fs.pipe-user-pages-soft); a read goes through the pipe only if it is at
 * most a quarter of the capacity it got and at most DATA_PIPE_READ_MAX. */
#define DATA_PIPE_SIZE            (1024u * 1024)
#define DATA_PIPE_READ_MAX        (256u * 1024)

#endif
