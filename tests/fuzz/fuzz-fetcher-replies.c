/*
 * fuzz-fetcher-replies: the front-end's reading of a hostile fetcher
 * (transmission_read_fetcher and what it accepts: IPC_REPLY,
 * IPC_PIPE_DISCARD, IPC_FETCHER_STARTED and IPC_FETCHER_OPENED out of turn, anything else).
 *
 * Input: the 6 setup bytes of fuzz-transmission, then operations: the
 * client sends a request (type, flags, offset, length, and a write's
 * data); the fetcher writes raw bytes, or a header made to pass some
 * checks (an id the front-end is waiting for, a type it takes); the
 * fetcher answers properly; the fetcher exits.  At the end the fetcher
 * exits, failing what is left.
 *
 * Checked (frontend-driver.c): whatever the fetcher sends, each client
 * request gets exactly one well-formed reply (EIO when the fetcher broke
 * the rules), read data comes from that read's own place, pipe bytes are
 * announced within bounds, pipe discards taken never outnumber the
 * requests in flight (each read's reply balances one), the queues'
 * memory stays under CLIENT_QUEUE_MEMORY_LIMIT, no fatal(), the data area
 * and pipe references balance.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "frontend-fuzz.h"
#include "ipc-messages.h"

enum op { OP_REQUEST, OP_RAW, OP_HEADER, OP_ANSWER, OP_EXIT, OP_COUNT };

static void
client_request (struct fuzz_input *in)
{
  static const uint16_t types[] = {
    NBD_CMD_READ, NBD_CMD_READ, NBD_CMD_WRITE, NBD_CMD_FLUSH, NBD_CMD_CACHE,
    NBD_CMD_BLOCK_STATUS,
  };
  static uint8_t buf[NBD_REQUEST_SIZE + 65536];
  uint8_t t = fuzz_u8 (in), f = fuzz_u8 (in);
  uint16_t type = types[t % (sizeof types / sizeof types[0])];
  uint64_t offset = fuzz_u64 (in), size = fz.setup.size;
  uint32_t count = (uint32_t) fuzz_u16 (in) + 1;
  struct { uint32_t magic; uint16_t flags, type; uint64_t cookie, offset; uint32_t count; }
  __attribute__((packed)) h;

  /* Mostly inside the export, sometimes anything. */
  if (!(t & 0x80) && size > 0)
    offset %= size;
  if (type == NBD_CMD_FLUSH)
    offset = count = 0;
  h.magic = htobe32 (NBD_REQUEST_MAGIC);
  h.flags = htobe16 (f & 0x1f);
  h.type = htobe16 (type);
  h.cookie = 0;                         /* the driver writes its own */
  h.offset = htobe64 (offset);
  h.count = htobe32 (count);
  memcpy (buf, &h, sizeof h);
  if (type == NBD_CMD_WRITE) {
    uint32_t i;
    for (i = 0; i < count; i++)
      buf[NBD_REQUEST_SIZE + i] = (uint8_t) (i * 7 + t);
  }
  else
    count = 0;
  fz_client_send (buf, NBD_REQUEST_SIZE + count, sizeof buf);
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
    }
  }
  fz_end ();
  return 0;
}
