/*
 * read-split.c: a client's read fetched as pieces, each its own range
 * request on its own connection, on a distant link.
 *
 * Why: a distant server answers each request a round trip late, and
 * often caps each TCP connection's rate.  A client that keeps a few
 * large reads in flight (qemu-img convert: 8 of 2 MiB) then keeps only
 * as many connections busy as it has reads, each for a round trip plus
 * its whole body at one connection's rate, and the other connections
 * idle.  Pieces of direct_split_piece() bytes (what the client has
 * asked for, or the look-ahead if less, spread over the connections,
 * direct-sizing.c) put every connection to work.
 *
 * When (fetcher-http.c, start_split_read): a read the readahead store
 * and the read cache declined, going direct and into the data area
 * (never the data pipe: its bytes are one reply), longer than a piece,
 * with room in the queue for its pieces and a free entry here, once the
 * round trips of a few replies say the server is distant (direct_far):
 * a near one gets whole reads.
 *
 * How: each piece is a request of the fetcher's own (its id carries
 * IPC_ID_FETCHER_OWN, which the front-end's never do: the fetcher
 * refuses them, fetcher-request-parse.c), with its own place inside the
 * read's place in the data area.  The pieces are fetched, checked and
 * retried like any read; their replies (fetcher_reply) come here
 * instead of going to the front-end.  The client's read is answered
 * once every piece has ended, and only then: until a piece's reply, its
 * transfer may still write into the data area, which the front-end
 * reuses for other reads once this one is answered.  So a read with a
 * failed piece waits for the others before its EIO.
 *
 * An id: IPC_ID_FETCHER_OWN, a serial number of the split, the entry
 * here, and the piece's index (DIRECT_SPLIT_PIECE_BITS each for the
 * last two): a reply that names an entry no longer holding that split,
 * or a piece that ended already, is a broken invariant.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>

#include "limits-direct.h"
#include "log.h"
#include "read-split.h"

#define PIECE_MASK ((UINT64_C (1) << DIRECT_SPLIT_PIECE_BITS) - 1)
#define SERIAL_SHIFT (2 * DIRECT_SPLIT_PIECE_BITS)
#define SERIAL_MASK ((IPC_ID_FETCHER_OWN - 1) >> SERIAL_SHIFT)

static_assert (DIRECT_SPLIT_MAX_PIECES < 32, "the pieces ended are a 32-bit mask, all ended below 1 << 32");
static_assert (DIRECT_SPLIT_MAX_PIECES <= PIECE_MASK + 1, "a piece's index fits its bits");
static_assert (DIRECT_SPLIT_MAX_READS <= PIECE_MASK + 1, "an entry's index fits its bits");
static_assert (DIRECT_SPLIT_MAX_PIECES >= 2, "a split makes two pieces at least");

static struct {
  struct split {
    bool used;
    uint64_t id;              /* the client's read */
    uint64_t serial;          /* of this split, in its pieces' ids */
    unsigned npieces;
    uint32_t ended;           /* bit i: piece i has had its reply */
    bool failed;              /* a piece ended with an error */
  } reads[DIRECT_SPLIT_MAX_READS];
  unsigned pending;
  uint64_t serial;
} split;

unsigned
split_count (uint32_t length, uint32_t piece_max, uint32_t piece_floor)
{
  unsigned n;

  if (piece_max == 0 || length <= piece_max)
    return 1;
  /* length > piece_max >= 1: n >= 2. */
  n = length / piece_max + (length % piece_max != 0);
  if (n > DIRECT_SPLIT_MAX_PIECES)
    n = DIRECT_SPLIT_MAX_PIECES;
  /* Each piece is length / n bytes or one more: all longer than
   * piece_floor. */
  while (n > 1 && length / n <= piece_floor)
    n--;
  return n;
}

static struct split *
free_entry (void)
{
  unsigned i;

  for (i = 0; i < DIRECT_SPLIT_MAX_READS; i++)
    if (!split.reads[i].used)
      return &split.reads[i];
  return NULL;
}

bool
split_begin (const struct fetcher_request *req, unsigned n, uint16_t piece_flags,
             struct fetcher_request *pieces)
{
  struct split *s = free_entry ();
  uint64_t slot, offset = req->offset;
  uint32_t base = req->length / n, longer = req->length % n, done = 0;
  unsigned i;

  if (n < 2 || n > DIRECT_SPLIT_MAX_PIECES || req->length < n)
    fatal ("internal error: a read of %" PRIu32 " bytes split in %u pieces",
           req->length, n);
  if (s == NULL)
    return false;
  slot = (uint64_t) (s - split.reads);
  split.serial = (split.serial + 1) & SERIAL_MASK;
  *s = (struct split) {
    .used = true, .id = req->id, .serial = split.serial, .npieces = n,
  };
  split.pending++;
  /* The first `longer` pieces take a byte more: together exactly
   * req->length (base * n + longer). */
  for (i = 0; i < n; i++) {
    uint32_t length = base + (i < longer);
    pieces[i] = (struct fetcher_request) {
      .type = IPC_READ, .flags = piece_flags,
      .id = IPC_ID_FETCHER_OWN | s->serial << SERIAL_SHIFT |
            slot << DIRECT_SPLIT_PIECE_BITS | i,
      .offset = offset, .length = length, .data = req->data + done,
      .auth_retried = req->auth_retried,
    };
    offset += length;
    done += length;
  }
  return true;
}

void
split_piece_ended (uint64_t id, uint32_t error)
{
  uint64_t slot = id >> DIRECT_SPLIT_PIECE_BITS & PIECE_MASK;
  uint64_t serial = id >> SERIAL_SHIFT & SERIAL_MASK;
  unsigned piece = (unsigned) (id & PIECE_MASK);
  struct split *s = slot < DIRECT_SPLIT_MAX_READS ? &split.reads[slot] : NULL;

  if (!split_is_piece (id) || s == NULL || !s->used || s->serial != serial ||
      piece >= s->npieces || (s->ended & UINT32_C (1) << piece))
    fatal ("internal error: a reply for piece 0x%" PRIx64 ", which is not in flight", id);
  s->ended |= UINT32_C (1) << piece;
  if (error != 0)
    s->failed = true;
  if (s->ended != (UINT32_C (1) << s->npieces) - 1)
    return;                     /* others are still out */
  s->used = false;
  split.pending--;
  fetcher_reply (s->id, s->failed ? EIO : 0);
}

unsigned
split_pending (void)
{
  return split.pending;
}
