/*
 * frontend-staging-model.c: staged reads (staging.c) as the driver's
 * fetcher sees them, for the front-end harnesses (frontend-fuzz.h).
 *
 * The driver keeps its own table of the spans the front-end lent its
 * fetcher.  A span is lent once and comes back only from being staged;
 * what comes back says what the reads answered from it asked.  The driver
 * decides on its own whether the front-end must take each IPC_STAGE_WANTED
 * and IPC_STAGED its fetcher sends (a read-only export's fetcher that may
 * stage, a span it holds, bytes inside the export) and checks that the
 * front-end took it or ended the fetcher.  A STAGED it must take fills
 * the span with the marks of the export bytes it names, so that a reply
 * from the span's wrong place, or from a span not staged, shows.
 */
#include <string.h>

#include "frontend-fuzz.h"
#include "ipc-messages.h"
#include "limits-staging.h"

void
fz_stage_reset (void)
{
  memset (fz.spans, 0, sizeof fz.spans);
  fz.nspans = 0;
}

static struct fz_span *
span_at (uint64_t area_offset)
{
  for (unsigned i = 0; i < fz.nspans; i++)
    if (fz.spans[i].area_offset == area_offset)
      return &fz.spans[i];
  return NULL;
}

/* Is the client's export read-only, as its fetcher and transmission
 * flags say (the condition for staging)? */
static bool
export_read_only (void)
{
  const struct client *c = fz.c;
  return fe.config.exports[c->export_index].readonly || !(c->fetcher_caps & FETCHER_CAN_WRITE);
}

static void
check_give_form (const struct ipc_header *h)
{
  const struct client *c = fz.c;

  FUZZ_CHECK ((c->fetcher_caps & FETCHER_CAN_STAGE) && export_read_only (),
              "a staging span lent to a fetcher that may not stage");
  FUZZ_CHECK (h->length == STAGE_SPAN_BYTES && h->payload_len == 0 && h->error == 0 &&
              h->flags == 0, "STAGE_GIVE of %u bytes, payload %u, error %u, flags 0x%x",
              h->length, h->payload_len, h->error, h->flags);
  FUZZ_CHECK (h->area_offset % DATA_AREA_CHUNK == 0 &&
              h->area_offset <= DATA_AREA_SIZE - STAGE_SPAN_BYTES,
              "STAGE_GIVE at data area offset %llu", (unsigned long long) h->area_offset);
  for (uint64_t a = h->area_offset; a < h->area_offset + STAGE_SPAN_BYTES; a += DATA_AREA_CHUNK)
    FUZZ_CHECK (c->area && c->area->used[a / DATA_AREA_CHUNK], "a staging span in a part "
                "of the data area the client does not hold");
  FUZZ_CHECK (h->offset <= fz.setup.size, "STAGE_GIVE's furthest byte %llu past the export",
              (unsigned long long) h->offset);
}

void
fz_stage_given (const struct ipc_header *h)
{
  struct fz_span *s;

  check_give_form (h);
  s = span_at (h->area_offset);
  if (s != NULL) {
    FUZZ_CHECK (s->state == FZ_SPAN_STAGED, "a staging span given to the fetcher that "
                "holds it already (area offset %llu)", (unsigned long long) h->area_offset);
    FUZZ_CHECK (h->id == s->asked && h->offset == s->furthest, "a span comes back with "
                "%llu bytes asked up to %llu; the reads answered from it asked %llu up to %llu",
                (unsigned long long) h->id, (unsigned long long) h->offset,
                (unsigned long long) s->asked, (unsigned long long) s->furthest);
  }
  else {
    for (unsigned i = 0; i < fz.nspans; i++)
      FUZZ_CHECK (fz.spans[i].area_offset + STAGE_SPAN_BYTES <= h->area_offset ||
                  h->area_offset + STAGE_SPAN_BYTES <= fz.spans[i].area_offset,
                  "staging spans overlap");
    FUZZ_CHECK (fz.nspans < STAGE_SPANS, "more than %u staging spans lent", STAGE_SPANS);
    FUZZ_CHECK (h->id == 0 && h->offset == 0, "a span lent the first time with reads "
                "answered from it");
    s = &fz.spans[fz.nspans++];
    s->area_offset = h->area_offset;
  }
  s->state = FZ_SPAN_HELD;
  s->offset = s->asked = s->furthest = 0;
  s->length = 0;
}

/* Does the front-end have to take this STAGED (its form checked)? */
static struct fz_span *
stageable (const struct ipc_header *h)
{
  struct fz_span *s = span_at (h->area_offset);
  uint64_t size = fz.setup.size;

  if (s == NULL || s->state != FZ_SPAN_HELD || h->id != 0)
    return NULL;
  if (h->length < 1 || h->length > STAGE_SPAN_BYTES || h->length > size ||
      h->offset > size - h->length)
    return NULL;
  return s;
}

bool
fz_stage_before (const struct ipc_header *h)
{
  const struct client *c = fz.c;
  struct fz_span *s;
  uint8_t *p;

  if (c->dead || c->fetcher_fd < 0 || !c->fetcher_open ||
      !(c->fetcher_caps & FETCHER_CAN_STAGE) || !export_read_only () ||
      h->payload_len != 0 || h->error != 0 || h->flags != 0)
    return false;
  if (h->type == IPC_STAGE_WANTED)
    return h->id == 0 && h->offset == 0 && h->length == 0 && h->area_offset == 0;
  s = stageable (h);
  if (s == NULL)
    return false;
  p = c->area->base + s->area_offset;
  for (uint32_t i = 0; i < h->length; i++)
    p[i] = fz_mark_byte (h->offset + i);
  s->state = FZ_SPAN_STAGED;
  s->offset = h->offset;
  s->length = h->length;
  return true;
}

void
fz_stage_after (const struct ipc_header *h, bool expected)
{
  const struct client *c = fz.c;

  if (c->dead)
    return;
  FUZZ_CHECK (expected == (c->fetcher_fd >= 0), "the front-end %s the fetcher's %s "
              "(id %llu, offset %llu, %u bytes, area offset %llu)",
              expected ? "refused" : "took", h->type == IPC_STAGED ? "STAGED" : "STAGE_WANTED",
              (unsigned long long) h->id, (unsigned long long) h->offset, h->length,
              (unsigned long long) h->area_offset);
}

void
fz_stage_answered (uint64_t area_offset, uint64_t offset, uint32_t count)
{
  for (unsigned i = 0; i < fz.nspans; i++) {
    struct fz_span *s = &fz.spans[i];
    if (area_offset < s->area_offset || area_offset >= s->area_offset + STAGE_SPAN_BYTES)
      continue;
    FUZZ_CHECK (s->state == FZ_SPAN_STAGED, "a read answered from a span not staged");
    FUZZ_CHECK (offset >= s->offset && count <= s->length &&
                offset - s->offset <= s->length - count &&
                area_offset - s->area_offset == offset - s->offset,
                "a read of %u bytes at %llu answered from another place of the span "
                "staged with %u bytes at %llu", count, (unsigned long long) offset,
                s->length, (unsigned long long) s->offset);
    s->asked += count;
    if (offset + count > s->furthest)
      s->furthest = offset + count;
    return;
  }
  FUZZ_CHECK (false, "a read answered from the data area outside any staging span");
}
