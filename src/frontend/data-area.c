/*
 * data-area.c: a fetcher's data area as the front-end maps it, and its
 * allocator: each READ and WRITE takes a run of chunks for its data, and
 * gives them back once its reply is sent (data-path.h: DATA_AREA_*).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "data-area.h"
#include "data-path.h"
#include "log.h"

/* First fit of need chunks (1 .. DATA_AREA_CHUNKS), counted in the
 * budget or not. */
static int
take_run (struct data_area *a, uint32_t need, bool counted, struct area_span *span)
{
  uint32_t first = 0, run = 0, i;

  /* DATA_AREA_CHUNKS steps at most. */
  for (i = 0; i < DATA_AREA_CHUNKS; i++) {
    if (a->used[i]) {
      run = 0;
      continue;
    }
    if (run++ == 0)
      first = i;
    if (run == need) {
      memset (&a->used[first], 1, need);
      if (counted)
        a->chunks_used += need;
      a->refs++;
      *span = (struct area_span) {
        .area = a, .first = first, .count = need, .beyond_budget = !counted,
      };
      return 0;
    }
  }
  return -1;
}

int
area_take (struct data_area *a, uint32_t len, struct area_span *span)
{
  /* len >= 1 and <= NBD_MAX_REQUEST_SIZE < DATA_AREA_SIZE: 1 .. CHUNKS. */
  uint32_t need = (len + DATA_AREA_CHUNK - 1) / DATA_AREA_CHUNK;

  /* Over the budget, wait for replies to free some; with nothing held,
   * any request fits (the area holds two of the largest). */
  if (a->chunks_used > 0 && a->chunks_used + need > a->budget)
    return -1;
  return take_run (a, need, true, span);
}

int
area_take_beyond_budget (struct data_area *a, uint32_t len, struct area_span *span)
{
  return take_run (a, (len + DATA_AREA_CHUNK - 1) / DATA_AREA_CHUNK, false, span);
}

uint8_t *
area_address (const struct area_span *span)
{
  return span->area->base + (size_t) span->first * DATA_AREA_CHUNK;
}

void
area_unref (struct data_area *a)
{
  if (--a->refs == 0) {                 /* refs >= 1 while referenced */
    munmap (a->base, DATA_AREA_SIZE);
    free (a);
  }
}

void
area_release (struct area_span *span)
{
  if (span->area == NULL)
    return;
  /* A read that came here instead of through the data pipe (now and then,
   * see fetcher-direct.c): its pages go back to the kernel, or such reads
   * would spread over the client's whole budget, memory the pipe's reads
   * never touch.  On a shared memfd mapping MADV_REMOVE frees them for
   * both processes; the next use finds zeroes. */
  if (span->punch)
    (void) madvise (area_address (span), (size_t) span->count * DATA_AREA_CHUNK,
                    MADV_REMOVE);
  memset (&span->area->used[span->first], 0, span->count);
  if (!span->beyond_budget)
    span->area->chunks_used -= span->count;   /* counted when taken */
  area_unref (span->area);
  span->area = NULL;
}

/* Map a data area the supervisor made; it must be sealed against resizing
 * (see make_data_area), or touching it could fault.  memory: the client's
 * share of it (--client-memory). */
struct data_area *
area_map (int fd, uint32_t memory)
{
  const int want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
  struct data_area *a;
  int seals = fcntl (fd, F_GET_SEALS);

  if (seals == -1 || (seals & want) != want) {
    warn ("a fetcher's data area is not sealed: refusing it");
    return NULL;
  }
  a = calloc (1, sizeof *a);
  if (a == NULL)
    fatal_errno ("calloc");
  a->base = mmap (NULL, DATA_AREA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (a->base == MAP_FAILED) {
    warn_errno ("mapping a fetcher's data area");
    free (a);
    return NULL;
  }
  a->refs = 1;                          /* the client's */
  /* At least one chunk (checked at configuration), at most the area. */
  a->budget = (memory + DATA_AREA_CHUNK - 1) / DATA_AREA_CHUNK;
  return a;
}
