/*
 * staging.c: staged reads, the front-end's side.
 *
 * A fetcher that follows a forward reader asks for spans of the client's
 * data area (IPC_STAGE_WANTED); the front-end lends STAGE_SPANS of them
 * (IPC_STAGE_GIVE), once, if the client's memory leaves room.  The
 * fetcher copies stored bytes just ahead of the reader into a span it
 * holds and names them (IPC_STAGED).  From then on a READ that lies
 * wholly inside a staged span is answered here: its bytes are copied into
 * the client's output queue at once, so the span may go back to the
 * fetcher whatever the client's socket does.  A span goes back
 * (IPC_STAGE_GIVE, with how far its reads went, which the fetcher counts
 * as the reader's progress) once a read starts past its end, or when a
 * read it cannot answer lies far from it (the reader went elsewhere).
 *
 * The fetcher is no more trusted here than elsewhere: it may stage only
 * into a span it holds, only bytes inside the export, and a message that
 * breaks that ends it (transmission.c).  What it stages is what it could
 * have answered the same reads with; a span it writes while it is staged
 * only garbles replies to its own client, as a wrong reply would.
 */
#include <string.h>

#include "frontend.h"
#include "limits-staging.h"
#include "request-parse.h"
#include "staging.h"

static void
give_back (struct client *c, struct stage *s)
{
  struct ipc_header h = {
    .type = IPC_STAGE_GIVE, .id = s->asked, .offset = s->furthest,
    .length = STAGE_SPAN_BYTES,
    .area_offset = (uint64_t) s->span.first * DATA_AREA_CHUNK,
  };

  outq_push_copy (&c->to_fetcher, &h, sizeof h);
  s->state = STAGE_AT_FETCHER;
  s->offset = s->asked = s->furthest = 0;
  s->length = 0;
}

/* Lend the spans, all or none, beyond the client's budget for requests
 * (so that a client that pipelines keeps all of it for its reads), if
 * that budget is large enough for STAGE_SPANS more to be small beside it.
 * The requests hold at most MAX_CLIENT_MEMORY = DATA_AREA_SIZE / 2 of the
 * area, so the spans find room unless the requests left it in pieces. */
static void
lend (struct client *c)
{
  unsigned i;

  if (c->area == NULL || !(c->fetcher_caps & FETCHER_CAN_STAGE) ||
      c->stages[0].state != STAGE_NONE ||
      (uint64_t) c->area->budget * DATA_AREA_CHUNK < STAGE_MIN_CLIENT_MEMORY)
    return;
  for (i = 0; i < STAGE_SPANS; i++)
    if (area_take_beyond_budget (c->area, STAGE_SPAN_BYTES, &c->stages[i].span) == -1) {
      while (i-- > 0)
        area_release (&c->stages[i].span);
      return;                           /* no run of chunks free: no staging */
    }
  for (i = 0; i < STAGE_SPANS; i++)
    give_back (c, &c->stages[i]);
}

/* Which span lies at area_offset: its index, or -1. */
static int
stage_at (const struct client *c, uint64_t area_offset)
{
  for (unsigned i = 0; i < STAGE_SPANS; i++)
    if (c->stages[i].state != STAGE_NONE &&
        (uint64_t) c->stages[i].span.first * DATA_AREA_CHUNK == area_offset)
      return (int) i;
  return -1;
}

bool
staging_message_ok (const struct client *c, const struct ipc_header *h)
{
  int i;

  /* Only a read-only export's: bytes staged before a write would be
   * stale after it. */
  if (!(c->fetcher_caps & FETCHER_CAN_STAGE) || !(c->eflags & NBD_FLAG_READ_ONLY))
    return false;
  if (h->type == IPC_STAGE_WANTED)
    return true;
  /* IPC_STAGED: into a span it holds, bytes inside the export (written
   * so that nothing overflows: length <= export_size first). */
  i = stage_at (c, h->area_offset);
  return i >= 0 && c->stages[i].state == STAGE_AT_FETCHER &&
    h->length >= 1 && h->length <= STAGE_SPAN_BYTES &&
    h->length <= c->export_size && h->offset <= c->export_size - h->length;
}

void
staging_message (struct client *c, const struct ipc_header *h)
{
  struct stage *s;
  int i;

  if (h->type == IPC_STAGE_WANTED) {
    lend (c);
    return;
  }
  i = stage_at (c, h->area_offset);     /* checked by staging_message_ok */
  if (i < 0)
    return;
  s = &c->stages[i];
  s->state = STAGE_AT_FRONTEND;
  s->offset = h->offset;
  s->length = h->length;
  s->asked = s->furthest = 0;
}

/* Is [offset, end) more than a span's size away from s? */
static bool
far_from (const struct stage *s, uint64_t offset, uint64_t end)
{
  return end + STAGE_SPAN_BYTES < s->offset ||
    offset > s->offset + s->length + STAGE_SPAN_BYTES;
}

bool
staging_answer (struct client *c, const struct client_request *req, uint64_t started_us)
{
  /* Checked against the export's size: no overflow. */
  const uint64_t offset = req->offset, end = req->offset + req->count;
  struct stage *hit = NULL;

  for (unsigned i = 0; i < STAGE_SPANS; i++) {
    struct stage *s = &c->stages[i];
    if (s->state == STAGE_AT_FRONTEND && offset >= s->offset &&
        end <= s->offset + s->length)
      hit = s;
  }
  if (hit != NULL) {
    transmission_reply_copied (c, req, area_address (&hit->span) + (offset - hit->offset),
                               started_us);
    hit->asked += req->count;
    if (end > hit->furthest)
      hit->furthest = end;
  }
  /* The spans it passed go back, and with a read elsewhere, the spans
   * far from it. */
  for (unsigned i = 0; i < STAGE_SPANS; i++) {
    struct stage *s = &c->stages[i];
    if (s->state == STAGE_AT_FRONTEND &&
        (offset >= s->offset + s->length || (hit == NULL && far_from (s, offset, end))))
      give_back (c, s);
  }
  return hit != NULL;
}

void
staging_drop (struct client *c)
{
  for (unsigned i = 0; i < STAGE_SPANS; i++) {
    area_release (&c->stages[i].span);
    memset (&c->stages[i], 0, sizeof c->stages[i]);
  }
}
