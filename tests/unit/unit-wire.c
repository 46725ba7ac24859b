/* unit-wire.c: the bounded reader and writer (src/common/wire.c), TAP output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "wire.h"

int
main (void)
{
  static const uint8_t be[] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e };
  struct reader r;
  struct writer w;
  uint8_t u8, buf[16];
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  const uint8_t *span;
  char str[8];

  reader_init (&r, be, sizeof be);
  CHECK (reader_get_u16_be (&r, &u16) == 0 && u16 == 0x0102, "u16 big-endian");
  CHECK (reader_get_u32_be (&r, &u32) == 0 && u32 == 0x03040506, "u32 big-endian");
  CHECK (reader_get_u64_be (&r, &u64) == 0 && u64 == UINT64_C (0x0708090a0b0c0d0e),
         "u64 big-endian");
  CHECK (reader_remaining (&r) == 0 && reader_end (&r) == 0, "end after exact consumption");
  CHECK (reader_get_u8 (&r, &u8) == -1, "get past the end fails");

  /* A failed get consumes nothing. */
  reader_init (&r, be, 3);
  CHECK (reader_get_u32_be (&r, &u32) == -1 && r.pos == 0, "short u32 fails, consumes nothing");
  CHECK (reader_get_u16_be (&r, &u16) == 0 && r.pos == 2, "then u16 succeeds");
  CHECK (reader_end (&r) == -1, "end fails with a byte left");
  CHECK (reader_skip (&r, 2) == -1 && r.pos == 2, "skip past the end fails");
  CHECK (reader_skip (&r, 1) == 0 && reader_end (&r) == 0, "skip to the end");

  /* Huge lengths must not wrap around the bounds check. */
  reader_init (&r, be, sizeof be);
  CHECK (reader_get_span (&r, &span, SIZE_MAX) == -1 && r.pos == 0, "SIZE_MAX span refused");
  CHECK (reader_get_bytes (&r, buf, (size_t) -2) == -1, "huge copy refused");
  CHECK (reader_get_span (&r, &span, 4) == 0 && span == be && r.pos == 4, "span points in place");

  /* Strings: bounded, no embedded NUL, always terminated. */
  {
    static const uint8_t s[] = { 'a', 'b', 'c', 0, 'd' };
    reader_init (&r, s, sizeof s);
    CHECK (reader_get_string (&r, str, 3, 7) == 0 && strcmp (str, "abc") == 0, "string read");
    reader_init (&r, s, sizeof s);
    CHECK (reader_get_string (&r, str, 5, 7) == -1 && r.pos == 0, "embedded NUL refused");
    reader_init (&r, s, sizeof s);
    CHECK (reader_get_string (&r, str, 3, 2) == -1, "string over max refused");
    reader_init (&r, s, 2);
    CHECK (reader_get_string (&r, str, 3, 7) == -1, "string past the end refused");
  }

  /* Native-order getters for internal messages. */
  {
    uint32_t v = 0xdeadbeef, got;
    reader_init (&r, &v, sizeof v);
    CHECK (reader_get_u32_ne (&r, &got) == 0 && got == v, "u32 native order");
  }

  /* Writer. */
  writer_init (&w, buf, 10);
  CHECK (writer_put_u64_be (&w, UINT64_C (0x1122334455667788)) == 0 && buf[0] == 0x11 &&
         buf[7] == 0x88, "u64 put big-endian");
  CHECK (writer_put_u32_be (&w, 1) == -1 && w.pos == 8, "put that does not fit fails whole");
  CHECK (writer_put_u16_be (&w, 0xabcd) == 0 && w.pos == 10 && buf[8] == 0xab, "u16 fills it");
  CHECK (writer_put_bytes (&w, "x", 1) == -1, "full writer refuses");
  CHECK (writer_put_bytes (&w, "", 0) == 0, "empty put on a full writer");

  printf ("1..%d\n", tests);
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
