/*
 * transmission.c: NBD requests from a client, and the fetcher's replies.
 *
 * Every request is checked completely (magic, command, flags, length,
 * range: request-parse.c) before anything reaches the fetcher; what the fetcher sends back
 * is checked against the request it answers (id, type, exact length)
 * before a byte of it reaches the client.  A fetcher that breaks the rules
 * is dropped and its client's requests fail with EIO.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data-path.h"
#include "frontend.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "limits-nbd.h"
#include "log.h"
#include "request-parse.h"
#include "stats.h"
#include "wire.h"

uint32_t
nbd_errno (uint32_t e)
{
  switch (e) {
  case 0: return 0;
  case EPERM: case EACCES: case EROFS: return NBD_EPERM;
  case EIO: return NBD_EIO;
  case ENOMEM: return NBD_ENOMEM;
  case EINVAL: return NBD_EINVAL;
  case ENOSPC: case EFBIG: case EDQUOT: return NBD_ENOSPC;
  case EOVERFLOW: return NBD_EOVERFLOW;
  case ENOTSUP: return NBD_ENOTSUP;
  case ESHUTDOWN: return NBD_ESHUTDOWN;
  default: return NBD_EIO;
  }
}

/* ---- Replies to the client. ---- */

static void
reply_simple (struct client *c, uint64_t cookie, uint32_t error)
{
  uint8_t buf[NBD_SIMPLE_REPLY_SIZE];
  struct writer w;

  writer_init (&w, buf, sizeof buf);
  if (writer_put_u32_be (&w, NBD_SIMPLE_REPLY_MAGIC) == -1 ||
      writer_put_u32_be (&w, nbd_errno (error)) == -1 ||
      writer_put_u64_be (&w, cookie) == -1)
    fatal ("simple reply does not fit");
  outq_push_copy (&c->out, buf, w.pos);
}

static int
put_chunk_header (struct writer *w, uint16_t flags, uint16_t type,
                  uint64_t cookie, uint32_t length)
{
  if (writer_put_u32_be (w, NBD_STRUCTURED_REPLY_MAGIC) == -1 ||
      writer_put_u16_be (w, flags) == -1 ||
      writer_put_u16_be (w, type) == -1 ||
      writer_put_u64_be (w, cookie) == -1 ||
      writer_put_u32_be (w, length) == -1)
    return -1;
  return 0;
}

/* Success without data, or an error, in the form the client negotiated. */
static void
reply_status (struct client *c, uint64_t cookie, uint32_t error)
{
  uint8_t buf[NBD_STRUCTURED_REPLY_SIZE + 6];
  struct writer w;

  if (!c->structured) {
    reply_simple (c, cookie, error);
    return;
  }
  writer_init (&w, buf, sizeof buf);
  if (error == 0) {
    if (put_chunk_header (&w, NBD_REPLY_FLAG_DONE, NBD_REPLY_TYPE_NONE, cookie, 0) == -1)
      fatal ("reply does not fit");
  }
  else if (put_chunk_header (&w, NBD_REPLY_FLAG_DONE, NBD_REPLY_TYPE_ERROR, cookie, 6) == -1 ||
           writer_put_u32_be (&w, nbd_errno (error)) == -1 ||
           writer_put_u16_be (&w, 0) == -1)        /* no message */
    fatal ("error chunk does not fit");
  outq_push_copy (&c->out, buf, w.pos);
}

/* base:allocation for [offset, offset+length): we know nothing about
 * holes, and "allocated data" is always a true answer.  length was
 * checked against the export's end, so the extent never passes it. */
static void
reply_block_status (struct client *c, uint64_t cookie, uint32_t length)
{
  uint8_t buf[NBD_STRUCTURED_REPLY_SIZE + 4 + 8];
  struct writer w;

  writer_init (&w, buf, sizeof buf);
  if (put_chunk_header (&w, NBD_REPLY_FLAG_DONE, NBD_REPLY_TYPE_BLOCK_STATUS,
                        cookie, 4 + 8) == -1 ||
      writer_put_u32_be (&w, 1) == -1 ||       /* context id of base:allocation */
      writer_put_u32_be (&w, length) == -1 ||
      writer_put_u32_be (&w, 0) == -1)         /* allocated, not zero */
    fatal ("block status reply does not fit");
  outq_push_copy (&c->out, buf, w.pos);
}

/* The header of a successful read's reply, into buf: its length.  Its
 * data follows. */
#define READ_HEADER_MAX (NBD_STRUCTURED_REPLY_SIZE + 8)
static size_t
read_header (const struct client *c, uint64_t cookie, uint64_t offset, uint32_t length,
             uint8_t buf[READ_HEADER_MAX])
{
  struct writer w;

  writer_init (&w, buf, READ_HEADER_MAX);
  if (c->structured) {
    if (put_chunk_header (&w, NBD_REPLY_FLAG_DONE, NBD_REPLY_TYPE_OFFSET_DATA,
                          cookie, 8 + length) == -1 ||
        writer_put_u64_be (&w, offset) == -1)
      fatal ("read chunk header does not fit");
  }
  else if (writer_put_u32_be (&w, NBD_SIMPLE_REPLY_MAGIC) == -1 ||
           writer_put_u32_be (&w, 0) == -1 ||
           writer_put_u64_be (&w, cookie) == -1)
    fatal ("read reply header does not fit");
  return w.pos;
}

static void
queue_read_header (struct client *c, uint64_t cookie, uint64_t offset, uint32_t length)
{
  uint8_t buf[READ_HEADER_MAX];

  outq_push_copy (&c->out, buf, read_header (c, cookie, offset, length, buf));
}

/* ---- Statistics. ---- */

/* A reply queued for a request whose header came at started_us. */
static void
count_reply (struct client *c, uint64_t started_us, uint32_t error, enum stats_cause cause)
{
  stats_count_reply (&c->stats, now_us () - started_us, error, cause);
}

/* A request answered without the fetcher: refused, or served here. */
static void
count_answered_here (struct client *c, uint64_t started_us, uint32_t error)
{
  count_reply (c, started_us, error,
               c->fetcher_failed && error == EIO ? STATS_CAUSE_FETCHER_LOST
                                                 : STATS_CAUSE_REFUSED);
}

/* A read answered from bytes the fetcher staged (staging.c): its reply,
 * written at once or queued with a copy of data (the span goes back to
 * the fetcher whatever the socket does), and its figures, as a readahead
 * hit. */
void
transmission_reply_copied (struct client *c, const struct client_request *req,
                           const uint8_t *data, uint64_t started_us)
{
  uint8_t header[READ_HEADER_MAX];
  size_t header_len = read_header (c, req->cookie, req->offset, req->count, header);

  /* Written at once in the clear; through TLS, the flush encrypts. */
  if (client_in_tls (c)) {
    outq_push_copy (&c->out, header, header_len);
    outq_push_copy (&c->out, data, req->count);
  }
  else
    outq_write_or_copy (&c->out, c->wfd, header, header_len, data, req->count);
  c->stats.requests[STATS_READ]++;
  c->stats.bytes_read += req->count;
  c->stats.fetcher.readahead_hits++;
  c->stats.fetcher.readahead_bytes += req->count;
  count_reply (c, started_us, 0, STATS_CAUSE_EXPORT);
}

/* ---- Requests. ---- */

static void
finish_slot (struct client *c, uint32_t slot)
{
  area_release (&c->slots[slot].span);
  c->slots[slot].used = false;
  c->ninflight--;                      /* the slot was used: ninflight >= 1 */
}


static int
take_slot (struct client *c, uint32_t *slot)
{
  uint32_t i;
  for (i = 0; i < MAX_INFLIGHT_PER_CLIENT; i++)
    if (!c->slots[i].used) {
      *slot = i;
      return 0;
    }
  return -1;
}

static void
send_to_fetcher (struct client *c, uint32_t slot, uint16_t type, uint16_t ipc_flags)
{
  struct inflight *s = &c->slots[slot];
  struct ipc_header h = {
    .type = type, .flags = ipc_flags,
    .id = s->ipc_id, .offset = s->offset, .length = s->length,
    .area_offset = s->span.area ? (uint64_t) s->span.first * DATA_AREA_CHUNK : 0,
  };
  outq_push_copy (&c->to_fetcher, &h, sizeof h);
}

/* Bytes of a WRITE's data, into its span of the data area. */
static size_t
consume_write_payload (struct client *c, const uint8_t *data, size_t len)
{
  size_t want = c->slots[c->payload_slot].length - c->payload_got;
  size_t n = len < want ? len : want;

  memcpy (c->payload + c->payload_got, data, n);
  c->payload_got += n;
  transmission_payload_done (c);
  return n;
}

/* Bytes of a refused WRITE's data, skipped. */
static size_t
consume_discard (struct client *c, size_t len)
{
  size_t n = len < c->discard_left ? len : (size_t) c->discard_left;

  c->discard_left -= n;
  if (c->discard_left == 0)
    c->state = CLIENT_TRANSMISSION;
  return n;
}

/* What the client negotiated, which its requests are checked against. */
static struct request_rules
request_rules_of (const struct client *c)
{
  return (struct request_rules) {
    .export_size = c->export_size, .eflags = c->eflags,
    .structured = c->structured, .base_allocation = c->meta_base_allocation,
  };
}

/* Answer a request with an error; a refused WRITE's data is skipped as it
 * arrives, never buffered, whatever its length. */
static void
refuse_request (struct client *c, const struct client_request *req, uint32_t err)
{
  debug ("client %s: request type %u offset %llu count %u: %s", c->peer, req->type,
         (unsigned long long) req->offset, req->count, strerror ((int) err));
  reply_status (c, req->cookie, err);
  if (req->type == NBD_CMD_WRITE && req->count > 0) {
    c->discard_left = req->count;
    c->state = CLIENT_DISCARD;
  }
}

/* A checked request takes a slot and goes to the fetcher (a WRITE once its
 * data is in); count is what the fetcher is asked for.  False, and
 * nothing taken, while the data area has no room for its data. */
static bool
start_request (struct client *c, const struct client_request *req, uint32_t count,
               uint64_t started_us)
{
  struct area_span span = { 0 };
  uint32_t slot;

  if (take_slot (c, &slot) == -1)
    fatal ("no free request slot although ninflight < limit");
  /* Data goes through the fetcher's data area: wait (without consuming
   * the request) while it is full.  Replies being sent free it. */
  if ((req->type == NBD_CMD_READ || req->type == NBD_CMD_WRITE) &&
      area_take (c->area, count, &span) == -1)
    return false;
  c->slots[slot] = (struct inflight) {
    .used = true, .type = req->type, .flags = req->flags, .cookie = req->cookie,
    .offset = req->offset, .length = count, .span = span,
    .ipc_id = (++c->request_serial << IPC_ID_SLOT_BITS) | slot,
    .started_us = started_us,
  };
  c->ninflight++;

  switch (req->type) {
  case NBD_CMD_READ:
    send_to_fetcher (c, slot, IPC_READ, 0);
    break;
  case NBD_CMD_FLUSH:
    send_to_fetcher (c, slot, IPC_FLUSH, 0);
    break;
  case NBD_CMD_CACHE:
    send_to_fetcher (c, slot, IPC_CACHE, 0);
    break;
  case NBD_CMD_WRITE:
    c->payload = area_address (&c->slots[slot].span);
    c->payload_got = 0;
    c->payload_slot = slot;
    c->state = CLIENT_WRITE_PAYLOAD;
    break;
  }
  return true;
}

size_t
transmission_consume (struct client *c, const uint8_t *data, size_t len)
{
  const struct request_rules rules = request_rules_of (c);
  struct client_request req;
  uint32_t err, count;
  uint64_t started_us;

  if (c->state == CLIENT_WRITE_PAYLOAD)
    return consume_write_payload (c, data, len);
  if (c->state == CLIENT_DISCARD)
    return consume_discard (c, len);

  switch (parse_request (data, len, &req)) {
  case REQUEST_INCOMPLETE:
    return 0;
  case REQUEST_BAD_MAGIC:
    warn ("client %s: bad request magic 0x%08x: closing", c->peer, req.magic);
    client_close (c, NULL);
    return 0;
  case REQUEST_COMPLETE:
    break;
  }
  if (req.type == NBD_CMD_DISC) {
    c->disconnect_requested = true;
    return NBD_REQUEST_SIZE;
  }
  started_us = now_us ();

  err = check_request (&rules, &req);
  if (err == 0 && c->fetcher_failed &&
      (req.type == NBD_CMD_READ || req.type == NBD_CMD_WRITE || req.type == NBD_CMD_FLUSH))
    err = EIO;
  if (err != 0) {
    c->stats.requests[stats_kind_of (req.type)]++;
    count_answered_here (c, started_us, err);
    refuse_request (c, &req, err);
    return NBD_REQUEST_SIZE;
  }

  count = req.count;
  switch (req.type) {
  case NBD_CMD_CACHE:
    /* Advice: the fetcher prefetches the range (a network export's
     * store) and answers once it is there.  With no fetcher left there
     * is nothing to prefetch into. */
    if (c->fetcher_failed) {
      c->stats.requests[STATS_CACHE]++;
      count_answered_here (c, started_us, 0);
      reply_status (c, req.cookie, 0);
      return NBD_REQUEST_SIZE;
    }
    /* More than any read may be is more than the store holds. */
    if (count > NBD_MAX_REQUEST_SIZE)
      count = NBD_MAX_REQUEST_SIZE;
    break;
  case NBD_CMD_BLOCK_STATUS:
    c->stats.requests[STATS_BLOCK_STATUS]++;
    count_answered_here (c, started_us, 0);
    reply_block_status (c, req.cookie, count);
    return NBD_REQUEST_SIZE;
  default:
    break;
  }
  if (req.type == NBD_CMD_READ && staging_answer (c, &req, started_us))
    return NBD_REQUEST_SIZE;
  /* Counted once it is taken (a request waiting for room in the data
   * area is parsed again). */
  if (!start_request (c, &req, count, started_us))
    return 0;
  c->stats.requests[stats_kind_of (req.type)]++;
  return NBD_REQUEST_SIZE;
}

void
transmission_payload_done (struct client *c)
{
  struct inflight *s = &c->slots[c->payload_slot];

  if (c->payload_got < s->length)
    return;
  if (c->fetcher_fd < 0) {
    /* The fetcher died while the data arrived. */
    count_reply (c, s->started_us, EIO, STATS_CAUSE_FETCHER_LOST);
    reply_status (c, s->cookie, EIO);
    finish_slot (c, c->payload_slot);
  }
  else
    send_to_fetcher (c, c->payload_slot, IPC_WRITE,
                     (s->flags & NBD_CMD_FLAG_FUA) ? IPC_FLAG_FUA : 0);
  c->payload = NULL;
  c->payload_got = 0;
  c->state = CLIENT_TRANSMISSION;
}

/* ---- The fetcher's side. ---- */

void
transmission_fail_inflight (struct client *c)
{
  uint32_t i;

  if (c->fetcher_fd >= 0)
    warn ("client %s: the fetcher for export \"%s\" failed: its requests "
          "get EIO", c->peer, fe.config.exports[c->export_index].name);
  for (i = 0; i < MAX_INFLIGHT_PER_CLIENT; i++)
    if (c->slots[i].used) {
      /* A WRITE still collecting its data is answered when complete. */
      if (c->state == CLIENT_WRITE_PAYLOAD && i == c->payload_slot)
        continue;
      count_reply (c, c->slots[i].started_us, EIO, STATS_CAUSE_FETCHER_LOST);
      reply_status (c, c->slots[i].cookie, EIO);
      finish_slot (c, i);
    }
  drop_fetcher (c);
  c->fetcher_failed = true;
  if (c->state == CLIENT_WAIT_FETCHER)
    handshake_fetcher_opened (c, EIO, NULL, 0);
}

/* A complete fetcher message, checked by check_fetcher_header, with its
 * payload (h->payload_len bytes). */
static void
fetcher_message_done (struct client *c, const struct ipc_header *h, const uint8_t *payload)
{
  struct inflight *s;
  uint32_t slot;

  if (h->type == IPC_FETCHER_STARTED) {
    fetcher_start_done (c);
    return;
  }
  if (h->type == IPC_FETCHER_OPENED) {
    if (c->spawn != SPAWN_NONE)
      fetcher_start_done (c);           /* it failed before its sandbox */
    c->fetcher_open = true;
    c->export_size = h->offset;
    c->fetcher_caps = h->flags;
    c->pipe_read_max = h->length;
    handshake_fetcher_opened (c, h->error, payload, h->payload_len);
    return;
  }
  if (h->type == IPC_FETCHER_STATS) {
    stats_fetcher_report (c, payload);
    return;
  }
  if (h->type == IPC_STAGE_WANTED || h->type == IPC_STAGED) {
    staging_message (c, h);
    return;
  }
  if (h->type == IPC_PIPE_DISCARD) {
    /* In order with the announced reads around it. */
    outq_push_pipe (&c->out, c->pipe, h->length, true);
    c->discards_unmatched++;            /* checked by check_fetcher_header */
    return;
  }

  slot = (uint32_t) (h->id & ((1u << IPC_ID_SLOT_BITS) - 1));
  s = &c->slots[slot];                  /* checked by check_fetcher_header */
  /* A discard's read is answered later (an error, or its data once
   * libcurl fetched it again): any read's reply balances one. */
  if (s->type == NBD_CMD_READ && c->discards_unmatched > 0)
    c->discards_unmatched--;
  count_reply (c, s->started_us, h->error, STATS_CAUSE_EXPORT);
  if (h->error == 0 && s->type == NBD_CMD_WRITE)
    c->stats.bytes_written += s->length;
  if (h->error != 0 || s->type != NBD_CMD_READ) {
    reply_status (c, s->cookie, h->error);
    finish_slot (c, slot);
    return;
  }

  /* Read data: the fetcher put it in the slot's span of the data area;
   * the reply header, then the span itself, go to the client. */
  c->stats.bytes_read += s->length;
  queue_read_header (c, s->cookie, s->offset, s->length);
  if (h->flags & IPC_REPLY_PIPED)
    outq_push_pipe (&c->out, c->pipe, s->length, false);  /* span unused */
  else {
    s->span.punch = s->length <= c->pipe_read_max;
    outq_push_span (&c->out, s->span, s->length);
    s->span.area = NULL;               /* the queue releases it once sent */
  }
  finish_slot (c, slot);
}

/* Is this fetcher message one we may accept now?  Replies must answer a
 * request we sent and still wait for, and carry nothing else. */
static bool
check_fetcher_header (const struct client *c, const struct ipc_header *h)
{
  const struct inflight *s;
  uint32_t slot;

  /* Its form (ipc-table.c): only a failed open says something, why. */
  if (ipc_check (h, 0, ROLE_FETCHER, ROLE_FRONTEND) != NULL)
    return false;
  /* Once, before it opens. */
  if (h->type == IPC_FETCHER_STARTED)
    return !c->fetcher_open && c->spawn == SPAWN_STARTING && c->state == CLIENT_WAIT_FETCHER;
  if (!c->fetcher_open)
    return h->type == IPC_FETCHER_OPENED && c->state == CLIENT_WAIT_FETCHER &&
      h->length <= (c->pipe ? DATA_PIPE_READ_MAX : 0);
  /* A discard belongs to a read in flight, one each at most, answered
   * after it: their number is bounded like the replies'. */
  /* Its own figures: any number of times, each replacing the last. */
  if (h->type == IPC_FETCHER_STATS)
    return true;
  if (h->type == IPC_STAGE_WANTED || h->type == IPC_STAGED)
    return staging_message_ok (c, h);
  if (h->type == IPC_PIPE_DISCARD)
    return c->pipe != NULL && h->length >= 1 && h->length <= DATA_PIPE_READ_MAX &&
      c->discards_unmatched < c->ninflight;
  if (h->type != IPC_REPLY)
    return false;
  slot = (uint32_t) (h->id & ((1u << IPC_ID_SLOT_BITS) - 1));
  if (slot >= MAX_INFLIGHT_PER_CLIENT)
    return false;
  s = &c->slots[slot];
  if (!s->used || s->ipc_id != h->id ||
      (c->state == CLIENT_WRITE_PAYLOAD && slot == c->payload_slot))
    return false;                       /* never sent, or answered already */
  /* Data in the pipe: only a successful read, of a size the pipe takes. */
  if (h->flags == IPC_REPLY_PIPED)
    return c->pipe != NULL && h->error == 0 && s->type == NBD_CMD_READ &&
      s->length <= DATA_PIPE_READ_MAX;
  return h->flags == 0;
}

int
transmission_read_fetcher (struct client *c)
{
  struct fetcher_input *in = &c->fin;
  size_t off = 0;
  ssize_t r;

  /* One read takes every header waiting (up to the buffer's size). */
  r = read (c->fetcher_fd, in->buf + in->len, sizeof in->buf - in->len);
  if (r == 0 || (r == -1 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    transmission_fail_inflight (c);
    return -1;
  }
  if (r == -1)
    return 0;
  in->len += (size_t) r;

  /* Each pass handles one whole message; in->len - off cannot underflow. */
  while (in->len - off >= IPC_HEADER_SIZE) {
    struct ipc_header h;
    const uint8_t *payload;

    ipc_decode_header (in->buf + off, &h);
    if (!check_fetcher_header (c, &h)) {
      warn ("client %s: the fetcher sent an invalid message (type %u, id %llu, "
            "%u bytes): dropping it", c->peer, h.type, (unsigned long long) h.id,
            h.payload_len);
      transmission_fail_inflight (c);
      return -1;
    }
    /* A payload (checked above to fit the buffer) may still be coming. */
    if (in->len - off - IPC_HEADER_SIZE < h.payload_len)
      break;
    payload = in->buf + off + IPC_HEADER_SIZE;
    off += IPC_HEADER_SIZE + h.payload_len;
    fetcher_message_done (c, &h, payload);
    if (c->dead || c->fetcher_fd < 0)
      return -1;
  }
  /* Keep a partial header for the next read. */
  memmove (in->buf, in->buf + off, in->len - off);
  in->len -= off;
  return 0;
}
