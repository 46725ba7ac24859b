/*
 * fuzz-forward-reader: the forward-reader detector's range arithmetic
 * (src/fetcher/forward-reader.c) under any sequence of reads.
 *
 * Input: records, each a kind byte then its fields, little-endian:
 *   kind & 3 == 0: an offset (8 bytes) and a length (4 bytes);
 *   kind & 3 == 1: a signed distance (4 bytes) from the end of the last
 *                  read, and a length (2 bytes): neighbours, overlaps,
 *                  gaps and small jumps back;
 *   kind & 3 == 2: the last read again, moved by a signed distance (2
 *                  bytes): reads again inside a run;
 *   kind & 3 == 3: a read near 2^64 (an offset below it by 4 bytes' worth,
 *                  and a length of 4 bytes): the ends of the range.
 *
 * Checked after every read, against the contract in forward-reader.h:
 * a read of no bytes or one past 2^64 changes nothing; any other moves
 * the clock on by one, and its verdict names a run that starts at or
 * before it and whose frontier is at or past its end; every run keeps
 * start <= frontier and asked <= frontier - start; a verdict is forward
 * only for a run with enough advances that is dense enough.
 */
#include <string.h>

#include "forward-reader.h"
#include "fuzz.h"

static uint64_t
get_le (const uint8_t **p, const uint8_t *end, unsigned n, bool *ok)
{
  uint64_t v = 0;

  if ((size_t) (end - *p) < n) {
    *ok = false;
    return 0;
  }
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t) (*p)[i] << (8 * i);
  *p += n;
  return v;
}

static void
check_runs (const struct forward_reader *fr)
{
  for (unsigned i = 0; i < FORWARD_MAX_RUNS; i++) {
    const struct forward_run *r = &fr->runs[i];
    if (!r->in_use)
      continue;
    FUZZ_CHECK (r->start <= r->frontier, "run %u: start %lu past frontier %lu", i,
                (unsigned long) r->start, (unsigned long) r->frontier);
    FUZZ_CHECK (r->asked <= r->frontier - r->start, "run %u: asked %lu of a span of %lu", i,
                (unsigned long) r->asked, (unsigned long) (r->frontier - r->start));
    FUZZ_CHECK (r->last_seen <= fr->clock, "run %u seen in the future", i);
  }
}

/* The run the newest read went to: the only one seen at this clock. */
static const struct forward_run *
run_of (const struct forward_reader *fr)
{
  for (unsigned i = 0; i < FORWARD_MAX_RUNS; i++)
    if (fr->runs[i].in_use && fr->runs[i].last_seen == fr->clock)
      return &fr->runs[i];
  return NULL;
}

static void
observe_checked (struct forward_reader *fr, uint64_t offset, uint32_t length)
{
  uint64_t clock = fr->clock;
  struct forward_reader before = *fr;
  struct forward_verdict v = forward_reader_observe (fr, offset, length);
  const struct forward_run *r;

  if (length == 0 || offset > UINT64_MAX - length) {
    FUZZ_CHECK (memcmp (&before, fr, sizeof before) == 0 && !v.forward,
                "a read that tells nothing changed something");
    return;
  }
  FUZZ_CHECK (fr->clock == clock + 1, "the clock did not move on by one");
  r = run_of (fr);
  FUZZ_CHECK (r != NULL, "no run saw the read");
  FUZZ_CHECK (v.run_start == r->start && v.frontier == r->frontier,
              "the verdict names another run");
  FUZZ_CHECK (r->start <= offset && r->frontier >= offset + length,
              "the read's run does not cover it: [%lu, %lu) for a read of %u at %lu",
              (unsigned long) r->start, (unsigned long) r->frontier, length,
              (unsigned long) offset);
  if (v.forward) {
    uint64_t span = r->frontier - r->start;
    FUZZ_CHECK (r->advances >= FORWARD_TRIGGER_READS, "forward before the trigger");
    FUZZ_CHECK (r->asked >= span / 100 * FORWARD_MIN_DENSITY_PERCENT,
                "forward though sparse: %lu of %lu", (unsigned long) r->asked,
                (unsigned long) span);
  }
  check_runs (fr);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const uint8_t *p = data, *end = data + size;
  struct forward_reader fr;
  uint64_t last_offset = 0, last_end = 0;
  uint32_t last_length = 0;
  bool ok = true;

  forward_reader_init (&fr);
  /* Each record consumes at least its kind byte: at most size records. */
  while (p < end) {
    unsigned kind = *p++ & 3;
    uint64_t offset;
    uint32_t length;

    if (kind == 0) {
      offset = get_le (&p, end, 8, &ok);
      length = (uint32_t) get_le (&p, end, 4, &ok);
    }
    else if (kind == 1) {
      int32_t d = (int32_t) (uint32_t) get_le (&p, end, 4, &ok);
      offset = last_end + (uint64_t) (int64_t) d;     /* wraps: a read near 2^64 */
      length = (uint32_t) get_le (&p, end, 2, &ok);
    }
    else if (kind == 2) {
      int16_t d = (int16_t) (uint16_t) get_le (&p, end, 2, &ok);
      offset = last_offset + (uint64_t) (int64_t) d;
      length = last_length;
    }
    else {
      offset = UINT64_MAX - get_le (&p, end, 4, &ok);
      length = (uint32_t) get_le (&p, end, 4, &ok);
    }
    if (!ok)
      break;
    observe_checked (&fr, offset, length);
    last_offset = offset;
    last_length = length;
    last_end = offset + length;
  }
  return 0;
}
