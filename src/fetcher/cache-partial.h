/*
 * cache-partial.h: the parts of cache blocks a fetcher has seen but not
 * whole.  The cache keeps whole blocks only; a client whose reads do not
 * fall on block boundaries (qemu-img reading a compressed qcow2, each
 * read a cluster rounded to sectors), or readahead windows that end
 * inside a block, would leave the blocks at their edges out for ever.
 * So the bytes of those edges wait here, a few blocks' worth, until
 * neighbouring reads complete a block, in whatever order they come (a
 * client with reads in flight completes them out of order), which then
 * goes to the cache.
 *
 * A block that no neighbouring read completes (a gap between a qcow2
 * image's clusters, the last read before the client left, or a slot
 * taken for newer edges) would still be missing for the export's next
 * client.  So every block left in part is also listed to be fetched
 * whole (fetcher-scan.c), oldest first, until the cache holds it.
 *
 * Pure logic on the fetcher's own memory (the unit test runs it).
 */
#ifndef NBDCURLD_CACHE_PARTIAL_H
#define NBDCURLD_CACHE_PARTIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "limits-cache.h"

struct partial_slot {
  bool on;
  uint64_t block;             /* its number in the object */
  uint32_t filled;            /* bytes of it held */
  uint64_t used;              /* when last added to, on partial_blocks' clock */
  uint8_t *buf;               /* block_size bytes, malloc'd at first use, */
  uint8_t *have;              /* and a bit for each, set when it is held */
};

struct partial_blocks {
  uint32_t block_size;
  uint64_t size;              /* of the object */
  uint64_t clock;
  struct partial_slot slots[CACHE_PARTIAL_SLOTS];
  /* Blocks left in part, to be fetched whole, oldest first; when the
   * list is full the oldest goes (counted in dropped). */
  uint64_t unfilled[CACHE_FILL_QUEUE];
  unsigned nunfilled;
  uint64_t dropped;
};

/* What partial_next_fill's caller says of a listed block. */
enum partial_fill {
  PARTIAL_FILL_DONE,          /* whole in the cache now: off the list */
  PARTIAL_FILL_LATER,         /* a transfer in flight may complete it */
  PARTIAL_FILL_NOW,           /* fetch it whole */
};
typedef enum partial_fill partial_judge_fn (void *ctx, uint64_t block);

/* A block made whole: len bytes of the object at offset. */
typedef void partial_whole_fn (void *ctx, uint64_t offset, uint32_t len, const uint8_t *bytes);

/* p empty, for an object of size in blocks of block_size. */
void partial_init (struct partial_blocks *p, uint32_t block_size, uint64_t size);
/* data holds [offset, offset + length) of the object (checked, inside
 * it): keep the parts of the blocks at its two edges that it does not
 * cover whole, merged with what is kept of those blocks; each block that
 * becomes whole goes to whole() and is dropped here, each that does not
 * is listed to be fetched whole.  (The blocks the
 * range covers whole are the caller's.) */
void partial_add (struct partial_blocks *p, uint64_t offset, uint64_t length,
                  const uint8_t *data, partial_whole_fn *whole, void *ctx);
/* The oldest listed block that judge() says to fetch now, taken off the
 * list into *block: true; false when there is none.  Blocks judged done
 * leave the list; those judged later stay, in their order. */
bool partial_next_fill (struct partial_blocks *p, partial_judge_fn *judge, void *ctx,
                        uint64_t *block);
/* Free the buffers. */
void partial_free (struct partial_blocks *p);

#endif
