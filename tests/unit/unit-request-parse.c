/* unit-request-parse.c: the transmission request parser and its checks
 * (request-parse.c) against hostile input, TAP output. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "limits-nbd.h"
#include "request-parse.h"
#include "unit.h"
#include "wire.h"

#define EXPORT_SIZE (UINT64_C (1) << 30)

static const struct request_rules writable = {
  .export_size = EXPORT_SIZE,
  .eflags = NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH | NBD_FLAG_SEND_FUA | NBD_FLAG_SEND_DF,
  .structured = true, .base_allocation = true,
};
static const struct request_rules simple_ro = {
  .export_size = EXPORT_SIZE,
  .eflags = NBD_FLAG_HAS_FLAGS | NBD_FLAG_READ_ONLY,
};

static uint32_t
check (const struct request_rules *rules, uint16_t type, uint16_t flags, uint64_t offset,
       uint32_t count)
{
  const struct client_request req = {
    .magic = NBD_REQUEST_MAGIC, .type = type, .flags = flags, .offset = offset, .count = count,
  };
  return check_request (rules, &req);
}

static void
headers (void)
{
  uint8_t buf[NBD_REQUEST_SIZE + 1];
  struct client_request req;
  struct writer w;

  writer_init (&w, buf, sizeof buf);
  PUT (writer_put_u32_be (&w, NBD_REQUEST_MAGIC));
  PUT (writer_put_u16_be (&w, NBD_CMD_FLAG_FUA));
  PUT (writer_put_u16_be (&w, NBD_CMD_WRITE));
  PUT (writer_put_u64_be (&w, UINT64_C (0x0102030405060708)));
  PUT (writer_put_u64_be (&w, UINT64_C (0x1122334455667788)));
  PUT (writer_put_u32_be (&w, 0xa0b0c0d0));
  CHECK (parse_request (buf, NBD_REQUEST_SIZE, &req) == REQUEST_COMPLETE &&
         req.flags == NBD_CMD_FLAG_FUA && req.type == NBD_CMD_WRITE &&
         req.cookie == UINT64_C (0x0102030405060708) &&
         req.offset == UINT64_C (0x1122334455667788) && req.count == 0xa0b0c0d0,
         "request header decoded big-endian");
  CHECK (parse_request (buf, NBD_REQUEST_SIZE + 1, &req) == REQUEST_COMPLETE,
         "bytes after a header are the next request's");
  CHECK (parse_request (buf, NBD_REQUEST_SIZE - 1, &req) == REQUEST_INCOMPLETE,
         "truncated header waits");
  CHECK (parse_request (buf, 0, &req) == REQUEST_INCOMPLETE, "nothing waits");
  buf[0] ^= 0x80;
  CHECK (parse_request (buf, NBD_REQUEST_SIZE, &req) == REQUEST_BAD_MAGIC &&
         req.magic == (NBD_REQUEST_MAGIC ^ 0x80000000u), "bad magic refused, and named");
}

static void
reads (void)
{
  CHECK (check (&writable, NBD_CMD_READ, 0, 0, 4096) == 0, "read");
  CHECK (check (&writable, NBD_CMD_READ, 0, EXPORT_SIZE - 4096, 4096) == 0,
         "read up to the end");
  CHECK (check (&writable, NBD_CMD_READ, 0, 0, 0) == EINVAL, "zero-length read refused");
  CHECK (check (&writable, NBD_CMD_READ, 0, 0, NBD_MAX_REQUEST_SIZE) == 0, "largest read");
  CHECK (check (&writable, NBD_CMD_READ, 0, 0, NBD_MAX_REQUEST_SIZE + 1) == EINVAL,
         "read over the request limit refused");
  CHECK (check (&writable, NBD_CMD_READ, 0, EXPORT_SIZE - 4095, 4096) == EINVAL,
         "read past the end refused");
  CHECK (check (&writable, NBD_CMD_READ, 0, EXPORT_SIZE, 1) == EINVAL,
         "read at the end refused");
  CHECK (check (&writable, NBD_CMD_READ, 0, UINT64_MAX - 100, 4096) == EINVAL,
         "read whose offset + length wraps refused");
  CHECK (check (&writable, NBD_CMD_READ, NBD_CMD_FLAG_DF | NBD_CMD_FLAG_FUA, 0, 1) == 0,
         "read with DF and FUA");
  CHECK (check (&simple_ro, NBD_CMD_READ, NBD_CMD_FLAG_DF, 0, 1) == EINVAL,
         "DF without structured replies refused");
  CHECK (check (&simple_ro, NBD_CMD_READ, NBD_CMD_FLAG_FUA, 0, 1) == EINVAL,
         "FUA not advertised refused");
  CHECK (check (&writable, NBD_CMD_READ, NBD_CMD_FLAG_NO_HOLE, 0, 1) == EINVAL,
         "read with another command's flag refused");
  CHECK (check (&writable, NBD_CMD_READ, 1u << 15, 0, 1) == EINVAL, "unknown flag refused");
  {
    struct request_rules empty = writable;
    empty.export_size = 0;
    CHECK (check (&empty, NBD_CMD_READ, 0, 0, 1) == EINVAL, "read of an empty export refused");
  }
  {
    /* The largest export: the range check itself must not overflow. */
    struct request_rules huge = writable;
    huge.export_size = UINT64_MAX;
    CHECK (check (&huge, NBD_CMD_READ, 0, UINT64_MAX - 4096, 4096) == 0,
           "read at the end of a 2^64-1 byte export");
    CHECK (check (&huge, NBD_CMD_READ, 0, UINT64_MAX - 4095, 4096) == EINVAL,
           "and one byte past it refused");
  }
}

static void
writes (void)
{
  CHECK (check (&writable, NBD_CMD_WRITE, NBD_CMD_FLAG_FUA, 0, 4096) == 0, "write with FUA");
  CHECK (check (&simple_ro, NBD_CMD_WRITE, 0, 0, 4096) == EPERM, "write to read-only refused");
  CHECK (check (&writable, NBD_CMD_WRITE, 0, 0, 0) == EINVAL, "zero-length write refused");
  CHECK (check (&writable, NBD_CMD_WRITE, 0, 0, NBD_MAX_REQUEST_SIZE + 1) == EINVAL,
         "write over the request limit refused");
  CHECK (check (&writable, NBD_CMD_WRITE, 0, EXPORT_SIZE - 1, 2) == ENOSPC,
         "write past the end: no space");
  CHECK (check (&writable, NBD_CMD_WRITE, 0, UINT64_MAX, 1) == ENOSPC,
         "write whose offset + length wraps: no space");
  CHECK (check (&writable, NBD_CMD_WRITE, NBD_CMD_FLAG_DF, 0, 1) == EINVAL,
         "write with DF refused");
}

static void
others (void)
{
  CHECK (check (&writable, NBD_CMD_FLUSH, 0, 0, 0) == 0, "flush");
  CHECK (check (&writable, NBD_CMD_FLUSH, 0, 0, 1) == EINVAL, "flush with a length refused");
  CHECK (check (&writable, NBD_CMD_FLUSH, 0, 512, 0) == EINVAL, "flush with an offset refused");
  CHECK (check (&simple_ro, NBD_CMD_FLUSH, 0, 0, 0) == EINVAL, "flush not advertised refused");

  CHECK (check (&writable, NBD_CMD_CACHE, 0, 0, NBD_MAX_REQUEST_SIZE + 1) == 0,
         "cache larger than a read may be");
  CHECK (check (&writable, NBD_CMD_CACHE, 0, 0, UINT32_MAX) == EINVAL,
         "cache past the end refused");
  CHECK (check (&writable, NBD_CMD_CACHE, 0, 0, 0) == EINVAL, "zero-length cache refused");
  CHECK (check (&writable, NBD_CMD_CACHE, 0, UINT64_MAX - 1, 4) == EINVAL,
         "cache whose offset + length wraps refused");

  CHECK (check (&writable, NBD_CMD_BLOCK_STATUS, NBD_CMD_FLAG_REQ_ONE, 0, 4096) == 0,
         "block status");
  CHECK (check (&writable, NBD_CMD_BLOCK_STATUS, 0, 0, 0) == EINVAL,
         "zero-length block status refused");
  CHECK (check (&writable, NBD_CMD_BLOCK_STATUS, 0, EXPORT_SIZE, 1) == EINVAL,
         "block status past the end refused");
  CHECK (check (&simple_ro, NBD_CMD_BLOCK_STATUS, 0, 0, 1) == EINVAL,
         "block status without structured replies refused");
  {
    struct request_rules no_context = writable;
    no_context.base_allocation = false;
    CHECK (check (&no_context, NBD_CMD_BLOCK_STATUS, 0, 0, 1) == EINVAL,
           "block status without base:allocation refused");
  }

  CHECK (check (&writable, NBD_CMD_TRIM, 0, 0, 1) == EINVAL, "trim (not advertised) refused");
  CHECK (check (&writable, NBD_CMD_WRITE_ZEROES, 0, 0, 1) == EINVAL,
         "write zeroes (not advertised) refused");
  CHECK (check (&writable, 99, 0, 0, 1) == EINVAL, "unknown command refused");
  CHECK (check (&writable, UINT16_MAX, 0, 0, 0) == EINVAL, "command 65535 refused");
}

int
main (void)
{
  headers ();
  reads ();
  writes ();
  others ();
  return UNIT_END ();
}
