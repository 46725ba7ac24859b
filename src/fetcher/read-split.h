/*
 * read-split.h: a client's read fetched as pieces over several
 * connections at once, and answered once every piece has ended
 * (read-split.c).  fetcher-http.c decides when a read is split and
 * starts its pieces; fetcher.c hands each piece's reply here.
 */
#ifndef NBDCURLD_READ_SPLIT_H
#define NBDCURLD_READ_SPLIT_H

#include <stdbool.h>
#include <stdint.h>

#include "fetcher.h"
#include "ipc-messages.h"

/* Is id a piece's (the fetcher's own, IPC_ID_FETCHER_OWN), not a
 * client's read? */
static inline bool
split_is_piece (uint64_t id)
{
  return (id & IPC_ID_FETCHER_OWN) != 0;
}

/* How many pieces a read of length bytes goes in: 1 (not split) when it
 * is no longer than piece_max; else pieces of at most piece_max bytes,
 * at most DIRECT_SPLIT_MAX_PIECES of them, and fewer when they would not
 * all be longer than piece_floor (the data pipe's largest read: a piece
 * must go into the data area, as its read does). */
unsigned split_count (uint32_t length, uint32_t piece_max, uint32_t piece_floor);

/* Split req (an IPC_READ) into n pieces (n from split_count, at least 2):
 * pieces[0..n) in order, consecutive, each with its own place in req's
 * part of the data area, its own id, and flags piece_flags.  Returns
 * false (pieces untouched) when DIRECT_SPLIT_MAX_READS reads are split
 * already: then req is fetched whole. */
bool split_begin (const struct fetcher_request *req, unsigned n, uint16_t piece_flags,
                  struct fetcher_request *pieces);

/* The reply to a piece (fetcher_reply of a piece's id): error 0 when its
 * bytes are in place and passed every check, else an errno.  Once every
 * piece of the read has ended, the read is answered: 0 if they all
 * passed, else EIO.  A reply for no piece in flight, or a second one for
 * the same piece, is a broken invariant (fatal). */
void split_piece_ended (uint64_t id, uint32_t error);

/* Reads split and not answered yet. */
unsigned split_pending (void);

#endif
