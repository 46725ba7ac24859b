/*
 * fetcher-staging.c: staged reads, the network fetcher's side (the
 * front-end's is staging.c, limits-staging.h says why).
 *
 * Once the store follows a forward reader (fetcher-readahead.c), the
 * fetcher asks the front-end for staging spans, once (IPC_STAGE_WANTED).
 * Each span it holds is filled with the bytes the store holds complete
 * just ahead of the reader: from where the previous span ended, or from
 * the run's furthest byte, STAGE_OVERLAP_BYTES back either way, and named
 * to the front-end (IPC_STAGED).  Only bytes of segments whose transfer
 * ended with every check passed are staged: a window that fails stages
 * nothing.  The reads the front-end answers from a span never come here;
 * when the span comes back (IPC_STAGE_GIVE) it says how far they went,
 * and that moves the reader's run on as its reads would have, so that
 * the store keeps fetching ahead.
 */
#include <inttypes.h>

#include "fetcher-http.h"
#include "limits-staging.h"

static struct {
  bool asked;                   /* IPC_STAGE_WANTED sent */
  struct {
    uint8_t *at;                /* NULL: no span lent in this slot yet */
    bool held;                  /* ours to fill */
  } span[STAGE_SPANS];
  uint64_t staged_until;        /* one past the newest span staged */
  uint64_t staged_run;          /* the run it was staged for (its start) */
} st;

/* The slot of the span at at, a new slot for it, or a violation: the
 * front-end lends STAGE_SPANS spans, once each, and gives each back only
 * after it was staged. */
static unsigned
slot_of (uint8_t *at)
{
  unsigned i;

  for (i = 0; i < STAGE_SPANS; i++)
    if (st.span[i].at == at) {
      if (st.span[i].held)
        fetcher_front_end_violation ("STAGE_GIVE of a span it gave already");
      return i;
    }
  for (i = 0; i < STAGE_SPANS; i++)
    if (st.span[i].at == NULL)
      return i;
  fetcher_front_end_violation ("STAGE_GIVE of more than %u spans", STAGE_SPANS);
}

void
staging_given (const struct fetcher_request *req)
{
  unsigned i = slot_of (req->data);

  /* A span lent the first time: the store gives up as much, so that
   * what is read ahead, stored or staged, stays within --client-memory. */
  if (st.span[i].at == NULL)
    readahead_shrink (STAGE_SPAN_BYTES);
  st.span[i].at = req->data;
  st.span[i].held = true;
  /* How far the reads answered from it went: the reader's progress.  id
   * (bytes they asked for) is the front-end's count: bounded here. */
  if (req->offset > 0 && req->id > 0) {
    uint64_t len = req->id < STAGE_SPAN_BYTES ? req->id : STAGE_SPAN_BYTES;
    if (len > req->offset)
      len = req->offset;
    readahead_staged_progress (req->offset - len, (uint32_t) len);
  }
  staging_fill ();
}

/* Where the next span starts: after the newest one if it was staged for
 * this run and lies ahead of it, else at the run's furthest byte; a
 * little back, not before the run. */
static uint64_t
next_start (uint64_t frontier, uint64_t run_start)
{
  uint64_t pos = st.staged_run == run_start && st.staged_until > frontier
               ? st.staged_until : frontier;
  uint64_t back = pos - run_start < STAGE_OVERLAP_BYTES ? pos - run_start : STAGE_OVERLAP_BYTES;

  return pos - back;
}

void
staging_fill (void)
{
  uint64_t frontier, run_start;

  if (!(http.f->can & FETCHER_CAN_STAGE) || !readahead_following (&frontier, &run_start))
    return;
  if (!st.asked) {
    st.asked = true;
    fetcher_queue_message (&(struct ipc_header) { .type = IPC_STAGE_WANTED });
    return;
  }
  for (unsigned i = 0; i < STAGE_SPANS; i++) {
    uint64_t pos = next_start (frontier, run_start);
    uint32_t n;

    if (!st.span[i].held)
      continue;
    n = readahead_stored (pos, readahead_stage_max ());
    if (n == 0 || (n < STAGE_MIN_BYTES && n < http.f->size - pos))
      return;                   /* not enough stored yet: again as it comes */
    readahead_copy (st.span[i].at, pos, n);
    fetcher_queue_message (&(struct ipc_header) {
      .type = IPC_STAGED, .offset = pos, .length = n,
      .area_offset = (uint64_t) (st.span[i].at - fetcher_data_area),
    });
    debug ("staged %" PRIu32 " bytes at offset %" PRIu64, n, pos);
    st.span[i].held = false;
    st.staged_until = pos + n;
    st.staged_run = run_start;
  }
}

uint64_t
staging_ahead (uint64_t frontier, uint64_t run_start)
{
  return st.staged_run == run_start && st.staged_until > frontier
       ? st.staged_until - frontier : 0;
}
