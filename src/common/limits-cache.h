/*
 * limits-cache.h: an export's read cache (--cache, --cache-dir,
 * cache-max-size=, cache-min-block-size=): its bounds, which the
 * supervisor checks when it sizes the backing (cache-backing.c) and the
 * fetcher again when it maps it (read-cache.c), and the rules by which
 * its fetchers share it.  The layout is cache-layout.h's.
 */
#ifndef NBDCURLD_LIMITS_CACHE_H
#define NBDCURLD_LIMITS_CACHE_H

/* Blocks are cached whole, this many bytes each unless
 * cache-min-block-size= says otherwise: large enough that the table's 64
 * bytes a block are a tenth of a percent, small enough that a read of a
 * few KiB that misses does not leave most of its block unfilled. */
#define CACHE_DEFAULT_BLOCK_SIZE  (64u * 1024)
/* cache-min-block-size=: a power of two, a page at least (the data
 * blocks stay page-aligned), 4 MiB at most (one block is copied at a
 * time, without a system call, and a client's reads are at most
 * NBD_MAX_REQUEST_SIZE). */
#define CACHE_MIN_BLOCK_SIZE      4096u
#define CACHE_MAX_BLOCK_SIZE      (4u * 1024 * 1024)

/* Ways of the set-associative table: a block may sit in any of this many
 * entries of its set, so blocks that hash alike do not evict each other
 * at once, while a lookup reads no more than a few cache lines. */
#define CACHE_WAYS                16u
/* Of a set's ways, what one connection may take from others when it must
 * evict: once it holds this many live entries of a set, it evicts its
 * own oldest there.  So a client that scans the whole object costs the
 * others a quarter of the cache at most, while a client alone still fills
 * all of it (empty and stale entries are anyone's). */
#define CACHE_SHARE_WAYS          4u
/* An entry nobody has read or written for this long belongs to nobody:
 * a connection that ended leaves its share to the others. */
#define CACHE_IDLE_MS             30000u
/* A claim to write an entry older than this is a fetcher that died or
 * hangs in the middle of copying one block (microseconds' work): the
 * entry may be taken over. */
#define CACHE_CLAIM_STALE_MS      10000u

/* Blocks a fetcher keeps part of (cache-partial.h), a block's size each,
 * waiting for neighbouring reads to make them whole: the edges of a few
 * reads or readahead windows in flight at once, at 512 KiB of heap with
 * the default block. */
#define CACHE_PARTIAL_SLOTS       8u

/* Blocks a fetcher fetches whole in the background (fetcher-scan.c)
 * because reads or windows brought only part of them and no neighbour
 * completed them (cache-partial.c lists them): the edges of the last few
 * dozen pieces, a block's request each.  Older ones are dropped, so a
 * client cannot make the list grow, and each costs 8 bytes. */
#define CACHE_FILL_QUEUE          64u
/* Once its client has gone, a fetcher still fetches the blocks listed
 * for this long at most (a few requests: the edges of its last reads),
 * so that the export's next client finds them; then it exits.  Not if a
 * read of the client was still in flight. */
#define CACHE_FILL_LINGER_MS      2000u

/* --prefetch=all: each transfer of the scan brings this much (or a block,
 * if larger): large enough that a request's round trip is a small part
 * of its time, small enough that a client's read that arrives meanwhile
 * waits for little; up to this many at once per connection (and within
 * its readahead budget, --client-memory), to fill the link on servers
 * that cap each connection. */
#define SCAN_CHUNK_BYTES          (2u * 1024 * 1024)
#define SCAN_MAX_INFLIGHT         4u

/* --cache=SIZE: at least one set of default blocks, at most 256 GiB
 * (the table then takes 256 MiB of the backing, and every fetcher of the
 * export maps all of it). */
#define CACHE_MIN_BYTES           ((uint64_t) CACHE_WAYS * CACHE_DEFAULT_BLOCK_SIZE)
#define CACHE_MAX_BYTES           ((uint64_t) 256 << 30)
/* --filter=cache (nbdkit's form) without cache-max-size= or --cache. */
#define CACHE_DEFAULT_BYTES       ((uint64_t) 256 << 20)

#endif
