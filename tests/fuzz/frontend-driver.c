/* frontend-driver.c: what lies below the client code, and the world around one client,
 * for the front-end harnesses (see frontend-fuzz.h). */
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config-wire.h"
#include "data-path.h"
#include "frontend-fuzz.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "limits-clients.h"
#include "limits-handshake.h"
#include "limits-nbd.h"
#include "limits-queues.h"

struct frontend fe;
struct fz_world fz;

/* ---- What the client sent: the driver's own reading. ---- */

/* A request as the client sent it.  Its cookie is its index + 1: the
 * driver writes that into every request header before the front-end sees
 * it, so a reply names exactly one request. */
struct fz_request {
  uint16_t type, flags;
  uint64_t offset;
  uint32_t count;
  bool committed;             /* consumed by the front-end */
  bool answered;
  bool at_fetcher;            /* handed to the fetcher */
  uint64_t payload_hash;      /* WRITE: of the data the client sent */
  uint32_t payload_got;
};
#define FZ_MAX_REQUESTS 4096
static struct fz_request requests[FZ_MAX_REQUESTS];
static unsigned nrequests;

static uint64_t
hash_bytes (uint64_t h, const uint8_t *p, size_t n)
{
  size_t i;
  for (i = 0; i < n; i++)
    h = (h ^ p[i]) * UINT64_C (0x100000001b3);
  return h;
}
#define HASH_START UINT64_C (0xcbf29ce484222325)

static uint64_t
get_be (const uint8_t *p, unsigned n)
{
  uint64_t v = 0;
  unsigned i;
  for (i = 0; i < n; i++)
    v = v << 8 | p[i];
  return v;
}

/* ---- The output to the client, checked as it is queued. ---- */

enum out_phase { OUT_GREETING, OUT_OPTIONS, OUT_TRANSMISSION, OUT_ENDED };

#define OUT_MAX_PAYLOAD (4 + 2 * NBD_MAX_STRING + 64)
static struct {
  enum out_phase phase;
  uint8_t hdr[NBD_STRUCTURED_REPLY_SIZE];
  size_t hdr_len, hdr_want;
  uint8_t payload[OUT_MAX_PAYLOAD];
  size_t payload_len, payload_want;
  /* What the payload belongs to. */
  uint32_t reply;             /* option reply type, or chunk type */
  struct fz_request *req;
  /* Read data still to come, and where the driver's marks are. */
  uint64_t data_left;
  uint64_t data_offset;
  /* Negotiation. */
  uint32_t option;            /* the option being answered */
  bool option_final;          /* it had its final reply */
  bool any_option;
  bool no_zeroes;
  enum { PAYLOAD_OPTION, PAYLOAD_CHUNK, PAYLOAD_ZEROES } payload_kind;
} out;

/* The client's side as the driver reads it: the WRITE whose data is being
 * sent, or the bytes of a refused WRITE still to be skipped. */
static struct fz_request *collecting;
static uint64_t discard_left;

/* IPC_PIPE_DISCARDs the front-end took that no reply to a read the
 * fetcher was asked for has balanced yet: never more than the requests in
 * flight (transmission.c's bound, reckoned here from the driver's own
 * records). */
static unsigned discards_open;

static struct fz_request *
request_of_cookie (uint64_t cookie)
{
  struct fz_request *r;
  FUZZ_CHECK (cookie >= 1 && cookie <= nrequests, "reply for cookie %llu, which "
              "no request had", (unsigned long long) cookie);
  r = &requests[cookie - 1];
  FUZZ_CHECK (r->committed && !r->answered, "second reply, or a reply to a request "
              "not taken (cookie %llu)", (unsigned long long) cookie);
  r->answered = true;
  if (r->type == NBD_CMD_READ && r->at_fetcher && discards_open > 0)
    discards_open--;
  return r;
}

static bool
known_nbd_error (uint32_t e)
{
  switch (e) {
  case NBD_EPERM: case NBD_EIO: case NBD_ENOMEM: case NBD_EINVAL: case NBD_ENOSPC:
  case NBD_EOVERFLOW: case NBD_ENOTSUP: case NBD_ESHUTDOWN:
    return true;
  default:
    return false;
  }
}

/* The transmission flags a client must be told for the export chosen. */
static void
check_export_flags (uint16_t flags)
{
  const struct client *c = fz.c;
  bool ro = fe.config.exports[c->export_index].readonly ||
    !(c->fetcher_caps & FETCHER_CAN_WRITE);
  uint16_t want = NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_CACHE;

  if (ro)
    want |= NBD_FLAG_READ_ONLY;
  else
    want |= ((c->fetcher_caps & FETCHER_CAN_FLUSH) ? NBD_FLAG_SEND_FLUSH : 0) |
      ((c->fetcher_caps & FETCHER_CAN_FUA) ? NBD_FLAG_SEND_FUA : 0);
  if (c->structured)
    want |= NBD_FLAG_SEND_DF;
  if (fe.config.flags & FRONTEND_MULTI_CONN)
    want |= NBD_FLAG_CAN_MULTI_CONN;
  FUZZ_CHECK (flags == want, "export flags 0x%x, expected 0x%x", flags, want);
}

static void
check_info (const uint8_t *p, size_t len)
{
  const struct export_info *e = &fe.config.exports[fz.c->export_index];
  uint16_t type;

  FUZZ_CHECK (out.option == NBD_OPT_INFO || out.option == NBD_OPT_GO,
              "INFO reply to option %u", out.option);
  FUZZ_CHECK (len >= 2, "INFO reply of %zu bytes", len);
  type = (uint16_t) get_be (p, 2);
  switch (type) {
  case NBD_INFO_EXPORT:
    FUZZ_CHECK (len == 12, "INFO_EXPORT of %zu bytes", len);
    FUZZ_CHECK (get_be (p + 2, 8) == fz.setup.size, "export size");
    check_export_flags ((uint16_t) get_be (p + 10, 2));
    break;
  case NBD_INFO_NAME:
    FUZZ_CHECK (len == 2 + strlen (e->name) && memcmp (p + 2, e->name, len - 2) == 0,
                "INFO_NAME is not the export's name");
    break;
  case NBD_INFO_DESCRIPTION:
    FUZZ_CHECK (len == 2 + strlen (e->description) &&
                memcmp (p + 2, e->description, len - 2) == 0,
                "INFO_DESCRIPTION is not the export's");
    break;
  case NBD_INFO_BLOCK_SIZE: {
    uint32_t min, pref, max;
    FUZZ_CHECK (len == 14, "INFO_BLOCK_SIZE of %zu bytes", len);
    min = (uint32_t) get_be (p + 2, 4);
    pref = (uint32_t) get_be (p + 6, 4);
    max = (uint32_t) get_be (p + 10, 4);
    FUZZ_CHECK (min >= 1 && (min & (min - 1)) == 0 && min <= pref && pref <= max,
                "block sizes %u %u %u", min, pref, max);
    break;
  }
  default:
    FUZZ_CHECK (false, "unknown INFO type %u sent", type);
  }
}

/* A whole option reply (header in out.hdr, payload in out.payload). */
static void
option_reply_done (void)
{
  const uint8_t *p = out.payload;
  size_t len = out.payload_len;
  uint32_t reply = out.reply;

  if (reply & NBD_REP_FLAG_ERROR) {
    FUZZ_CHECK (reply >= NBD_REP_ERR_UNSUP && reply <= NBD_REP_ERR_TOO_BIG,
                "unknown error reply 0x%x", reply);
    out.option_final = true;
    return;
  }
  switch (reply) {
  case NBD_REP_ACK:
    FUZZ_CHECK (len == 0, "ACK with %zu bytes", len);
    out.option_final = true;
    if (out.option == NBD_OPT_GO)
      out.phase = OUT_TRANSMISSION;
    else if (out.option == NBD_OPT_ABORT)
      out.phase = OUT_ENDED;
    break;
  case NBD_REP_SERVER:
    FUZZ_CHECK (out.option == NBD_OPT_LIST, "SERVER reply to option %u", out.option);
    FUZZ_CHECK (len >= 4 && get_be (p, 4) <= len - 4, "SERVER reply's name length");
    break;
  case NBD_REP_INFO:
    check_info (p, len);
    break;
  case NBD_REP_META_CONTEXT:
    FUZZ_CHECK (out.option == NBD_OPT_LIST_META_CONTEXT ||
                out.option == NBD_OPT_SET_META_CONTEXT, "META_CONTEXT reply to %u",
                out.option);
    FUZZ_CHECK (len == 4 + strlen (NBD_META_BASE_ALLOCATION) &&
                memcmp (p + 4, NBD_META_BASE_ALLOCATION, len - 4) == 0,
                "META_CONTEXT reply names another context");
    break;
  default:
    FUZZ_CHECK (false, "unknown option reply type %u", reply);
  }
}

static void
chunk_payload_done (void)
{
  const uint8_t *p = out.payload;
  struct fz_request *r = out.req;

  switch (out.reply) {
  case NBD_REPLY_TYPE_ERROR:
    FUZZ_CHECK (known_nbd_error ((uint32_t) get_be (p, 4)) && get_be (p + 4, 2) == 0,
                "error chunk");
    break;
  case NBD_REPLY_TYPE_BLOCK_STATUS:
    FUZZ_CHECK (get_be (p, 4) == 1, "block status for context %u",
                (unsigned) get_be (p, 4));
    FUZZ_CHECK (get_be (p + 4, 4) >= 1 && get_be (p + 4, 4) <= r->count &&
                get_be (p + 8, 4) == 0, "block status extent");
    break;
  case NBD_REPLY_TYPE_OFFSET_DATA:
    FUZZ_CHECK (get_be (p, 8) == r->offset, "read chunk at another offset");
    out.data_left = r->count;
    out.data_offset = r->offset;
    break;
  }
}

/* A whole header (out.hdr, out.hdr_want bytes): returns the payload size
 * that follows. */
static size_t
header_done (void)
{
  const uint8_t *h = out.hdr;

  switch (out.phase) {
  case OUT_GREETING:
    FUZZ_CHECK (get_be (h, 8) == NBD_MAGIC && get_be (h + 8, 8) == NBD_IHAVEOPT &&
                get_be (h + 16, 2) == (NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES),
                "greeting");
    out.phase = OUT_OPTIONS;
    return 0;
  case OUT_OPTIONS:
    FUZZ_CHECK (out.any_option && !out.option_final, "option reply with no option "
                "waiting for one");
    if (out.option == NBD_OPT_EXPORT_NAME) {
      FUZZ_CHECK (get_be (h, 8) == fz.setup.size, "EXPORT_NAME reply's size");
      check_export_flags ((uint16_t) get_be (h + 8, 2));
      out.option_final = true;
      out.phase = OUT_TRANSMISSION;
      out.payload_kind = PAYLOAD_ZEROES;
      return out.no_zeroes ? 0 : NBD_EXPORT_NAME_ZEROES;
    }
    FUZZ_CHECK (get_be (h, 8) == NBD_REP_MAGIC, "option reply magic");
    FUZZ_CHECK (get_be (h + 8, 4) == out.option, "reply for option %u while answering %u",
                (unsigned) get_be (h + 8, 4), out.option);
    out.reply = (uint32_t) get_be (h + 12, 4);
    out.payload_kind = PAYLOAD_OPTION;
    FUZZ_CHECK (get_be (h + 16, 4) <= OUT_MAX_PAYLOAD, "option reply of %u bytes",
                (unsigned) get_be (h + 16, 4));
    return (size_t) get_be (h + 16, 4);
  case OUT_TRANSMISSION:
    if (get_be (h, 4) == NBD_SIMPLE_REPLY_MAGIC) {
      struct fz_request *r = request_of_cookie (get_be (h + 8, 8));
      uint32_t error = (uint32_t) get_be (h + 4, 4);
      FUZZ_CHECK (!fz.c->structured, "simple reply after structured replies were chosen");
      FUZZ_CHECK (error == 0 || known_nbd_error (error), "error %u", error);
      FUZZ_CHECK (error != 0 || r->type != NBD_CMD_BLOCK_STATUS, "block status "
                  "answered without structured replies");
      out.req = r;
      if (error == 0 && r->type == NBD_CMD_READ) {
        out.data_left = r->count;
        out.data_offset = r->offset;
      }
      return 0;
    }
    {
      struct fz_request *r;
      uint16_t flags = (uint16_t) get_be (h + 4, 2), type = (uint16_t) get_be (h + 6, 2);
      uint32_t len = (uint32_t) get_be (h + 16, 4);
      FUZZ_CHECK (get_be (h, 4) == NBD_STRUCTURED_REPLY_MAGIC, "reply magic");
      r = request_of_cookie (get_be (h + 8, 8));
      out.payload_kind = PAYLOAD_CHUNK;
      FUZZ_CHECK (fz.c->structured, "structured reply not negotiated");
      FUZZ_CHECK (flags == NBD_REPLY_FLAG_DONE, "chunk flags 0x%x", flags);
      out.reply = type;
      out.req = r;
      switch (type) {
      case NBD_REPLY_TYPE_NONE:
        FUZZ_CHECK (len == 0 && r->type != NBD_CMD_READ && r->type != NBD_CMD_BLOCK_STATUS,
                    "empty success for command %u", r->type);
        return 0;
      case NBD_REPLY_TYPE_ERROR:
        FUZZ_CHECK (len == 6, "error chunk of %u bytes", len);
        return 6;
      case NBD_REPLY_TYPE_BLOCK_STATUS:
        FUZZ_CHECK (r->type == NBD_CMD_BLOCK_STATUS && len == 12, "block status chunk");
        return 12;
      case NBD_REPLY_TYPE_OFFSET_DATA:
        FUZZ_CHECK (r->type == NBD_CMD_READ && len == 8 + (uint64_t) r->count,
                    "read chunk of %u bytes for a %u byte read", len, r->count);
        return 8;               /* the data follows as data, not payload */
      default:
        FUZZ_CHECK (false, "chunk type %u", type);
      }
    }
    return 0;
  case OUT_ENDED:
    break;
  }
  FUZZ_CHECK (false, "output after the client's ABORT was acknowledged");
  return 0;
}

static size_t
header_size (void)
{
  switch (out.phase) {
  case OUT_GREETING:
    return NBD_GREETING_SIZE;
  case OUT_OPTIONS:
    return out.option == NBD_OPT_EXPORT_NAME ? NBD_EXPORT_NAME_REPLY_SIZE
      : NBD_OPTION_REPLY_HEADER_SIZE;
  case OUT_TRANSMISSION:
    /* The magic says which. */
    if (out.hdr_len < 4)
      return 4;
    return get_be (out.hdr, 4) == NBD_SIMPLE_REPLY_MAGIC ? NBD_SIMPLE_REPLY_SIZE
      : NBD_STRUCTURED_REPLY_SIZE;
  default:
    return 1;
  }
}

static void
payload_done (void)
{
  size_t i;

  switch (out.payload_kind) {
  case PAYLOAD_ZEROES:
    for (i = 0; i < out.payload_len; i++)
      FUZZ_CHECK (out.payload[i] == 0, "EXPORT_NAME padding not zero");
    break;
  case PAYLOAD_OPTION:
    option_reply_done ();
    break;
  case PAYLOAD_CHUNK:
    chunk_payload_done ();
    break;
  }
  out.hdr_len = out.hdr_want = 0;
  out.payload_len = out.payload_want = 0;
}

/* Bytes queued for the client. */
static void
out_bytes (const uint8_t *p, size_t len)
{
  while (len > 0) {
    FUZZ_CHECK (out.data_left == 0, "%zu bytes of a reply where read data belongs", len);
    if (out.payload_want > out.payload_len) {
      size_t n = out.payload_want - out.payload_len;
      if (n > len)
        n = len;
      memcpy (out.payload + out.payload_len, p, n);
      out.payload_len += n;
      p += n;
      len -= n;
      if (out.payload_len == out.payload_want)
        payload_done ();
      continue;
    }
    out.hdr[out.hdr_len++] = *p++;
    len--;
    if (out.hdr_len == header_size ()) {
      enum out_phase before = out.phase;
      out.hdr_want = out.hdr_len;
      out.payload_kind = PAYLOAD_ZEROES;     /* none, unless the header says */
      out.payload_want = header_done ();
      out.payload_len = 0;
      if (out.payload_want == 0) {
        /* No payload: an ACK or an error without message ends here. */
        if (before == OUT_OPTIONS && out.payload_kind == PAYLOAD_OPTION)
          option_reply_done ();
        out.hdr_len = out.hdr_want = 0;
      }
    }
  }
}

/* Read data queued for the client from the data area (p) or a data pipe
 * (p NULL). */
static void
out_data (const uint8_t *p, size_t len)
{
  FUZZ_CHECK (out.hdr_len == 0 && out.payload_want == 0 && len <= out.data_left,
              "%zu bytes of read data where a reply header belongs", len);
  if (p != NULL) {
    size_t i, marks = len < FZ_MARK_BYTES ? len : FZ_MARK_BYTES;
    for (i = 0; i < marks; i++) {
      FUZZ_CHECK (p[i] == fz_mark_byte (out.data_offset + i), "read data from "
                  "another place (byte %zu)", i);
      FUZZ_CHECK (p[len - 1 - i] == fz_mark_byte (out.data_offset + len - 1 - i),
                  "read data from another place (byte %zu from the end)", i);
    }
  }
  out.data_left -= len;
  out.data_offset += len;
}

/* A read's data copied into the queue from the data area: answered by
 * the front-end from a staged span, never asked of the fetcher, every
 * byte the export's at its offsets. */
static void
out_copied (const uint8_t *p, size_t len)
{
  struct fz_request *r = out.req;
  const uint8_t *base = fz.c->area->base;

  FUZZ_CHECK (r != NULL && r->type == NBD_CMD_READ && out.data_left == r->count &&
              out.data_offset == r->offset && len == r->count,
              "%zu bytes copied from the data area where no read's data belongs", len);
  FUZZ_CHECK (!r->at_fetcher, "a read asked of the fetcher answered from a staged span");
  FUZZ_CHECK (p >= base && len <= DATA_AREA_SIZE && (size_t) (p - base) <= DATA_AREA_SIZE - len,
              "read data copied from beyond the data area");
  fz_stage_answered ((uint64_t) (p - base), r->offset, r->count);
  for (size_t i = 0; i < len; i++)
    FUZZ_CHECK (p[i] == fz_mark_byte (r->offset + i), "a staged read's byte %zu is not "
                "the export's", i);
  out_data (p, len);
}

/* ---- The fetcher's side: what it receives, and its answers. ---- */

/* A request header queued for the fetcher: what fetcher.c accepts, and
 * what the client asked for. */
static void
fetcher_receives (const struct ipc_header *h)
{
  const struct client *c = fz.c;
  const struct inflight *s;
  struct fz_request *r;
  unsigned i;

  FUZZ_CHECK (c->fetcher_fd >= 0 && c->fetcher_open, "request for no fetcher");
  if (h->type == IPC_STAGE_GIVE) {
    fz_stage_given (h);
    return;
  }
  /* A request's id names its slot (checked below to be one). */
  FUZZ_CHECK ((h->id & ((1u << IPC_ID_SLOT_BITS) - 1)) < MAX_INFLIGHT_PER_CLIENT,
              "request id %llu names no slot", (unsigned long long) h->id);
  s = &c->slots[h->id & ((1u << IPC_ID_SLOT_BITS) - 1)];
  FUZZ_CHECK (h->payload_len == 0 && h->error == 0, "request with payload or error");
  for (i = 0; i < fz.nsent; i++)
    FUZZ_CHECK (fz.sent[i].id != h->id, "request id %llu used twice",
                (unsigned long long) h->id);
  FUZZ_CHECK (fz.nsent < FZ_MAX_SENT, "more requests in flight than slots");
  switch (h->type) {
  case IPC_READ:
    FUZZ_CHECK (h->flags == 0, "READ flags");
    break;
  case IPC_WRITE:
    FUZZ_CHECK (c->fetcher_caps & FETCHER_CAN_WRITE, "WRITE to a read-only fetcher");
    FUZZ_CHECK (!fe.config.exports[c->export_index].readonly, "WRITE to a read-only export");
    FUZZ_CHECK ((h->flags & ~IPC_FLAG_FUA) == 0 &&
                (!(h->flags & IPC_FLAG_FUA) || (c->fetcher_caps & FETCHER_CAN_FUA)),
                "WRITE flags");
    break;
  case IPC_FLUSH:
    FUZZ_CHECK ((c->fetcher_caps & FETCHER_CAN_FLUSH) && h->flags == 0 &&
                h->offset == 0 && h->length == 0 && h->area_offset == 0, "FLUSH");
    break;
  case IPC_CACHE:
    FUZZ_CHECK (h->flags == 0 && h->area_offset == 0, "CACHE flags or data area offset");
    break;
  default:
    FUZZ_CHECK (false, "request type %u to the fetcher", h->type);
  }
  if (h->type != IPC_FLUSH) {
    uint64_t a;
    FUZZ_CHECK (h->length >= 1 && h->length <= NBD_MAX_REQUEST_SIZE &&
                h->offset <= fz.setup.size && h->length <= fz.setup.size - h->offset,
                "request of %u bytes at %llu, export of %llu", h->length,
                (unsigned long long) h->offset, (unsigned long long) fz.setup.size);
    FUZZ_CHECK (h->area_offset % DATA_AREA_CHUNK == 0 &&
                h->area_offset <= DATA_AREA_SIZE - h->length, "data area offset");
    for (a = h->area_offset; h->type != IPC_CACHE && a < h->area_offset + h->length;
         a += DATA_AREA_CHUNK)
      FUZZ_CHECK (c->area && c->area->used[a / DATA_AREA_CHUNK], "request's data in "
                  "a part of the data area it does not hold");
  }
  /* The client's request this answers, by the cookie the slot keeps. */
  FUZZ_CHECK (s->used && s->ipc_id == h->id && s->cookie >= 1 && s->cookie <= nrequests,
              "request id names no waiting slot");
  r = &requests[s->cookie - 1];
  r->at_fetcher = true;
  FUZZ_CHECK (r->committed && !r->answered && r->offset == h->offset &&
              (h->type == IPC_FLUSH ? r->type == NBD_CMD_FLUSH && r->count == 0
               : h->type == IPC_CACHE
               ? r->type == NBD_CMD_CACHE &&
                 h->length == (r->count < NBD_MAX_REQUEST_SIZE ? r->count
                                                               : NBD_MAX_REQUEST_SIZE)
               : r->count == h->length &&
               r->type == (h->type == IPC_READ ? NBD_CMD_READ : NBD_CMD_WRITE)),
              "the fetcher is asked something other than the client asked");
  if (h->type == IPC_WRITE) {
    const uint8_t *data = c->area->base + h->area_offset;
    FUZZ_CHECK (r->payload_got == r->count &&
                hash_bytes (HASH_START, data, h->length) == r->payload_hash,
                "a WRITE's data in the area is not what the client sent");
    FUZZ_CHECK ((h->flags & IPC_FLAG_FUA) == (r->flags & NBD_CMD_FLAG_FUA ? IPC_FLAG_FUA : 0),
                "FUA lost or added");
  }
  if (h->type == IPC_READ) {
    uint8_t *data = c->area->base + h->area_offset;
    size_t j, marks = h->length < FZ_MARK_BYTES ? h->length : FZ_MARK_BYTES;
    for (j = 0; j < marks; j++) {
      data[j] = fz_mark_byte (h->offset + j);
      data[h->length - 1 - j] = fz_mark_byte (h->offset + h->length - 1 - j);
    }
  }
  fz.sent[fz.nsent++] = (struct fz_sent) {
    .id = h->id, .type = h->type, .flags = h->flags, .offset = h->offset,
    .length = h->length, .area_offset = h->area_offset,
  };
}

/* Let the front-end read everything the fetcher wrote. */
static void
fetcher_drain (void)
{
  struct client *c = fz.c;

  while (!c->dead && c->fetcher_fd >= 0) {
    int avail = 0;
    if (ioctl (c->fetcher_fd, FIONREAD, &avail) == -1 || avail == 0)
      break;
    if (transmission_read_fetcher (c) == -1)
      break;
  }
}

/* The fetcher's bytes framed as the front-end frames them (a header,
 * then its payload), to find the staging messages among them, whichever
 * operation wrote them. */
static struct fetcher_stream {
  uint8_t hdr[IPC_HEADER_SIZE];
  size_t hdr_len;
  uint64_t payload_left;
} stream;

/* How many of the n bytes at p to send next: those before a staging
 * message's last byte, or that byte alone (*staging then holds the
 * message), or all n. */
static size_t
stream_advance (const uint8_t *p, size_t n, struct ipc_header *staging, bool *found)
{
  size_t i = 0;

  *found = false;
  while (i < n) {
    if (stream.payload_left > 0) {
      size_t k = n - i < stream.payload_left ? n - i : (size_t) stream.payload_left;
      stream.payload_left -= k;
      i += k;
      continue;
    }
    if (stream.hdr_len < IPC_HEADER_SIZE - 1) {
      stream.hdr[stream.hdr_len++] = p[i++];
      continue;
    }
    {
      struct ipc_header h;
      stream.hdr[IPC_HEADER_SIZE - 1] = p[i];
      ipc_decode_header (stream.hdr, &h);
      if (h.type == IPC_STAGE_WANTED || h.type == IPC_STAGED) {
        if (i > 0)
          return i;                     /* what comes before, first */
        *staging = h;
        *found = true;
      }
      stream.hdr_len = 0;
      stream.payload_left = h.payload_len;
      i++;
      if (*found)
        return i;
    }
  }
  return n;
}

void
fz_fetcher_write (const void *data, size_t len)
{
  const uint8_t *p = data;

  /* In pieces the socket takes at once, read by the front-end each time;
   * a staging message's last byte alone, with the driver's model acting
   * before and checking after. */
  while (len > 0 && fz.fetcher_peer >= 0) {
    struct ipc_header h;
    bool found, expected = false;
    struct fetcher_stream before = stream;
    size_t n = stream_advance (p, len < 4096 ? len : 4096, &h, &found);
    ssize_t r;
    if (found)
      expected = fz_stage_before (&h);
    r = send (fz.fetcher_peer, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r < (ssize_t) n) {
      bool again;
      stream = before;                  /* only what was sent is framed */
      if (r > 0)
        stream_advance (p, (size_t) r, &h, &again);
    }
    if (r <= 0)
      break;                            /* the front-end closed its end */
    p += r;
    len -= (size_t) r;
    fetcher_drain ();
    if (found && r == (ssize_t) n)
      fz_stage_after (&h, expected);
  }
}

void
fz_fetcher_exit (void)
{
  if (fz.fetcher_peer < 0)
    return;
  close (fz.fetcher_peer);
  fz.fetcher_peer = -1;
  if (!fz.c->dead && fz.c->fetcher_fd >= 0)
    transmission_read_fetcher (fz.c);   /* sees the end of file */
}

void
fz_fetcher_answer (unsigned n, unsigned fail_permille)
{
  static const uint32_t errors[] = { EIO, EPERM, ENOSPC, EINVAL, ESTALE, EROFS };
  struct ipc_header replies[FZ_MAX_SENT];
  const struct client *c = fz.c;
  unsigned i, k = 0;

  if (n > fz.nsent)
    n = fz.nsent;
  for (i = 0; i < n; i++) {
    const struct fz_sent *s = &fz.sent[i];
    uint64_t mix = s->id * UINT64_C (0x9e3779b97f4a7c15);
    struct ipc_header h = { .type = IPC_REPLY, .id = s->id };
    if ((mix >> 40) % 1000 < fail_permille)
      h.error = errors[(mix >> 20) % (sizeof errors / sizeof errors[0])];
    else if (s->type == IPC_READ && c->pipe && s->length <= c->pipe_read_max &&
             (mix >> 30) & 1)
      h.flags = IPC_REPLY_PIPED;
    replies[k++] = h;
  }
  memmove (fz.sent, fz.sent + n, (fz.nsent - n) * sizeof fz.sent[0]);
  fz.nsent -= n;
  fz_fetcher_write (replies, k * sizeof replies[0]);
}

/* ---- What lies below handshake.c and transmission.c: output-queue.c,
 * data-area.c and clients.c (frontend-fuzz.h says why stand-ins). ---- */

static struct data_area area;
static struct data_pipe pipe_end;
static uint32_t area_next;            /* the stand-in allocator's next chunk */

uint64_t
now_ms (void)
{
  return 1;
}

/* The memory a queue holds (outq.mem), kept as output-queue.c keeps
 * it: a record per chunk, and copies packed into OUTQ_PACK_BUFFER bytes
 * at the tail while they fit (a larger copy gets an allocation of its
 * own).  The stand-in hands bytes on at once, but counts them as held
 * until the peer drains the queue (queues_drained): as if the client and
 * the fetcher read only when they must. */
static struct queue_model {
  bool tail_packable;
  size_t tail_used;           /* bytes of the tail's pack buffer in use */
} out_model, to_fetcher_model;

static struct queue_model *
model_of (struct outq *q)
{
  if (q == &fz.c->out)
    return &out_model;
  FUZZ_CHECK (q == &fz.c->to_fetcher, "bytes queued on an unknown queue");
  return &to_fetcher_model;
}

/* A chunk appended: a record, and alloc bytes of its own. */
static void
model_chunk (struct outq *q, size_t alloc, bool packable, size_t used)
{
  struct queue_model *m = model_of (q);

  q->mem += sizeof (struct chunk) + alloc;
  m->tail_packable = packable;
  m->tail_used = used;
}

static void
model_copy (struct outq *q, size_t len)
{
  struct queue_model *m = model_of (q);

  if (m->tail_packable && len <= OUTQ_PACK_BUFFER && m->tail_used <= OUTQ_PACK_BUFFER - len)
    m->tail_used += len;
  else if (len < OUTQ_PACK_BUFFER / 4)
    model_chunk (q, OUTQ_PACK_BUFFER, true, len);
  else
    model_chunk (q, len > 0 ? len : 1, false, 0);
}

/* The client read every reply queued, and the fetcher every request. */
static void
queues_drained (void)
{
  struct client *c = fz.c;

  c->out.mem = c->to_fetcher.mem = 0;
  out_model = to_fetcher_model = (struct queue_model) { 0 };
}

static bool
queues_full (const struct client *c)
{
  return c->out.mem >= CLIENT_QUEUE_MEMORY || c->to_fetcher.mem >= CLIENT_QUEUE_MEMORY;
}

static void
queued (struct outq *q, const void *data, size_t len)
{
  struct client *c = fz.c;

  FUZZ_CHECK (!c->dead, "%zu bytes queued after the client was closed", len);
  q->bytes += len;
  if (q == &c->out) {
    const uint8_t *p = data, *base = c->area ? c->area->base : NULL;
    if (base != NULL && p >= base && p < base + DATA_AREA_SIZE)
      out_copied (p, len);
    else
      out_bytes (data, len);
    return;
  }
  FUZZ_CHECK (q == &c->to_fetcher, "bytes queued on an unknown queue");
  /* Whole headers, one at a time (send_to_fetcher). */
  FUZZ_CHECK (len == IPC_HEADER_SIZE, "%zu bytes queued "
              "for the fetcher", len);
  {
    struct ipc_header h;
    ipc_decode_header (data, &h);
    fetcher_receives (&h);
  }
}

void
outq_push_copy (struct outq *q, const void *data, size_t len)
{
  queued (q, data, len);
  model_copy (q, len);
}

/* The driver's client takes nothing at once: both parts are queued, as
 * output-queue.c queues them when something is queued before them. */
void
outq_write_or_copy (struct outq *q, int fd, const void *a, size_t a_len,
                    const void *b, size_t b_len)
{
  (void) fd;
  outq_push_copy (q, a, a_len);
  if (b_len > 0)
    outq_push_copy (q, b, b_len);
}

void
outq_push_owned (struct outq *q, void *alloc, uint8_t *data, size_t len)
{
  queued (q, data, len);
  model_chunk (q, 0, false, 0);         /* output-queue.c counts the record only */
  free (alloc);
}

void
outq_push_span (struct outq *q, struct area_span span, size_t len)
{
  FUZZ_CHECK (q == &fz.c->out && !fz.c->dead, "read data queued elsewhere");
  FUZZ_CHECK (span.area == &area && len >= 1 &&
              len <= (size_t) span.count * DATA_AREA_CHUNK, "read data outside its span");
  q->bytes += len;
  model_chunk (q, 0, false, 0);
  out_data (area_address (&span), len);
  area_release (&span);                 /* as once sent */
}

void
outq_push_pipe (struct outq *q, struct data_pipe *p, size_t len, bool discard)
{
  FUZZ_CHECK (q == &fz.c->out && !fz.c->dead, "pipe bytes queued elsewhere");
  p->refs++;                            /* as the queue does: p must be real */
  FUZZ_CHECK (p == &pipe_end && len >= 1 && len <= DATA_PIPE_READ_MAX,
              "%zu pipe bytes queued", len);
  model_chunk (q, 0, false, 0);
  if (!discard)
    out_data (NULL, len);
  else {
    unsigned i, inflight = 0;
    for (i = 0; i < nrequests; i++)
      inflight += requests[i].committed && !requests[i].answered;
    discards_open++;
    FUZZ_CHECK (discards_open <= inflight, "%u pipe discards taken with %u "
                "requests in flight", discards_open, inflight);
  }
  p->refs--;
}

static bool
chunks_free (const struct data_area *a, uint32_t first, uint32_t n)
{
  if (first + n > DATA_AREA_CHUNKS)
    return false;
  for (uint32_t i = first; i < first + n; i++)
    if (a->used[i])
      return false;
  return true;
}

int
area_take (struct data_area *a, uint32_t len, struct area_span *span)
{
  uint32_t need = (uint32_t) (((uint64_t) len + DATA_AREA_CHUNK - 1) / DATA_AREA_CHUNK), i;

  FUZZ_CHECK (a == &area && a->refs > 0, "data area taken from no fetcher's area");
  FUZZ_CHECK (len >= 1 && len <= NBD_MAX_REQUEST_SIZE, "data area for %u bytes", len);
  /* A simpler allocator than data-area.c's: from the start when the area
   * is empty, else after the last part taken.  Any request fits an empty
   * area, as there. */
  if (a->chunks_used == 0)
    area_next = 0;
  else if (a->chunks_used + need > a->budget)
    return -1;
  else if (!chunks_free (a, area_next, need)) {
    /* Staging spans are held for long: the first room from the start. */
    for (area_next = 0; area_next + need <= DATA_AREA_CHUNKS; area_next++)
      if (chunks_free (a, area_next, need))
        break;
    if (area_next + need > DATA_AREA_CHUNKS)
      return -1;
  }
  for (i = area_next; i < area_next + need; i++)
    a->used[i] = 1;
  *span = (struct area_span) { .area = a, .first = area_next, .count = need };
  area_next += need;
  a->chunks_used += need;
  a->refs++;
  return 0;
}

/* Staging spans: the last free run of chunks from the area's end, never
 * counted in the budget. */
int
area_take_beyond_budget (struct data_area *a, uint32_t len, struct area_span *span)
{
  uint32_t need = (uint32_t) (((uint64_t) len + DATA_AREA_CHUNK - 1) / DATA_AREA_CHUNK), i;
  uint32_t first = DATA_AREA_CHUNKS - need;

  FUZZ_CHECK (a == &area && a->refs > 0, "data area taken from no fetcher's area");
  FUZZ_CHECK (len >= 1 && len <= NBD_MAX_REQUEST_SIZE, "data area for %u bytes", len);
  while (!chunks_free (a, first, need))
    if (first-- == 0)
      return -1;
  for (i = first; i < first + need; i++)
    a->used[i] = 1;
  *span = (struct area_span) {
    .area = a, .first = first, .count = need, .beyond_budget = true,
  };
  a->refs++;
  return 0;
}

uint8_t *
area_address (const struct area_span *span)
{
  return span->area->base + (size_t) span->first * DATA_AREA_CHUNK;
}

void
area_unref (struct data_area *a)
{
  FUZZ_CHECK (a == &area && a->refs > 0, "data area reference dropped twice");
  a->refs--;
}

void
area_release (struct area_span *span)
{
  uint32_t i;

  if (span->area == NULL)
    return;
  for (i = span->first; i < span->first + span->count; i++) {
    FUZZ_CHECK (span->area->used[i], "data area chunk %u given back twice", i);
    span->area->used[i] = 0;
  }
  if (!span->beyond_budget)
    span->area->chunks_used -= span->count;
  area_unref (span->area);
  span->area = NULL;
}

/* As clients.c, with one client: its start is over. */
void
fetcher_start_done (struct client *c)
{
  c->spawn = SPAWN_NONE;
}

void
drop_fetcher (struct client *c)
{
  fetcher_start_done (c);
  if (c->fetcher_fd >= 0)
    close (c->fetcher_fd);
  if (fz.fetcher_peer >= 0)
    close (fz.fetcher_peer);            /* the fetcher exits on end of file */
  fz.fetcher_peer = -1;
  fz.nsent = 0;
  c->fetcher_fd = -1;
  c->fetcher_open = false;
  c->to_fetcher = (struct outq) { 0 };
  to_fetcher_model = (struct queue_model) { 0 };
  memset (&c->fin, 0, sizeof c->fin);
  staging_drop (c);
  fz_stage_reset ();
  if (c->area) {
    area_unref (c->area);
    c->area = NULL;
  }
  if (c->pipe) {
    FUZZ_CHECK (c->pipe->refs > 0, "data pipe reference dropped twice");
    c->pipe->refs--;
    c->pipe = NULL;
  }
}

void
client_close (struct client *c, const char *why)
{
  unsigned i;

  (void) why;
  if (c->dead)
    return;
  drop_fetcher (c);
  c->out = (struct outq) { 0 };
  out_model = (struct queue_model) { 0 };
  for (i = 0; i < MAX_INFLIGHT_PER_CLIENT; i++)
    area_release (&c->slots[i].span);
  c->payload = NULL;
  c->dead = true;
}

int
request_fetcher (struct client *c, uint32_t export_index)
{
  FUZZ_CHECK (export_index < fe.config.nexports, "fetcher for export %u", export_index);
  FUZZ_CHECK (c->state == CLIENT_WAIT_FETCHER && c->fetcher_fd < 0 && !fz.spawn_requested,
              "fetcher requested in state %d", c->state);
  c->fetcher_spawns++;
  FUZZ_CHECK (c->fetcher_spawns <= NBD_MAX_FETCHER_SPAWNS, "%u fetchers for one client",
              c->fetcher_spawns);
  /* As clients.c: the handshake timer stops, the open has a bound. */
  c->deadline_ms = now_ms () + (uint64_t) FETCHER_OPEN_TIMEOUT * 1000;
  c->export_index = export_index;
  /* One client: its turn comes at once. */
  c->spawn = SPAWN_STARTING;
  fz.spawn_requested = true;
  return 0;
}

/* ---- The supervisor's and the fetcher's start. ---- */

/* The supervisor hands over a fetcher (frontend_dispatch_supervisor). */
static void
attach_fetcher (void)
{
  struct client *c = fz.c;
  int sv[2];

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
    perror ("socketpair");
    abort ();
  }
  FUZZ_CHECK (area.refs == 0 && pipe_end.refs == 0, "an earlier fetcher's data area "
              "or pipe is still referenced");
  memset (area.used, 0, sizeof area.used);
  area.chunks_used = 0;
  area.refs = 1;
  area.budget = fe.config.client_memory / DATA_AREA_CHUNK;
  c->area = &area;
  if (fz.setup.pipe) {
    pipe_end = (struct data_pipe) { .fd = -1, .refs = 1 };
    c->pipe = &pipe_end;
  }
  {
    int flags = 1;
    (void) ioctl (sv[0], FIONBIO, &flags);
  }
  c->fetcher_fd = sv[0];
  c->fetcher_open = false;
  c->fetcher_failed = false;
  fz.fetcher_peer = sv[1];
  memset (&stream, 0, sizeof stream);
}

static void
start_fetcher (void)
{
  struct client *c = fz.c;
  struct ipc_header h = { .type = IPC_FETCHER_OPENED };

  fz.spawn_requested = false;
  if (fz.setup.open == FZ_OPEN_NO_FETCHER) {
    fetcher_start_done (c);
    handshake_fetcher_opened (c, EAGAIN, NULL, 0);
    return;
  }
  attach_fetcher ();
  switch (fz.setup.open) {
  case FZ_OPEN_OK:
    {
      /* As a real fetcher: started, then opened. */
      struct ipc_header started = { .type = IPC_FETCHER_STARTED };
      fz_fetcher_write (&started, sizeof started);
    }
    h.flags = (uint16_t) fz.setup.caps;
    h.offset = fz.setup.size;
    h.length = fz.setup.pipe ? fz.setup.pipe_read_max : 0;
    fz_fetcher_write (&h, sizeof h);
    break;
  case FZ_OPEN_ERROR:
    h.error = ENOENT;
    fz_fetcher_write (&h, sizeof h);
    break;
  default:
    fz_fetcher_exit ();
    break;
  }
  FUZZ_CHECK (c->dead || c->state != CLIENT_WAIT_FETCHER, "the client still waits "
              "after its fetcher answered");
  /* The open took the server's time: a handshake goes on with its whole
   * timeout again; transmission has none. */
  FUZZ_CHECK (c->dead || c->state != CLIENT_OPTIONS ||
              c->deadline_ms == now_ms () + (uint64_t) fe.config.handshake_timeout * 1000,
              "handshake deadline %llu after the export opened",
              (unsigned long long) c->deadline_ms);
  FUZZ_CHECK (c->dead || c->state < CLIENT_TRANSMISSION || c->deadline_ms == 0,
              "a deadline in transmission");
}

/* ---- The client. ---- */

/* Before a consume call: what the bytes at p are to the client, and how
 * many of them the front-end should take (*expect; 0: none, as more are
 * needed).  A request gets its cookie written in and is recorded. */
static struct fz_request *
before_consume (uint8_t *p, size_t len, size_t *expect)
{
  struct client *c = fz.c;

  *expect = 0;
  switch (c->state) {
  case CLIENT_GREETING:
    if (len >= 4) {
      out.no_zeroes = (get_be (p, 4) & NBD_FLAG_C_NO_ZEROES) != 0;
      *expect = 4;
    }
    return NULL;
  case CLIENT_OPTIONS:
    if (len >= NBD_OPTION_HEADER_SIZE) {
      uint32_t optlen = (uint32_t) get_be (p + 12, 4);
      if (get_be (p, 8) == NBD_IHAVEOPT && optlen <= NBD_MAX_OPTION_LENGTH &&
          len - NBD_OPTION_HEADER_SIZE >= optlen) {
        /* A whole option: it is answered next (or the client closed). */
        FUZZ_CHECK (!out.any_option || out.option_final, "option %u never answered",
                    out.option);
        out.option = (uint32_t) get_be (p + 8, 4);
        out.option_final = false;
        out.any_option = true;
        *expect = NBD_OPTION_HEADER_SIZE + optlen;
      }
    }
    return NULL;
  case CLIENT_WRITE_PAYLOAD: {
    /* Hashed before the front-end hands the data on. */
    size_t n;
    FUZZ_CHECK (collecting != NULL && &requests[c->slots[c->payload_slot].cookie - 1] ==
                collecting, "the front-end collects data for another request");
    n = collecting->count - collecting->payload_got;
    if (n > len)
      n = len;
    collecting->payload_hash = hash_bytes (collecting->payload_hash, p, n);
    collecting->payload_got += (uint32_t) n;
    *expect = n;
    return NULL;
  }
  case CLIENT_DISCARD:
    *expect = len < discard_left ? len : (size_t) discard_left;
    discard_left -= *expect;
    return NULL;
  case CLIENT_TRANSMISSION:
    if (len >= NBD_REQUEST_SIZE && nrequests < FZ_MAX_REQUESTS) {
      uint64_t be = htobe64 (nrequests + 1);
      struct fz_request *r = &requests[nrequests++];
      memcpy (p + 8, &be, sizeof be);
      *r = (struct fz_request) {
        .flags = (uint16_t) get_be (p + 4, 2), .type = (uint16_t) get_be (p + 6, 2),
        .offset = get_be (p + 16, 8), .count = (uint32_t) get_be (p + 24, 4),
        .payload_hash = HASH_START,
        /* Taken, unless the call consumes nothing: its reply, or what goes
         * to the fetcher, may come before the call returns. */
        .committed = true,
      };
      *expect = NBD_REQUEST_SIZE;
      return r;
    }
    return NULL;
  default:
    return NULL;
  }
}

/* After it: the front-end took what the driver expected, and went where a
 * request of that kind leads. */
static void
after_consume (size_t used, size_t expect, struct fz_request *r, enum client_state before)
{
  struct client *c = fz.c;

  if (before == CLIENT_WRITE_PAYLOAD || before == CLIENT_DISCARD) {
    FUZZ_CHECK (used == expect, "took %zu bytes of write data, not %zu", used, expect);
    if (before == CLIENT_WRITE_PAYLOAD && collecting->payload_got == collecting->count) {
      FUZZ_CHECK (c->state == CLIENT_TRANSMISSION, "state %d after a write's data", c->state);
      collecting = NULL;
    }
    if (before == CLIENT_DISCARD)
      FUZZ_CHECK ((discard_left == 0) == (c->state == CLIENT_TRANSMISSION),
                  "state %d with %llu bytes to skip", c->state,
                  (unsigned long long) discard_left);
    return;
  }
  FUZZ_CHECK (used == 0 || used == expect, "consumed %zu bytes in state %d, expected %zu",
              used, before, expect);
  if (r == NULL)
    return;
  if (used == 0) {
    FUZZ_CHECK (!r->answered, "a request answered but not consumed");
    nrequests--;
    return;
  }
  if (r->type == NBD_CMD_DISC) {
    FUZZ_CHECK (!r->answered && c->disconnect_requested, "NBD_CMD_DISC");
    r->answered = true;                 /* needs no reply */
  }
  else if (r->type == NBD_CMD_WRITE && r->count > 0) {
    if (r->answered) {
      FUZZ_CHECK (c->state == CLIENT_DISCARD, "a refused write's data is not skipped");
      discard_left = r->count;
    }
    else {
      FUZZ_CHECK (c->state == CLIENT_WRITE_PAYLOAD, "a write's data is not collected");
      collecting = r;
    }
  }
  else
    FUZZ_CHECK (c->state == CLIENT_TRANSMISSION, "state %d after a request", c->state);
}

void
fz_client_process (void)
{
  struct client *c = fz.c;
  size_t off = 0;

  for (;;) {
    while (!c->dead && off < c->in_len) {
      enum client_state before = c->state;
      struct fz_request *r;
      size_t expect, used;

      if (c->state == CLIENT_WAIT_FETCHER || c->state == CLIENT_CLOSING)
        break;
      if (c->state == CLIENT_TRANSMISSION &&
          (c->ninflight >= MAX_INFLIGHT_PER_CLIENT || c->disconnect_requested))
        break;
      if (queues_full (c))
        break;                          /* until the replies drain */
      r = before_consume (c->in + off, c->in_len - off, &expect);
      if (c->state == CLIENT_TRANSMISSION && c->in_len - off >= NBD_REQUEST_SIZE && !r)
        break;                          /* the driver's table is full */
      if (c->state < CLIENT_WAIT_FETCHER)
        used = handshake_consume (c, c->in + off, c->in_len - off);
      else
        used = transmission_consume (c, c->in + off, c->in_len - off);
      FUZZ_CHECK (used <= c->in_len - off, "consumed %zu of %zu bytes", used,
                  c->in_len - off);
      if (c->dead)
        break;
      after_consume (used, expect, r, before);
      if (used == 0 && c->state == before)
        break;
      off += used;
    }
    if (c->dead)
      return;
    if (c->state == CLIENT_WAIT_FETCHER) {
      FUZZ_CHECK (fz.spawn_requested, "the client waits for a fetcher never asked for");
      start_fetcher ();
      if (!c->dead)
        continue;
    }
    break;
  }
  if (c->dead)
    return;
  /* One pass may overshoot CLIENT_QUEUE_MEMORY, by a bounded amount:
   * frontend.c closes a client past the limit, which must not happen. */
  FUZZ_CHECK (c->out.mem <= CLIENT_QUEUE_MEMORY_LIMIT &&
              c->to_fetcher.mem <= CLIENT_QUEUE_MEMORY_LIMIT,
              "queues hold %zu and %zu bytes of memory", c->out.mem, c->to_fetcher.mem);
  memmove (c->in, c->in + off, c->in_len - off);
  c->in_len -= off;
}

bool
fz_client_send (const uint8_t *data, size_t len, size_t chunk)
{
  struct client *c = fz.c;

  if (chunk == 0)
    chunk = 1;
  while (len > 0 && !c->dead) {
    size_t room = sizeof c->in - c->in_len, n = len < chunk ? len : chunk;
    if (n > room)
      n = room;
    if (n == 0) {
      /* Nothing could be taken: the client waits for replies (data area
       * or request slots full, or its queues hold their share of memory),
       * or has said goodbye. */
      bool moved = false;
      if (c->state == CLIENT_TRANSMISSION && fz.nsent > 0 && !c->disconnect_requested) {
        fz_fetcher_answer (FZ_MAX_SENT, fz.fail_permille);
        moved = true;
      }
      if (!c->dead && queues_full (c)) {
        queues_drained ();
        moved = true;
      }
      if (moved && !c->dead) {
        fz_client_process ();
        if (!c->dead && sizeof c->in - c->in_len > 0)
          continue;
      }
      break;
    }
    memcpy (c->in + c->in_len, data, n);
    c->in_len += n;
    data += n;
    len -= n;
    fz_client_process ();
  }
  return !c->dead;
}

/* ---- Worlds. ---- */

void
fz_begin (uint32_t frontend_flags, const struct fz_fetcher_setup *setup)
{
  static struct export_info exports[3];
  static char long_name[NBD_MAX_STRING + 1], long_description[NBD_MAX_STRING + 1];

  if (area.base == NULL) {
    area.base = mmap (NULL, DATA_AREA_SIZE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    FUZZ_CHECK (area.base != MAP_FAILED, "mmap");
    memset (long_name, 'L', NBD_MAX_STRING);
    memset (long_description, 'D', NBD_MAX_STRING);
    exports[0] = (struct export_info) { .name = (char *) "", .description = (char *) "" };
    exports[1] = (struct export_info) { .name = (char *) "ro",
      .description = (char *) "a read-only export", .readonly = true };
    exports[2] = (struct export_info) { .name = long_name, .description = long_description };
  }
  fe.config = (struct frontend_config) {
    .flags = frontend_flags, .handshake_timeout = 30, .nexports = 3, .exports = exports,
    .client_memory = DEFAULT_CLIENT_MEMORY,
  };
  fz.setup = *setup;
  if (fz.setup.pipe_read_max > DATA_PIPE_READ_MAX)
    fz.setup.pipe_read_max = DATA_PIPE_READ_MAX;
  fz.c = calloc (1, sizeof *fz.c);
  FUZZ_CHECK (fz.c != NULL, "calloc");
  fz.c->fetcher_fd = -1;
  fz.c->rfd = fz.c->wfd = -1;
  strcpy (fz.c->peer, "fuzz");
  fz.fetcher_peer = -1;
  fz.spawn_requested = false;
  fz.nsent = 0;
  fz.fail_permille = 0;
  fz_stage_reset ();
  nrequests = 0;
  collecting = NULL;
  discard_left = 0;
  discards_open = 0;
  out_model = to_fetcher_model = (struct queue_model) { 0 };
  memset (&out, 0, sizeof out);
}

void
fz_client_greeted (void)
{
  handshake_start (fz.c);
}

void
fz_client_in_transmission (uint32_t export_index, bool structured, bool meta)
{
  struct client *c = fz.c;

  out.phase = OUT_OPTIONS;
  out.option = NBD_OPT_GO;
  out.any_option = true;
  c->state = CLIENT_WAIT_FETCHER;
  c->structured = structured;
  c->meta_base_allocation = structured && meta;
  c->meta_export = export_index;
  c->export_index = export_index;
  c->pending_option = NBD_OPT_GO;
  c->fetcher_spawns = 1;
  /* As request_fetcher: its start is under way, so the fetcher's
   * IPC_FETCHER_STARTED is in turn. */
  c->spawn = SPAWN_STARTING;
  start_fetcher ();
}

/* Export sizes worth trying: empty, odd, the request limit's
 * neighbourhood, and the largest; and data area budgets. */
static const uint64_t sizes[] = {
  0, 1, 4096, 1024 * 1024, NBD_MAX_REQUEST_SIZE - 1, NBD_MAX_REQUEST_SIZE + 1,
  UINT64_C (1) << 40, UINT64_MAX,
};
static const uint32_t budgets[] = {
  MIN_CLIENT_MEMORY, 4 * DATA_AREA_CHUNK, DEFAULT_CLIENT_MEMORY, MAX_CLIENT_MEMORY,
};

void
fz_begin_transmission (struct fuzz_input *in)
{
  uint8_t flags = fuzz_u8 (in), caps = fuzz_u8 (in), sz = fuzz_u8 (in);
  uint8_t budget = fuzz_u8 (in), fail = fuzz_u8 (in), pipe_max = fuzz_u8 (in);
  struct fz_fetcher_setup fs = {
    .open = FZ_OPEN_OK,
    .caps = caps & (FETCHER_CAN_WRITE | FETCHER_CAN_FLUSH | FETCHER_CAN_FUA |
                    FETCHER_CAN_STAGE),
    .pipe = (caps & 0x80) != 0,
    .pipe_read_max = (uint32_t) pipe_max * 4096,
    .size = sizes[sz % (sizeof sizes / sizeof sizes[0])],
  };

  fz_begin ((flags & 4) ? FRONTEND_MULTI_CONN : 0, &fs);
  fe.config.client_memory = budgets[budget % (sizeof budgets / sizeof budgets[0])];
  fz.fail_permille = (unsigned) fail * 4;
  fz_client_in_transmission ((flags >> 3) % 3, flags & 1, flags & 2);
}

void
fz_end (void)
{
  struct client *c = fz.c;
  unsigned i;

  if (!c->dead) {
    /* Whatever waits is taken now, until nothing moves. */
    while (!c->dead && (fz.nsent > 0 || queues_full (c))) {
      fz_fetcher_answer (FZ_MAX_SENT, 0);
      queues_drained ();
      fz_client_process ();
    }
    fz_fetcher_exit ();
  }
  if (!c->dead) {
    for (i = 0; i < nrequests; i++)
      FUZZ_CHECK (!requests[i].committed || requests[i].answered ||
                  &requests[i] == collecting,
                  "request %u (type %u) never answered", i + 1, requests[i].type);
    FUZZ_CHECK (out.hdr_len == 0 && out.payload_want == 0 && out.data_left == 0,
                "the output ends inside a reply");
    if (out.phase == OUT_OPTIONS && out.any_option)
      FUZZ_CHECK (out.option_final || c->state == CLIENT_CLOSING,
                  "option %u never answered", out.option);
  }
  client_close (c, NULL);
  FUZZ_CHECK (area.refs == 0 && area.chunks_used == 0, "closing the client left %u "
              "references to the data area", area.refs);
  FUZZ_CHECK (pipe_end.refs == 0, "closing the client left the data pipe referenced");
  free (c);
  fz.c = NULL;
}

/* ---- TLS (frontend-tls.c): off in these harnesses. ----
 * GnuTLS's own parsers are GnuTLS's to fuzz; what the front-end decides
 * around STARTTLS is in tests/tls/test-tls-handshake.py. */

bool tls_offered (void) { return false; }
bool tls_required (void) { return false; }
bool client_in_tls (const struct client *c) { (void) c; return false; }
int tls_start (struct client *c) { (void) c; return -1; }
const char *tls_psk_user (const struct client *c) { (void) c; return NULL; }
const char *tls_cert_dn (const struct client *c) { (void) c; return NULL; }
bool tls_cert_has_san (const struct client *c, const char *name)
{
  (void) c, (void) name;
  return false;
}
