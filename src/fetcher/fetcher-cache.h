/*
 * fetcher-cache.h: the export's shared read cache in the fetcher (its
 * descriptor, mapped at start; lookups before reads are fetched, inserts
 * after they pass their checks).  The cache's own logic is read-cache.c;
 * without --cache every call here does nothing.
 */
#ifndef NBDCURLD_FETCHER_CACHE_H
#define NBDCURLD_FETCHER_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "fetcher.h"

/* Before the sandbox: map the cache the supervisor gave (cfg->cache_entries
 * > 0), at the descriptor after the others (child-fds.h). */
void fetcher_cache_take (const struct fetcher_config *cfg);
/* Is there a cache (then reads go into the data area, not the pipe)? */
bool fetcher_cache_on (void);
/* After the open: the object as pinned (its final URL, size and
 * validators, NULL when the server gave none).  Without a validator the
 * object cannot be told from a changed one: the cache is not used. */
void fetcher_cache_pin (const char *url, uint64_t size, const char *etag,
                        const char *last_modified);
/* A READ all in the cache is copied into its place and answered: true.
 * False: fetch it (a CACHE goes on to the readahead store). */
bool fetcher_cache_answer (const struct fetcher_request *req);
/* Copy [offset, offset + length) of the object into buf if the cache
 * holds all of it: true; false (buf's bytes undefined) otherwise. */
bool fetcher_cache_copy (uint64_t offset, uint32_t length, uint8_t *buf);
/* Copy what the cache holds of [offset, offset + length) from its start,
 * up to the first block it lacks, into buf: how many bytes (0: none). */
uint32_t fetcher_cache_copy_prefix (uint64_t offset, uint32_t length, uint8_t *buf);
/* length bytes of the object at offset, in data, passed every check. */
void fetcher_cache_keep (uint64_t offset, const uint8_t *data, uint64_t length);
/* Does the cache hold [offset, offset + length) of the object (clipped
 * to its end)? */
bool fetcher_cache_holds (uint64_t offset, uint64_t length);
/* The oldest block a kept piece left in part (cache-partial.h) that the
 * cache does not hold and that no transfer in flight may complete
 * (in_flight says which): true, with its range; false when none is.
 * The block is off the list: the caller fetches it whole. */
bool fetcher_cache_next_fill (bool (*in_flight) (uint64_t offset, uint32_t length),
                              uint64_t *offset, uint32_t *length);
/* Blocks listed to be fetched whole. */
unsigned fetcher_cache_fills_listed (void);
/* --prefetch=all: the next chunk to fetch (read_cache_scan_claim), or
 * UINT64_MAX. */
uint64_t fetcher_cache_scan_claim (uint64_t chunk, uint64_t limit);
/* The cache's block size and capacity in bytes (0 without a cache). */
uint32_t fetcher_cache_block_size (void);
uint64_t fetcher_cache_capacity (void);
/* A reply said the object changed. */
void fetcher_cache_changed (void);
/* The debug line of the cache's hits and misses, at the end. */
void fetcher_cache_summary (void);

#endif
