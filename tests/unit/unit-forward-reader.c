/* unit-forward-reader.c: which read patterns forward-reader.c takes for a
 * forward reader, over synthetic patterns and a recorded qemu-img convert
 * (argv[1]), TAP output. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "forward-reader.h"
#include "unit.h"

#define KiB UINT64_C (1024)
#define MiB (KiB * KiB)
#define GiB (KiB * MiB)

/* Reads counted forward, of n observed. */
struct tally {
  unsigned reads, forward;
  struct forward_verdict last;
};

static void
read_at (struct forward_reader *fr, struct tally *t, uint64_t offset, uint32_t length)
{
  t->last = forward_reader_observe (fr, offset, length);
  t->reads++;
  t->forward += t->last.forward;
}

/* A reader stepping by step bytes from start, each read len bytes:
 * step == len exact successors, step < len overlaps, step > len gaps,
 * a negative step backwards. */
static struct tally
stepping (uint64_t start, int64_t step, uint32_t len, unsigned n)
{
  struct forward_reader fr;
  struct tally t = { 0 };
  uint64_t pos = start;

  forward_reader_init (&fr);
  for (unsigned i = 0; i < n; i++, pos += (uint64_t) step)
    read_at (&fr, &t, pos, len);
  return t;
}

static void
sequential_patterns (void)
{
  struct tally t;

  t = stepping (0, 64 * KiB, 64 * KiB, 100);
  CHECK (t.forward == 100 - FORWARD_TRIGGER_READS, "exact successors: forward from the trigger on");
  CHECK (t.last.frontier == 100 * 64 * KiB && t.last.run_start == 0,
         "exact successors: the frontier is one past the last byte read");

  t = stepping (10 * MiB, 19 * KiB, 20 * KiB, 200);
  CHECK (t.forward == 200 - FORWARD_TRIGGER_READS, "reads overlapping by 1 KiB: forward");
  CHECK (t.last.frontier == 10 * MiB + 199 * 19 * KiB + 20 * KiB, "overlaps: frontier");

  t = stepping (0, 24 * KiB, 20 * KiB, 200);
  CHECK (t.forward == 200 - FORWARD_TRIGGER_READS, "reads with 4 KiB gaps (83% dense): forward");

  t = stepping (0, 12 * KiB, 4 * KiB, 200);
  CHECK (t.forward == 0, "reads with gaps twice their size (33% dense): never forward");

  t = stepping (0, (int64_t) (FORWARD_MAX_DISTANCE + 64 * KiB), 64 * KiB, 50);
  CHECK (t.forward == 0, "gaps just past the distance: every read is a jump");

  t = stepping (1 * GiB, -(int64_t) (64 * KiB), 64 * KiB, 200);
  CHECK (t.forward == 0, "a backward reader: never forward");

  t = stepping (1 * GiB, 0, 64 * KiB, 50);
  CHECK (t.forward == 0, "the same range again and again: never forward");
}

/* A fixed pseudo-random sequence, the same on every run. */
static uint64_t
next_random (uint64_t *state)
{
  *state = *state * UINT64_C (6364136223846793005) + UINT64_C (1442695040888963407);
  return *state >> 11;
}

static void
random_patterns (void)
{
  static const uint64_t sizes[] = { 16 * MiB, 64 * MiB, 1 * GiB, 4 * GiB };
  char name[96];

  for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    struct forward_reader fr;
    struct tally t = { 0 };
    uint64_t state = 42 + s;

    forward_reader_init (&fr);
    for (unsigned i = 0; i < 100000; i++)
      read_at (&fr, &t, next_random (&state) % (sizes[s] / (4 * KiB)) * (4 * KiB), 4 * KiB);
    snprintf (name, sizeof name, "4 KiB random reads over %" PRIu64 " MiB: %u of %u forward",
              sizes[s] / MiB, t.forward, t.reads);
    CHECK (t.forward == 0, name);
  }
}

static void
interleaved_streams (void)
{
  struct forward_reader fr;
  struct tally a = { 0 }, b = { 0 }, far = { 0 };

  forward_reader_init (&fr);
  for (unsigned i = 0; i < 100; i++) {
    read_at (&fr, &a, i * 256 * KiB, 256 * KiB);
    read_at (&fr, &b, 2 * GiB + i * 256 * KiB, 256 * KiB);
  }
  CHECK (a.forward == 100 - FORWARD_TRIGGER_READS && b.forward == 100 - FORWARD_TRIGGER_READS,
         "two interleaved sequential streams: both forward");
  CHECK (a.last.frontier == 100 * 256 * KiB && b.last.frontier == 2 * GiB + 100 * 256 * KiB,
         "two streams: each its own frontier");

  /* As many streams as runs are followed; one more and the run seen
   * least recently is the one forgotten each time: none is followed. */
  forward_reader_init (&fr);
  memset (&a, 0, sizeof a);
  for (unsigned i = 0; i < 50; i++)
    for (unsigned s = 0; s < FORWARD_MAX_RUNS; s++)
      read_at (&fr, &a, s * GiB + i * 64 * KiB, 64 * KiB);
  CHECK (a.forward == FORWARD_MAX_RUNS * (50 - FORWARD_TRIGGER_READS),
         "as many interleaved streams as runs: all forward");
  forward_reader_init (&fr);
  for (unsigned i = 0; i < 50; i++)
    for (unsigned s = 0; s <= FORWARD_MAX_RUNS; s++)
      read_at (&fr, &far, s * GiB + i * 64 * KiB, 64 * KiB);
  CHECK (far.forward == 0, "one stream more than runs: none followed (least recent forgotten)");
}

static void
jumps (void)
{
  struct forward_reader fr;
  struct tally t = { 0 };

  forward_reader_init (&fr);
  for (unsigned i = 0; i < 20; i++)
    read_at (&fr, &t, i * 64 * KiB, 64 * KiB);
  read_at (&fr, &t, 3 * GiB, 64 * KiB);
  CHECK (!t.last.forward && t.last.run_start == 3 * GiB, "a jump starts a run that is not forward");
  read_at (&fr, &t, 20 * 64 * KiB, 64 * KiB);
  CHECK (t.last.forward && t.last.frontier == 21 * 64 * KiB,
         "back from the jump: the old run goes on where it was");
  read_at (&fr, &t, 0, 4 * KiB);
  CHECK (t.last.forward && t.last.frontier == 21 * 64 * KiB,
         "a read again inside the run: belongs to it, does not move it");

  for (unsigned i = 1; i <= FORWARD_TRIGGER_READS; i++) {
    read_at (&fr, &t, 3 * GiB + i * 64 * KiB, 64 * KiB);
    CHECK (t.last.forward == (i == FORWARD_TRIGGER_READS),
           i == FORWARD_TRIGGER_READS ? "the jump's run: forward at the trigger"
                                      : "the jump's run: not forward before the trigger");
  }

  /* A read that overlaps the run's first byte from below moves its
   * start back and keeps it dense. */
  forward_reader_init (&fr);
  memset (&t, 0, sizeof t);
  read_at (&fr, &t, 1 * MiB, 64 * KiB);
  read_at (&fr, &t, 1 * MiB - 32 * KiB, 64 * KiB);
  CHECK (t.last.run_start == 1 * MiB - 32 * KiB && t.last.frontier == 1 * MiB + 64 * KiB,
         "an overlap below the start moves the start back");
}

static void
edges (void)
{
  struct forward_reader fr;
  struct forward_verdict v;

  forward_reader_init (&fr);
  v = forward_reader_observe (&fr, 0, 0);
  CHECK (!v.forward && fr.clock == 0, "a read of no bytes tells nothing");
  v = forward_reader_observe (&fr, UINT64_MAX - 10, 4096);
  CHECK (!v.forward && fr.clock == 0, "a read whose end passes 2^64 tells nothing");
  for (unsigned i = 0; i < 10; i++)
    v = forward_reader_observe (&fr, UINT64_MAX - 4096 * (uint64_t) (10 - i), 4096);
  CHECK (v.forward && v.frontier == UINT64_MAX, "a run up to the last byte: no wrap");
  for (unsigned i = 0; i < 10; i++)
    v = forward_reader_observe (&fr, 4096 * (uint64_t) i, 4096);
  CHECK (v.forward && v.frontier == 10 * 4096, "a run from byte 0 (distance below 0)");
}

/* The recorded qemu-img convert of a compressed qcow2: most of its reads
 * overlap or leave gaps, a few jump to tables.  Nearly all must count. */
static void
recorded_qemu_img (const char *path)
{
  struct forward_reader fr;
  struct tally t = { 0 };
  uint64_t offset, bytes = 0, forward_bytes = 0;
  unsigned length;
  char line[128];
  FILE *fp = fopen (path, "r");

  if (fp == NULL) {
    printf ("Bail out! cannot open %s\n", path);
    exit (1);
  }
  forward_reader_init (&fr);
  while (fgets (line, sizeof line, fp) != NULL) {
    if (line[0] == '#')
      continue;
    if (sscanf (line, "%" SCNu64 " %u", &offset, &length) != 2) {
      printf ("Bail out! bad line in %s: %s", path, line);
      exit (1);
    }
    read_at (&fr, &t, offset, length);
    bytes += length;
    forward_bytes += t.last.forward ? length : 0;
  }
  fclose (fp);
  CHECK (t.reads > 1000, "the recording holds a convert's reads");
  CHECK (t.forward * 100 >= t.reads * 95, "qemu-img convert of a compressed qcow2: 95% of reads forward");
  CHECK (forward_bytes * 100 >= bytes * 95, "qemu-img convert: 95% of bytes in forward reads");
  printf ("# recorded convert: %u of %u reads forward, %" PRIu64 " of %" PRIu64 " bytes\n",
          t.forward, t.reads, forward_bytes, bytes);
}

int
main (int argc, char **argv)
{
  if (argc != 2) {
    printf ("Bail out! usage: %s RECORDED-READS-FILE\n", argv[0]);
    return 1;
  }
  sequential_patterns ();
  random_patterns ();
  interleaved_streams ();
  jumps ();
  edges ();
  recorded_qemu_img (argv[1]);
  return UNIT_END ();
}
