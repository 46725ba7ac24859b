/*
 * fetcher-request-parse.c: the requests the front-end sends a fetcher,
 * decoded with the bounded reader (wire.h) and checked completely (see
 * fetcher-request-parse.h).  Every field is checked here although the
 * front-end checked it too: a front-end that sends anything malformed is
 * broken or compromised.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "data-path.h"
#include "fetcher-request-parse.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "limits-nbd.h"
#include "limits-staging.h"
#include "log.h"
#include "wire.h"

static const char *
type_name (uint16_t type)
{
  switch (type) {
  case IPC_READ: return "READ";
  case IPC_WRITE: return "WRITE";
  case IPC_FLUSH: return "FLUSH";
  case IPC_CACHE: return "CACHE";
  case IPC_STAGE_GIVE: return "STAGE_GIVE";
  default: return "unknown";
  }
}

/* Say why in why, and refuse. */
PRINTF_LIKE (3, 4) static int
refuse (char *why, size_t why_size, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (why, why_size < FETCHER_REQUEST_WHY_MAX ? why_size : FETCHER_REQUEST_WHY_MAX,
             fmt, ap);
  va_end (ap);
  return -1;
}

static int
decode (const uint8_t *raw, struct ipc_header *h)
{
  struct reader r;
  uint16_t type, flags;
  uint32_t payload_len, length, error;
  uint64_t id, offset, area_offset;

  reader_init (&r, raw, IPC_HEADER_SIZE);
  /* Field order of struct ipc_header. */
  if (reader_get_u16_ne (&r, &type) == -1 ||
      reader_get_u16_ne (&r, &flags) == -1 ||
      reader_get_u32_ne (&r, &payload_len) == -1 ||
      reader_get_u64_ne (&r, &id) == -1 ||
      reader_get_u64_ne (&r, &offset) == -1 ||
      reader_get_u32_ne (&r, &length) == -1 ||
      reader_get_u32_ne (&r, &error) == -1 ||
      reader_get_u64_ne (&r, &area_offset) == -1 ||
      reader_end (&r) == -1)
    return -1;
  *h = (struct ipc_header) {
    .type = type, .flags = flags, .payload_len = payload_len, .id = id, .offset = offset,
    .length = length, .error = error, .area_offset = area_offset,
  };
  return 0;
}

/* What the export lets a request of h's type do: the flags it may carry
 * in *allowed_flags, 0; or -1 when the export allows no such request. */
static int
type_allowed (const struct fetcher_request_rules *rules, const struct ipc_header *h,
              uint16_t *allowed_flags, char *why, size_t why_size)
{
  switch (h->type) {
  case IPC_READ:
  case IPC_CACHE:
    *allowed_flags = 0;
    return 0;
  case IPC_WRITE:
    if (!(rules->can & FETCHER_CAN_WRITE))
      return refuse (why, why_size, "WRITE to a read-only export");
    *allowed_flags = (rules->can & FETCHER_CAN_FUA) ? IPC_FLAG_FUA : 0;
    return 0;
  case IPC_STAGE_GIVE:
    if (!(rules->can & FETCHER_CAN_STAGE))
      return refuse (why, why_size, "STAGE_GIVE to a fetcher that does not stage");
    *allowed_flags = 0;
    return 0;
  case IPC_FLUSH:
    if (!(rules->can & FETCHER_CAN_FLUSH))
      return refuse (why, why_size, "FLUSH on an export that cannot flush");
    *allowed_flags = 0;
    return 0;
  default:
    return refuse (why, why_size, "unknown message type %u", h->type);
  }
}

/* The range and the data's place of a READ, WRITE or CACHE. */
static int
range_allowed (const struct fetcher_request_rules *rules, const struct ipc_header *h,
               char *why, size_t why_size)
{
  const uint16_t type = h->type;
  const uint32_t length = h->length;
  const uint64_t offset = h->offset, area_offset = h->area_offset;

  if (length < 1 || length > NBD_MAX_REQUEST_SIZE)
    return refuse (why, why_size, "%s of %" PRIu32 " bytes (allowed: 1 to %u)",
                   type_name (type), length, NBD_MAX_REQUEST_SIZE);
  /* offset + length <= size, written so that nothing can overflow:
   * size - offset is computed only once offset <= size. */
  if (offset > rules->size || length > rules->size - offset)
    return refuse (why, why_size, "%s of %" PRIu32 " bytes at offset %" PRIu64
                   " is beyond the end (size %" PRIu64 ")",
                   type_name (type), length, offset, rules->size);
  /* The data's place: inside the area, written so nothing can overflow
   * (length <= NBD_MAX_REQUEST_SIZE < DATA_AREA_SIZE was checked). */
  if (area_offset > DATA_AREA_SIZE - length)
    return refuse (why, why_size, "%s of %" PRIu32 " bytes at data area offset %" PRIu64
                   " is outside the area", type_name (type), length, area_offset);
  return 0;
}

/* A staging span given (back): a whole span, on a chunk's boundary inside
 * the area; offset, where the reads answered from it reached, inside the
 * export. */
static int
span_allowed (const struct fetcher_request_rules *rules, const struct ipc_header *h,
              char *why, size_t why_size)
{
  if (h->length != STAGE_SPAN_BYTES)
    return refuse (why, why_size, "STAGE_GIVE of %" PRIu32 " bytes (a span is %u)",
                   h->length, STAGE_SPAN_BYTES);
  if (h->area_offset % DATA_AREA_CHUNK != 0 || h->area_offset > DATA_AREA_SIZE - h->length)
    return refuse (why, why_size, "STAGE_GIVE at data area offset %" PRIu64
                   " is not a span of the area", h->area_offset);
  if (h->offset > rules->size)
    return refuse (why, why_size, "STAGE_GIVE says reads reached offset %" PRIu64
                   ", beyond the end (size %" PRIu64 ")", h->offset, rules->size);
  return 0;
}

int
fetcher_request_parse (const struct fetcher_request_rules *rules, const uint8_t *raw,
                       struct fetcher_request *req, char *why, size_t why_size)
{
  struct ipc_header h;
  uint16_t allowed_flags;
  const char *bad_form;

  if (decode (raw, &h) == -1)
    return refuse (why, why_size, "bad request header");   /* cannot happen: fixed size */
  /* Its form (ipc-table.c): a request type, no error, no payload (data
   * goes through the data area), FLUSH without a range, CACHE without a
   * place in the area. */
  bad_form = ipc_check (&h, 0, ROLE_FRONTEND, ROLE_FETCHER);
  if (bad_form != NULL)
    return refuse (why, why_size, "a message of type %u with %s", h.type, bad_form);
  if (type_allowed (rules, &h, &allowed_flags, why, why_size) == -1)
    return -1;
  if (h.flags & ~allowed_flags)
    return refuse (why, why_size, "%s with unknown flags 0x%x", type_name (h.type), h.flags);
  if (h.type == IPC_STAGE_GIVE) {
    if (span_allowed (rules, &h, why, why_size) == -1)
      return -1;
  }
  else if (h.type != IPC_FLUSH && range_allowed (rules, &h, why, why_size) == -1)
    return -1;

  req->type = h.type;
  req->flags = h.flags;
  req->id = h.id;
  req->offset = h.offset;
  req->length = h.length;
  req->data = h.type == IPC_FLUSH || h.type == IPC_CACHE ? NULL
    : rules->data_area + h.area_offset;
  req->auth_retried = false;
  return 0;
}
