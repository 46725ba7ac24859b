/*
 * fuzz-wire: the bounded reader and writer (src/common/wire.c) under random
 * sequences of gets and puts.
 *
 * Input: two bytes of length, that many bytes for the reader, then
 * operations (a byte each, some with a size byte).  A writer of a size
 * the input picks runs beside the reader.
 *
 * Checked against the documented contract (wire.h): a get succeeds
 * exactly when its bytes are there (and for strings: within max, no
 * NUL), consumes exactly them on success and nothing on failure, and
 * leaves the output untouched on failure; numbers decode in the order
 * the name says; reader_end succeeds exactly at the end; a put fits
 * exactly when there is room and leaves the writer unchanged otherwise;
 * what is put reads back the same.
 */
#include <string.h>

#include "fuzz.h"
#include "wire.h"

enum op {
  OP_U8, OP_U16_BE, OP_U32_BE, OP_U64_BE, OP_U16_NE, OP_U32_NE, OP_U64_NE,
  OP_BYTES, OP_SPAN, OP_STRING, OP_SKIP, OP_END,
  OP_PUT16, OP_PUT32, OP_PUT64, OP_PUT_BYTES, OP_COUNT
};

static uint64_t
expect_number (const uint8_t *p, unsigned n, bool big_endian)
{
  uint64_t v = 0;
  unsigned i;
  for (i = 0; i < n; i++)
    v |= (uint64_t) p[i] << (8 * (big_endian ? n - 1 - i : i));
  return v;
}

/* A numeric get of n bytes through the function under test. */
static void
check_number (struct reader *r, enum op op)
{
  static const unsigned widths[] = { 1, 2, 4, 8, 2, 4, 8 };
  unsigned n = widths[op];
  bool be = op >= OP_U16_BE && op <= OP_U64_BE;
  size_t before = r->pos, left = reader_remaining (r);
  /* Each output starts as 0x5a bytes: a failed get must leave it so. */
  uint8_t v8 = 0x5a;
  uint16_t v16 = 0x5a5a;
  uint32_t v32 = 0x5a5a5a5a;
  uint64_t v64 = UINT64_C (0x5a5a5a5a5a5a5a5a), got;
  int rc;

  switch (op) {
  case OP_U8: rc = reader_get_u8 (r, &v8); got = v8; break;
  case OP_U16_BE: rc = reader_get_u16_be (r, &v16); got = v16; break;
  case OP_U32_BE: rc = reader_get_u32_be (r, &v32); got = v32; break;
  case OP_U64_BE: rc = reader_get_u64_be (r, &v64); got = v64; break;
  case OP_U16_NE: rc = reader_get_u16_ne (r, &v16); got = v16; break;
  case OP_U32_NE: rc = reader_get_u32_ne (r, &v32); got = v32; break;
  case OP_U64_NE: rc = reader_get_u64_ne (r, &v64); got = v64; break;
  default: abort ();
  }
  if (n > left) {
    FUZZ_CHECK (rc == -1 && r->pos == before, "get of %u bytes with %zu left", n, left);
    FUZZ_CHECK (got == (UINT64_C (0x5a5a5a5a5a5a5a5a) >> (64 - 8 * n)),
                "output changed by a failed get");
    return;
  }
  FUZZ_CHECK (rc == 0 && r->pos == before + n, "get of %u bytes with %zu left", n, left);
  FUZZ_CHECK (got == expect_number (r->data + before, n, be), "value of a %u byte get", n);
}

/* Span-like gets: bytes, span, string, skip. */
static void
check_block (struct reader *r, enum op op, size_t n, size_t max)
{
  static uint8_t out[300];
  const uint8_t *span = NULL;
  size_t before = r->pos, left = reader_remaining (r);
  bool fits = n <= left;
  int rc;

  memset (out, 0xa5, sizeof out);
  switch (op) {
  case OP_BYTES: rc = reader_get_bytes (r, out, n); break;
  case OP_SPAN: rc = reader_get_span (r, &span, n); break;
  case OP_STRING:
    rc = reader_get_string (r, (char *) out, n, max);
    fits = fits && n <= max && memchr (r->data + before, '\0', n) == NULL;
    break;
  default: rc = reader_skip (r, n); break;
  }
  if (!fits) {
    size_t i;
    FUZZ_CHECK (rc == -1 && r->pos == before, "op %d of %zu (max %zu) with %zu left "
                "did not fail cleanly", op, n, max, left);
    for (i = 0; i < sizeof out; i++)
      FUZZ_CHECK (out[i] == 0xa5, "a failed get wrote its output");
    FUZZ_CHECK (span == NULL, "a failed span pointed somewhere");
    return;
  }
  FUZZ_CHECK (rc == 0 && r->pos == before + n, "op %d of %zu with %zu left", op, n, left);
  if (op == OP_BYTES || op == OP_STRING)
    FUZZ_CHECK (memcmp (out, r->data + before, n) == 0, "bytes copied");
  if (op == OP_STRING)
    FUZZ_CHECK (out[n] == 0 && out[n + 1] == 0xa5, "string terminated");
  if (op == OP_BYTES)
    FUZZ_CHECK (out[n] == 0xa5, "bytes beyond the get written");
  if (op == OP_SPAN)
    FUZZ_CHECK (span == r->data + before, "span");
}

static void
check_put (struct writer *w, enum op op, uint64_t v, const uint8_t *bytes, size_t n)
{
  static uint8_t snapshot[256];
  size_t before = w->pos, width = op == OP_PUT16 ? 2 : op == OP_PUT32 ? 4 : op == OP_PUT64 ? 8 : n;
  int rc;

  memcpy (snapshot, w->data, w->cap);
  switch (op) {
  case OP_PUT16: rc = writer_put_u16_be (w, (uint16_t) v); break;
  case OP_PUT32: rc = writer_put_u32_be (w, (uint32_t) v); break;
  case OP_PUT64: rc = writer_put_u64_be (w, v); break;
  default: rc = writer_put_bytes (w, bytes, n); break;
  }
  if (width > w->cap - before) {
    FUZZ_CHECK (rc == -1 && w->pos == before && memcmp (snapshot, w->data, w->cap) == 0,
                "a put that does not fit changed the writer");
    return;
  }
  FUZZ_CHECK (rc == 0 && w->pos == before + width, "put of %zu bytes", width);
  FUZZ_CHECK (memcmp (snapshot, w->data, before) == 0 &&
              memcmp (snapshot + w->pos, w->data + w->pos, w->cap - w->pos) == 0,
              "a put wrote outside its bytes");
  if (op == OP_PUT_BYTES)
    FUZZ_CHECK (memcmp (w->data + before, bytes, n) == 0, "bytes put");
  else {
    /* Read back with the reader. */
    struct reader r;
    uint16_t a;
    uint32_t b;
    uint64_t c;
    reader_init (&r, w->data + before, width);
    FUZZ_CHECK (op == OP_PUT16 ? reader_get_u16_be (&r, &a) == 0 && a == (uint16_t) v
                : op == OP_PUT32 ? reader_get_u32_be (&r, &b) == 0 && b == (uint32_t) v
                : reader_get_u64_be (&r, &c) == 0 && c == v, "put then get");
    FUZZ_CHECK (reader_end (&r) == 0, "put wrote %zu bytes", width);
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct fuzz_input in = { data, size, 0 };
  uint16_t rlen = fuzz_u16 (&in);
  uint8_t wcap = fuzz_u8 (&in);
  static uint8_t wbuf[256];
  const uint8_t *rdata;
  struct reader r;
  struct writer w;
  size_t n = fuzz_span (&in, rlen, &rdata);

  reader_init (&r, rdata, n);
  writer_init (&w, wbuf, wcap);
  memset (wbuf, 0, sizeof wbuf);
  while (fuzz_left (&in) > 0) {
    enum op op = (enum op) (fuzz_u8 (&in) % OP_COUNT);
    const uint8_t *p;
    size_t k;

    switch (op) {
    case OP_BYTES: case OP_SPAN: case OP_STRING: case OP_SKIP:
      k = fuzz_u8 (&in);
      check_block (&r, op, k, fuzz_u8 (&in));
      break;
    case OP_END:
      FUZZ_CHECK ((reader_end (&r) == 0) == (reader_remaining (&r) == 0), "reader_end");
      break;
    case OP_PUT16: case OP_PUT32: case OP_PUT64:
      check_put (&w, op, fuzz_u64 (&in), NULL, 0);
      break;
    case OP_PUT_BYTES:
      k = fuzz_span (&in, fuzz_u8 (&in) % 64, &p);
      check_put (&w, op, 0, p, k);
      break;
    default:
      check_number (&r, op);
      break;
    }
    FUZZ_CHECK (r.pos <= r.len && w.pos <= w.cap, "invariant pos <= len");
  }
  return 0;
}
