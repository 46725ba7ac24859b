/*
 * fuzz-read-cache: the read cache's lookups, inserts, eviction and scan
 * cursor (src/fetcher/read-cache.c, src/common/cache-layout.h) under any
 * sequence of operations by three connections sharing one mapping.
 *
 * Input: a mode byte, a geometry byte, then records of 12 bytes: an
 * operation, a connection (0..2), an offset and a length (4 bytes each,
 * little-endian) and a clock step in milliseconds (2 bytes).
 *   mode & 1: the mapping starts as the input's bytes over and over (as
 *             a compromised fetcher could leave it), and operation 7
 *             writes into it; else it starts empty and nobody writes it
 *             but the cache's own code.
 *   geometry: 1 to 4 sets of CACHE_WAYS blocks of 4 KiB.
 *   operations (op % 8): 0 read, 1 insert (the connection's object's
 *   bytes), 2 holds, 3 scan claim, 4 pin the other object, 5 pin the
 *   first object again, 6 the object changed, 7 a hostile write of the
 *   record's bytes at the offset (mode & 1 only).
 *
 * Checked: nothing is read or written outside the mapping or the buffers
 * (ASan); with an honest mapping, every read the cache answers holds
 * exactly the reading connection's object's bytes, a scan claim is a
 * chunk inside the object, and a range the cache says it holds reads.
 */
#include <string.h>

#include "fuzz.h"
#include "read-cache.h"

#define BLOCK 4096u
#define OBJECT_SIZE (40u * BLOCK + 123)
#define RECORD 12u

static uint8_t objects[2][OBJECT_SIZE];
static uint8_t mapping[4096 + 4096 + 4 * CACHE_WAYS * BLOCK];
static uint8_t out[OBJECT_SIZE];

static uint32_t
le32 (const uint8_t *p)
{
  return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static void
fill_objects (void)
{
  static bool done;

  if (done)
    return;
  for (uint32_t i = 0; i < OBJECT_SIZE; i++) {
    objects[0][i] = (uint8_t) (i * 7 + (i >> 12));
    objects[1][i] = (uint8_t) (i * 13 + 5 + (i >> 12));
  }
  done = true;
}

struct conn {
  struct read_cache c;
  unsigned object;              /* which of objects[] it pinned */
};

static void
pin (struct conn *k, unsigned object)
{
  k->object = object;
  read_cache_pin (&k->c, 1000 + object, OBJECT_SIZE);
}

static void
step (struct conn *k, uint8_t op, uint32_t offset, uint32_t length, uint64_t now,
      bool hostile, const uint8_t *rec, uint32_t nentries)
{
  uint64_t got;

  switch (op % 8) {
  case 0:
    length %= 3 * BLOCK + 1;
    if (read_cache_read (&k->c, offset, length, out, now) && !hostile)
      FUZZ_CHECK (memcmp (out, objects[k->object] + offset, length) == 0,
                  "a hit with other bytes at %u (%u)", offset, length);
    /* What is there from its start: never more than asked, exact. */
    got = read_cache_read_prefix (&k->c, offset, length, out, now);
    FUZZ_CHECK (got <= length, "a prefix of %llu bytes for %u", (unsigned long long) got, length);
    if (got > 0 && !hostile)
      FUZZ_CHECK (memcmp (out, objects[k->object] + offset, got) == 0,
                  "a prefix with other bytes at %u (%llu)", offset, (unsigned long long) got);
    break;
  case 1:
    if (offset < OBJECT_SIZE)
      read_cache_insert (&k->c, offset, length % (OBJECT_SIZE - offset + 1),
                         objects[k->object] + offset, now);
    break;
  case 2:
    length %= 3 * BLOCK + 1;
    if (read_cache_holds (&k->c, offset, length) && !hostile && length > 0)
      FUZZ_CHECK (read_cache_read (&k->c, offset, (uint32_t) length, out, now),
                  "held but not read at %u (%u)", offset, length);
    break;
  case 3:
    got = read_cache_scan_claim (&k->c, BLOCK * (1 + length % 4), OBJECT_SIZE);
    FUZZ_CHECK (got == UINT64_MAX || hostile || got < OBJECT_SIZE, "a claim past the end");
    break;
  case 4: pin (k, 1); break;
  case 5: pin (k, 0); break;
  case 6: read_cache_object_changed (&k->c); break;
  case 7:
    if (hostile) {
      uint64_t size = cache_backing_bytes (nentries, BLOCK);
      memcpy (mapping + offset % (size - RECORD), rec, RECORD);
    }
    break;
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct conn conns[3];
  uint32_t nentries;
  uint64_t now = 1000000;
  bool hostile;

  if (size < 2)
    return 0;
  fill_objects ();
  hostile = (data[0] & 1) != 0;
  nentries = CACHE_WAYS * (1u + data[1] % 4);
  if (hostile)
    for (size_t i = 0; i < sizeof mapping; i++)
      mapping[i] = data[i % size];
  else
    memset (mapping, 0, sizeof mapping);
  for (unsigned i = 0; i < 3; i++) {
    read_cache_init (&conns[i].c, mapping, -1, nentries, BLOCK, i + 1);
    pin (&conns[i], 0);
  }
  data += 2, size -= 2;
  /* Each pass takes one record. */
  for (; size >= RECORD; data += RECORD, size -= RECORD) {
    uint32_t offset = le32 (data + 2) % (OBJECT_SIZE + 1);
    now += (uint64_t) data[10] | (uint64_t) data[11] << 8;
    step (&conns[data[1] % 3], data[0], offset, le32 (data + 6), now, hostile, data,
          nentries);
  }
  return 0;
}
