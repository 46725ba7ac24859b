/* wire.c: the bounded reader and writer (see wire.h). */
#include <endian.h>

#include "wire.h"

int
reader_get_bytes (struct reader *r, void *out, size_t n)
{
  if (n > reader_remaining (r))
    return -1;
  if (n > 0)
    memcpy (out, r->data + r->pos, n);
  r->pos += n;
  return 0;
}

int
reader_get_span (struct reader *r, const uint8_t **out, size_t n)
{
  if (n > reader_remaining (r))
    return -1;
  *out = r->data + r->pos;
  r->pos += n;
  return 0;
}

int
reader_skip (struct reader *r, size_t n)
{
  if (n > reader_remaining (r))
    return -1;
  r->pos += n;
  return 0;
}

int
reader_get_u8 (struct reader *r, uint8_t *v)
{
  return reader_get_bytes (r, v, 1);
}

#define DEFINE_GET(name, type, conv)                    \
  int                                                   \
  name (struct reader *r, type *v)                      \
  {                                                     \
    type raw;                                           \
    if (reader_get_bytes (r, &raw, sizeof raw) == -1)   \
      return -1;                                        \
    *v = conv (raw);                                    \
    return 0;                                           \
  }
#define NATIVE(x) (x)
DEFINE_GET (reader_get_u16_be, uint16_t, be16toh)
DEFINE_GET (reader_get_u32_be, uint32_t, be32toh)
DEFINE_GET (reader_get_u64_be, uint64_t, be64toh)
DEFINE_GET (reader_get_u16_ne, uint16_t, NATIVE)
DEFINE_GET (reader_get_u32_ne, uint32_t, NATIVE)
DEFINE_GET (reader_get_u64_ne, uint64_t, NATIVE)

int
reader_get_string (struct reader *r, char *out, size_t n, size_t max)
{
  if (n > max || n > reader_remaining (r))
    return -1;
  if (memchr (r->data + r->pos, '\0', n) != NULL)
    return -1;
  memcpy (out, r->data + r->pos, n);
  out[n] = '\0';
  r->pos += n;
  return 0;
}

int
reader_end (const struct reader *r)
{
  return reader_remaining (r) == 0 ? 0 : -1;
}

int
writer_put_bytes (struct writer *w, const void *p, size_t n)
{
  if (n > w->cap - w->pos)        /* cannot underflow: pos <= cap */
    return -1;
  if (n > 0)
    memcpy (w->data + w->pos, p, n);
  w->pos += n;
  return 0;
}

int
writer_put_u16_be (struct writer *w, uint16_t v)
{
  v = htobe16 (v);
  return writer_put_bytes (w, &v, sizeof v);
}

int
writer_put_u32_be (struct writer *w, uint32_t v)
{
  v = htobe32 (v);
  return writer_put_bytes (w, &v, sizeof v);
}

int
writer_put_u64_be (struct writer *w, uint64_t v)
{
  v = htobe64 (v);
  return writer_put_bytes (w, &v, sizeof v);
}
