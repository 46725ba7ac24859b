/*
 * wire.h: the one bounded reader for untrusted bytes, and its writer twin.
 *
 * Every byte from a client, a fetcher or a web server is parsed through a
 * struct reader.  Each get checks the remaining length first, consumes only
 * on success, and returns 0 or -1; a caller must check it (warn_unused).
 * reader_end() fails when bytes are left over, so a message must be exactly
 * as long as its type says.
 *
 * Multi-byte getters named _be read network (big-endian) order for NBD;
 * the _ne ones read native order for internal messages.
 */
#ifndef NBDCURLD_WIRE_H
#define NBDCURLD_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define WIRE_MUST_CHECK __attribute__((warn_unused_result))

struct reader {
  const uint8_t *data;
  size_t len;
  size_t pos;             /* invariant: pos <= len */
};

static inline void
reader_init (struct reader *r, const void *data, size_t len)
{
  r->data = data;
  r->len = len;
  r->pos = 0;
}

static inline size_t
reader_remaining (const struct reader *r)
{
  return r->len - r->pos;         /* cannot underflow: pos <= len */
}

WIRE_MUST_CHECK int reader_get_u8 (struct reader *r, uint8_t *v);
WIRE_MUST_CHECK int reader_get_u16_be (struct reader *r, uint16_t *v);
WIRE_MUST_CHECK int reader_get_u32_be (struct reader *r, uint32_t *v);
WIRE_MUST_CHECK int reader_get_u64_be (struct reader *r, uint64_t *v);
WIRE_MUST_CHECK int reader_get_u16_ne (struct reader *r, uint16_t *v);
WIRE_MUST_CHECK int reader_get_u32_ne (struct reader *r, uint32_t *v);
WIRE_MUST_CHECK int reader_get_u64_ne (struct reader *r, uint64_t *v);
/* Copy exactly n bytes out. */
WIRE_MUST_CHECK int reader_get_bytes (struct reader *r, void *out, size_t n);
/* Point at the next n bytes without copying, and consume them. */
WIRE_MUST_CHECK int reader_get_span (struct reader *r, const uint8_t **out, size_t n);
/* Copy n bytes into out[0..n-1] and NUL-terminate; out must hold n + 1.
 * Fails if n > max or the bytes contain a NUL. */
WIRE_MUST_CHECK int reader_get_string (struct reader *r, char *out, size_t n, size_t max);
WIRE_MUST_CHECK int reader_skip (struct reader *r, size_t n);
/* Succeeds only if every byte was consumed. */
WIRE_MUST_CHECK int reader_end (const struct reader *r);

/* A writer into a caller-sized buffer; a put that does not fit fails and
 * leaves the writer unchanged. */
struct writer {
  uint8_t *data;
  size_t cap;
  size_t pos;             /* invariant: pos <= cap */
};

static inline void
writer_init (struct writer *w, void *data, size_t cap)
{
  w->data = data;
  w->cap = cap;
  w->pos = 0;
}

WIRE_MUST_CHECK int writer_put_u16_be (struct writer *w, uint16_t v);
WIRE_MUST_CHECK int writer_put_u32_be (struct writer *w, uint32_t v);
WIRE_MUST_CHECK int writer_put_u64_be (struct writer *w, uint64_t v);
WIRE_MUST_CHECK int writer_put_bytes (struct writer *w, const void *p, size_t n);

#endif
