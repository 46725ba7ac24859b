/*
 * unit-read-split: the table of split reads (src/fetcher/read-split.c):
 * how many pieces a read goes in, the pieces' ranges, places and ids,
 * and a read answered exactly once, after every piece, with EIO when
 * one failed.  Then many reads split at once, their pieces ended in a
 * random order (a fixed seed), checked against a model.  Replies that
 * break the invariants (a piece answered twice, an id of no split in
 * flight) must be fatal: fatal() is the test's own here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "limits-direct.h"
#include "read-split.h"
#include "unit.h"

#define KIB 1024u
#define MIB (1024u * 1024)

/* The replies the table sends for clients' reads. */
static struct {
  uint64_t id;
  uint32_t error;
} answers[4096];
static unsigned nanswers;

void
fetcher_reply (uint64_t id, uint32_t error)
{
  if (nanswers == sizeof answers / sizeof answers[0]) {
    printf ("Bail out! too many answers\n");
    exit (1);
  }
  answers[nanswers].id = id;
  answers[nanswers].error = error;
  nanswers++;
}

static jmp_buf on_fatal;
static bool expect_fatal;

void
fatal (const char *fmt, ...)
{
  va_list ap;

  if (!expect_fatal) {
    printf ("Bail out! fatal: ");
    va_start (ap, fmt);
    vprintf (fmt, ap);
    va_end (ap);
    printf ("\n");
    exit (1);
  }
  longjmp (on_fatal, 1);
}

/* Does ending piece id with error end in fatal()? */
static bool
ending_is_fatal (uint64_t id, uint32_t error)
{
  bool died = false;

  expect_fatal = true;
  if (setjmp (on_fatal) == 0)
    split_piece_ended (id, error);
  else
    died = true;
  expect_fatal = false;
  return died;
}

static uint8_t area[32 * MIB];

static struct fetcher_request
client_read (uint64_t id, uint64_t offset, uint32_t length, uint32_t place)
{
  return (struct fetcher_request) {
    .type = IPC_READ, .id = id, .offset = offset, .length = length, .data = area + place,
  };
}

/* The pieces of r: consecutive, covering it exactly, in its place, each
 * longer than floor, no two lengths more than a byte apart, distinct
 * ids of the fetcher's own, the flags given. */
static bool
pieces_cover (const struct fetcher_request *r, const struct fetcher_request *p, unsigned n,
              uint32_t floor, uint16_t flags)
{
  uint64_t offset = r->offset;
  uint32_t done = 0, least = UINT32_MAX, most = 0;
  unsigned i, j;

  for (i = 0; i < n; i++) {
    if (p[i].type != IPC_READ || p[i].flags != flags || p[i].offset != offset ||
        p[i].data != r->data + done || p[i].length <= floor || !split_is_piece (p[i].id) ||
        p[i].auth_retried != r->auth_retried)
      return false;
    for (j = 0; j < i; j++)
      if (p[j].id == p[i].id)
        return false;
    least = p[i].length < least ? p[i].length : least;
    most = p[i].length > most ? p[i].length : most;
    offset += p[i].length;
    done += p[i].length;
  }
  return done == r->length && most - least <= 1;
}

static void
counts (void)
{
  CHECK (split_count (2 * MIB, 8 * MIB, 256 * KIB) == 1, "a read no longer than a piece: whole");
  CHECK (split_count (2 * MIB, 2 * MIB, 256 * KIB) == 1, "exactly a piece: whole");
  CHECK (split_count (2 * MIB, 512 * KIB, 256 * KIB) == 4, "2 MiB in pieces of 512 KiB: 4");
  CHECK (split_count (2 * MIB, 768 * KIB, 256 * KIB) == 3, "2 MiB in pieces of 768 KiB: 3");
  CHECK (split_count (2 * MIB + 1, 512 * KIB, 256 * KIB) == 5, "a byte more: a piece more");
  CHECK (split_count (32 * MIB, 512 * KIB, 256 * KIB) == DIRECT_SPLIT_MAX_PIECES,
         "32 MiB: DIRECT_SPLIT_MAX_PIECES at most");
  CHECK (split_count (1 * MIB, 256 * KIB, 256 * KIB) == 3,
         "pieces no longer than the floor: fewer pieces");
  CHECK (split_count (512 * KIB, 256 * KIB, 256 * KIB) == 1,
         "no two pieces longer than the floor: whole");
  CHECK (split_count (100, 0, 0) == 1, "no piece size: whole");
  CHECK (split_count (UINT32_MAX, 1, 0) == DIRECT_SPLIT_MAX_PIECES, "no overflow at the ends");
}

static void
one_read (void)
{
  struct fetcher_request r = client_read (7 << 8, 40 * MIB, 2 * MIB + 3, 1 * MIB);
  struct fetcher_request p[DIRECT_SPLIT_MAX_PIECES];
  unsigned n = split_count (r.length, 512 * KIB, 256 * KIB), i;
  bool early = false;

  r.auth_retried = true;
  CHECK (split_begin (&r, n, 0xc000, p), "a read is split");
  CHECK (pieces_cover (&r, p, n, 256 * KIB, 0xc000), "its pieces cover it in its place");
  CHECK (split_pending () == 1, "one split read pending");
  for (i = n; i > 1; i--) {
    split_piece_ended (p[i - 1].id, 0);
    early |= nanswers != 0;
  }
  CHECK (!early, "no answer while a piece is out");
  CHECK (ending_is_fatal (p[n - 1].id, 0), "a piece answered twice is fatal");
  split_piece_ended (p[0].id, 0);
  CHECK (nanswers == 1 && answers[0].id == r.id && answers[0].error == 0,
         "answered once, with 0, after the last piece");
  CHECK (split_pending () == 0, "none pending");
  CHECK (ending_is_fatal (p[0].id, 0), "a piece of a read answered is fatal");
  CHECK (ending_is_fatal (IPC_ID_FETCHER_OWN | 0xff00, 0), "an id of no entry is fatal");
  CHECK (ending_is_fatal (IPC_ID_FETCHER_OWN | (uint64_t) DIRECT_SPLIT_MAX_READS << 8, 0),
         "an entry past the table is fatal");
  nanswers = 0;

  /* One piece fails: EIO, once the others are done too. */
  CHECK (split_begin (&r, 4, 0, p), "split again");
  split_piece_ended (p[1].id, EIO);
  split_piece_ended (p[0].id, 0);
  split_piece_ended (p[3].id, 0);
  CHECK (nanswers == 0, "a failed piece does not answer before the others end");
  split_piece_ended (p[2].id, 0);
  CHECK (nanswers == 1 && answers[0].id == r.id && answers[0].error == EIO,
         "a failed piece: EIO for the read");
  nanswers = 0;
  CHECK (ending_is_fatal (r.id, 0), "a client's id is not a piece's");
}

static void
table_full (void)
{
  struct fetcher_request p[DIRECT_SPLIT_MAX_READS + 1][2];
  unsigned i;
  bool all = true;

  for (i = 0; i < DIRECT_SPLIT_MAX_READS; i++) {
    struct fetcher_request r = client_read ((uint64_t) i << 8, (uint64_t) i * MIB, MIB, 0);
    all &= split_begin (&r, 2, 0, p[i]);
  }
  CHECK (all, "DIRECT_SPLIT_MAX_READS reads split at once");
  {
    struct fetcher_request r = client_read (99, 0, MIB, 0);
    p[i][0].id = 1234;
    CHECK (!split_begin (&r, 2, 0, p[i]) && p[i][0].id == 1234,
           "one more is refused, its pieces untouched");
  }
  for (i = 0; i < DIRECT_SPLIT_MAX_READS; i++) {
    split_piece_ended (p[i][1].id, 0);
    split_piece_ended (p[i][0].id, 0);
  }
  CHECK (nanswers == DIRECT_SPLIT_MAX_READS && split_pending () == 0, "every read answered");
  nanswers = 0;
}

/* A small generator with a fixed seed: the same run every time. */
static uint64_t seed = 0x9e3779b97f4a7c15u;
static uint32_t
next_random (uint32_t n)
{
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  return (uint32_t) (seed % n);
}

/* Reads split and ended in a random order, over and over: each read is
 * answered once, after its last piece, with EIO iff a piece failed. */
static void
random_order (void)
{
  struct model {
    bool live;
    uint64_t id;
    unsigned n, left;
    bool failed;
    struct fetcher_request p[DIRECT_SPLIT_MAX_PIECES];
    bool ended[DIRECT_SPLIT_MAX_PIECES];
  } m[DIRECT_SPLIT_MAX_READS];
  uint64_t next_id = 1 << 8;
  unsigned round, live = 0, answered = 0;
  bool ok = true, covered = true;

  memset (m, 0, sizeof m);
  for (round = 0; round < 200000 && ok; round++) {
    unsigned k = next_random (DIRECT_SPLIT_MAX_READS);
    struct model *x = &m[k];
    if (!x->live) {
      uint32_t length = 2 + next_random (32 * MIB - 1);
      uint32_t piece = 1 + next_random (4 * MIB);
      uint32_t floor = next_random (2) ? 0 : next_random (512 * KIB);
      struct fetcher_request r = client_read (next_id, next_random (1u << 30), length,
                                              next_random (32 * MIB - length + 1));
      unsigned n = split_count (length, piece, floor);
      next_id += 1 << 8;
      if (n < 2)
        continue;
      x->live = split_begin (&r, n, 0, x->p);
      ok &= x->live;
      covered &= pieces_cover (&r, x->p, n, floor, 0);
      x->id = r.id;
      x->n = x->left = n;
      x->failed = false;
      memset (x->ended, 0, sizeof x->ended);
      live++;
      continue;
    }
    /* End one of its pieces still out. */
    {
      unsigned i = next_random (x->n);
      uint32_t error = next_random (16) == 0 ? EIO : 0;
      unsigned before = nanswers;
      while (x->ended[i])
        i = (i + 1) % x->n;
      x->ended[i] = true;
      x->failed |= error != 0;
      split_piece_ended (x->p[i].id, error);
      if (--x->left > 0) {
        ok &= nanswers == before;
        continue;
      }
      ok &= nanswers == before + 1 && answers[before].id == x->id &&
            answers[before].error == (x->failed ? (uint32_t) EIO : 0);
      nanswers = 0;
      x->live = false;
      live--;
      answered++;
    }
  }
  CHECK (ok, "random orders: every read answered once, after its last piece, rightly");
  CHECK (covered, "random reads: pieces cover their reads exactly");
  CHECK (split_pending () == live, "the reads pending are those with pieces out");
  CHECK (answered > 1000, "many reads went through");
}

int
main (void)
{
  counts ();
  one_read ();
  table_full ();
  random_order ();
  return UNIT_END ();
}
