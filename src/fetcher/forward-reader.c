/*
 * forward-reader.c: recognise a client that reads forward through the
 * object, at any queue depth, so that the fetcher can fetch ahead of it.
 *
 * A reader is followed as a few runs.  A read continues the run whose
 * furthest byte asked for (its frontier) is nearest, if it starts within
 * FORWARD_MAX_DISTANCE of it, before or after: exact successors,
 * overlapping neighbours and small gaps all continue a run.  A read that
 * lies inside a run's span, further back, belongs to it without moving it
 * (a client reading something again).  Any other read is a jump: it
 * starts a new run in place of the one seen least recently, and the runs
 * it left keep their state, so that a reader that returns to one (a
 * qcow2 reader back from a table to its data) goes on where it was.
 *
 * A run counts as forward once FORWARD_TRIGGER_READS reads moved its
 * frontier and its reads asked for at least FORWARD_MIN_DENSITY_PERCENT
 * of its span.  Random readers fail one or the other, and nothing is
 * fetched for them beyond what they ask.
 *
 * Pure arithmetic on the offsets the front-end has already checked
 * against the export's size; no allocation, no global state, so that it
 * links on its own for its unit test.
 */
#include <string.h>

#include "forward-reader.h"

void
forward_reader_init (struct forward_reader *fr)
{
  memset (fr, 0, sizeof *fr);
}

/* How far a read starting at offset is from continuing run r, or
 * UINT64_MAX when it does not: 0 inside the run's span. */
static uint64_t
distance (const struct forward_run *r, uint64_t offset)
{
  uint64_t d;

  if (!r->in_use)
    return UINT64_MAX;
  if (offset >= r->frontier)
    d = offset - r->frontier;
  else if (offset >= r->start)
    return 0;
  else
    d = r->frontier - offset;
  return d <= FORWARD_MAX_DISTANCE ? d : UINT64_MAX;
}

static struct forward_run *
nearest_run (struct forward_reader *fr, uint64_t offset)
{
  struct forward_run *best = NULL;
  uint64_t best_d = UINT64_MAX;

  for (unsigned i = 0; i < FORWARD_MAX_RUNS; i++) {
    uint64_t d = distance (&fr->runs[i], offset);
    if (d < best_d) {
      best = &fr->runs[i];
      best_d = d;
    }
  }
  return best;
}

/* A free slot, else the run seen least recently. */
static struct forward_run *
slot_for_new_run (struct forward_reader *fr)
{
  struct forward_run *oldest = &fr->runs[0];

  for (unsigned i = 0; i < FORWARD_MAX_RUNS; i++) {
    if (!fr->runs[i].in_use)
      return &fr->runs[i];
    if (fr->runs[i].last_seen < oldest->last_seen)
      oldest = &fr->runs[i];
  }
  return oldest;
}

/* The read [offset, end) continues r: count what it asks for past the
 * frontier.  A read that starts before the run (an overlap at its first
 * byte) moves its start back, so that the span stays what was asked. */
static void
extend_run (struct forward_run *r, uint64_t offset, uint64_t end)
{
  if (offset < r->start) {
    r->asked += (end < r->start ? end : r->start) - offset;
    r->start = offset;
  }
  if (end > r->frontier) {
    r->asked += end - (offset > r->frontier ? offset : r->frontier);
    r->frontier = end;
    r->advances++;
  }
}

static bool
dense_enough (const struct forward_run *r)
{
  uint64_t span = r->frontier - r->start;

  /* asked <= span, so asked * 100 overflows only past 2^57 bytes: divide
   * the span instead. */
  return r->asked >= span / 100 * FORWARD_MIN_DENSITY_PERCENT +
                     span % 100 * FORWARD_MIN_DENSITY_PERCENT / 100;
}

struct forward_verdict
forward_reader_observe (struct forward_reader *fr, uint64_t offset, uint32_t length)
{
  struct forward_verdict v = { .forward = false };
  struct forward_run *r;
  uint64_t end;

  if (length == 0 || offset > UINT64_MAX - length)
    return v;
  end = offset + length;
  fr->clock++;
  r = nearest_run (fr, offset);
  if (r == NULL) {
    r = slot_for_new_run (fr);
    *r = (struct forward_run) {
      .in_use = true, .start = offset, .frontier = end, .asked = length,
    };
  }
  else
    extend_run (r, offset, end);
  r->last_seen = fr->clock;
  v.forward = r->advances >= FORWARD_TRIGGER_READS && dense_enough (r);
  v.frontier = r->frontier;
  v.run_start = r->start;
  return v;
}
