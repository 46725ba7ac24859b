/*
 * fuzz-fetcher-replies: the front-end's reading of a hostile fetcher
 * (transmission_read_fetcher and what it accepts: IPC_REPLY,
 * IPC_PIPE_DISCARD, IPC_FETCHER_STARTED and IPC_FETCHER_OPENED out of turn,
 * staged reads' IPC_STAGE_WANTED and IPC_STAGED, anything else).
 *
 * Input: the 6 setup bytes of fuzz-transmission, then operations: the
 * client sends a request (type, flags, offset, length, and a write's
 * data); the fetcher writes raw bytes, or a header made to pass some
 * checks (an id the front-end is waiting for, a type it takes); the
 * fetcher answers properly; the fetcher exits; the fetcher asks for
 * staging spans; it stages bytes into a span it holds (mostly inside the
 * export, sometimes not: past its end, longer than a span, into a span
 * not lent or staged already); the client reads inside a staged span.
 * At the end the fetcher exits, failing what is left.
 *
 * Checked (frontend-driver.c): whatever the fetcher sends, each client
 * request gets exactly one well-formed reply (EIO when the fetcher broke
 * the rules), read data comes from that read's own place, pipe bytes are
 * announced within bounds, pipe discards taken never outnumber the
 * requests in flight (each read's reply balances one), the queues'
 * memory stays under CLIENT_QUEUE_MEMORY_LIMIT, no fatal(), the data area
 * and pipe references balance.  Staging (frontend-staging-model.c): spans
 * lent only to a read-only export's fetcher that may stage, each held
 * data area, never lent twice; a STAGE_WANTED or STAGED taken exactly
 * when the rules allow it, else the fetcher ends; a read answered from a
 * staged span carries the export's bytes from its place in the span and
 * was never asked of the fetcher; a span comes back saying what its reads
 * asked.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "frontend-fuzz.h"
#include "ipc-messages.h"
#include "limits-staging.h"

enum op {
  OP_REQUEST, OP_RAW, OP_HEADER, OP_ANSWER, OP_EXIT, OP_STAGE_WANTED, OP_STAGED,
  OP_STAGED_READ, OP_COUNT
};

/* The client sends a request; a write with data. */
static void
send_request (uint16_t type, uint16_t flags, uint64_t offset, uint32_t count, uint8_t seed)
{
  static uint8_t buf[NBD_REQUEST_SIZE + 65536];
  struct { uint32_t magic; uint16_t flags, type; uint64_t cookie, offset; uint32_t count; }
  __attribute__((packed)) h;

  h.magic = htobe32 (NBD_REQUEST_MAGIC);
  h.flags = htobe16 (flags);
  h.type = htobe16 (type);
  h.cookie = 0;                         /* the driver writes its own */
  h.offset = htobe64 (offset);
  h.count = htobe32 (count);
  memcpy (buf, &h, sizeof h);
  if (type == NBD_CMD_WRITE && count <= sizeof buf - NBD_REQUEST_SIZE) {
    uint32_t i;
    for (i = 0; i < count; i++)
      buf[NBD_REQUEST_SIZE + i] = (uint8_t) (i * 7 + seed);
  }
  else
    count = 0;
  fz_client_send (buf, NBD_REQUEST_SIZE + count, sizeof buf);
}

static void
client_request (struct fuzz_input *in)
{
  static const uint16_t types[] = {
    NBD_CMD_READ, NBD_CMD_READ, NBD_CMD_WRITE, NBD_CMD_FLUSH, NBD_CMD_CACHE,
    NBD_CMD_BLOCK_STATUS,
  };
  uint8_t t = fuzz_u8 (in), f = fuzz_u8 (in);
  uint16_t type = types[t % (sizeof types / sizeof types[0])];
  uint64_t offset = fuzz_u64 (in), size = fz.setup.size;
  uint32_t count = (uint32_t) fuzz_u16 (in) + 1;

  /* Mostly inside the export, sometimes anything. */
  if (!(t & 0x80) && size > 0)
    offset %= size;
  if (type == NBD_CMD_FLUSH)
    offset = count = 0;
  send_request (type, f & 0x1f, offset, count, t);
}

/* A span of the driver's table in this state, if any (the choice'th of
 * them, round). */
static const struct fz_span *
span_in_state (unsigned state, uint8_t choice)
{
  unsigned i, n = 0;

  for (i = 0; i < fz.nspans; i++)
    n += fz.spans[i].state == state;
  if (n == 0)
    return NULL;
  choice %= n;
  for (i = 0; i < fz.nspans; i++)
    if (fz.spans[i].state == state && choice-- == 0)
      return &fz.spans[i];
  return NULL;
}

/* The fetcher asks for staging spans: mostly well formed. */
static void
fetcher_stage_wanted (struct fuzz_input *in)
{
  uint8_t a = fuzz_u8 (in);
  struct ipc_header h = { .type = IPC_STAGE_WANTED };

  if (a & 0x80)
    h.offset = 1 + (a & 0x0f);          /* a field it does not use */
  fz_fetcher_write (&h, sizeof h);
}

/* The fetcher stages bytes: mostly into a span it holds, inside the
 * export; sometimes past the export's end, longer than a span, into a
 * span not lent, or into a span staged already (the driver's model says
 * which the front-end must take, and fills the span for those). */
static void
fetcher_staged (struct fuzz_input *in)
{
  uint8_t a = fuzz_u8 (in), b = fuzz_u8 (in);
  uint64_t size = fz.setup.size, offset = fuzz_u64 (in);
  uint32_t length = 1 + fuzz_u32 (in) % STAGE_SPAN_BYTES;
  const struct fz_span *s = span_in_state ((a & 0x07) == 1 ? FZ_SPAN_STAGED : FZ_SPAN_HELD, b);
  struct ipc_header h = { .type = IPC_STAGED };

  if ((a & 0x07) == 2 || s == NULL)
    h.area_offset = (uint64_t) (b % 8) * STAGE_SPAN_BYTES;   /* perhaps lent */
  else
    h.area_offset = s->area_offset;
  if (!(a & 0x08) && length > size)
    length = (uint32_t) (size > 0 ? size : 1);
  if (!(a & 0x10) && size >= length)
    offset %= size - length + 1;        /* inside the export */
  else if (a & 0x20)
    offset = size - length + 1;         /* one byte past its end */
  if (a & 0x40)
    length = STAGE_SPAN_BYTES + 1 + (b & 1) * fuzz_u16 (in);
  h.offset = offset;
  h.length = length;
  fz_fetcher_write (&h, sizeof h);
}

/* The client reads inside a staged span: mostly wholly, sometimes
 * across its end. */
static void
client_staged_read (struct fuzz_input *in)
{
  uint8_t a = fuzz_u8 (in);
  uint32_t at = fuzz_u32 (in), count = (uint32_t) fuzz_u16 (in) + 1;
  const struct fz_span *s = span_in_state (FZ_SPAN_STAGED, a);
  uint64_t offset;

  if (s == NULL)
    return;
  offset = s->offset + at % s->length;
  if (!(a & 0x80) && count > s->offset + s->length - offset)
    count = (uint32_t) (s->offset + s->length - offset);
  send_request (NBD_CMD_READ, 0, offset, count, a);
}

/* A header that passes some of the front-end's checks. */
static void
fetcher_header (struct fuzz_input *in)
{
  static const uint16_t types[] = {
    IPC_REPLY, IPC_REPLY, IPC_REPLY, IPC_PIPE_DISCARD, IPC_FETCHER_OPENED, IPC_READ,
    IPC_FETCHER_STARTED,
  };
  uint8_t a = fuzz_u8 (in), b = fuzz_u8 (in);
  struct ipc_header h = { .type = types[a % (sizeof types / sizeof types[0])] };

  if (a & 0x08)
    h.type = fuzz_u16 (in);
  if (fz.nsent > 0 && !(a & 0x10)) {
    unsigned k = b % fz.nsent;
    h.id = fz.sent[k].id;
    /* Answered now, as far as the driver's fetcher knows. */
    memmove (&fz.sent[k], &fz.sent[k + 1], (fz.nsent - k - 1) * sizeof fz.sent[0]);
    fz.nsent--;
  }
  else if (!(b & 1))
    h.id = fuzz_u64 (in);
  if (a & 0x20)
    h.flags = (b & 2) ? IPC_REPLY_PIPED : fuzz_u16 (in);
  if (a & 0x40)
    h.error = (b & 4) ? EIO : fuzz_u32 (in);
  if (b & 0x08)
    h.length = (b & 0x10) ? fuzz_u16 (in) : fuzz_u32 (in);
  if (b & 0x20)
    h.offset = fuzz_u64 (in);
  if (b & 0x40)
    h.payload_len = fuzz_u32 (in);
  if (b & 0x80)
    h.area_offset = fuzz_u64 (in);
  fz_fetcher_write (&h, sizeof h);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct fuzz_input in = { data, size, 0 };
  unsigned ops = 0;

  fz_begin_transmission (&in);
  /* Bounded: every operation takes at least one byte. */
  while (fuzz_left (&in) > 0 && fz.c && !fz.c->dead && ops++ < 1000) {
    const uint8_t *p;
    size_t n;
    switch (fuzz_u8 (&in) % OP_COUNT) {
    case OP_REQUEST:
      client_request (&in);
      break;
    case OP_RAW:
      n = fuzz_span (&in, fuzz_u8 (&in), &p);
      fz_fetcher_write (p, n);
      break;
    case OP_HEADER:
      fetcher_header (&in);
      break;
    case OP_ANSWER:
      fz_fetcher_answer (1 + fuzz_u8 (&in) % 8, (unsigned) fuzz_u8 (&in) * 4);
      break;
    case OP_EXIT:
      fz_fetcher_exit ();
      break;
    case OP_STAGE_WANTED:
      fetcher_stage_wanted (&in);
      break;
    case OP_STAGED:
      fetcher_staged (&in);
      break;
    case OP_STAGED_READ:
      client_staged_read (&in);
      break;
    }
  }
  fz_end ();
  return 0;
}
