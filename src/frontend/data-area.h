/*
 * data-area.h: a fetcher's data area as the front-end maps it, and the
 * parts of it that requests hold (data-area.c).
 */
#ifndef NBDCURLD_DATA_AREA_H
#define NBDCURLD_DATA_AREA_H

#include <stdbool.h>
#include <stdint.h>

#include "data-path.h"

/* A fetcher's data area (data-path.h).  Counted references: the client
 * while the fetcher is attached, and each queued read reply that points
 * into it, so a reply still being written survives its fetcher. */
struct data_area {
  uint8_t *base;                        /* DATA_AREA_SIZE bytes, shared */
  unsigned refs;
  uint32_t chunks_used;                 /* count of 1s in used[] */
  uint32_t budget;                      /* chunks: --client-memory */
  uint8_t used[DATA_AREA_CHUNKS];       /* 1: chunk handed out */
};

/* A part of a data area held by one request. */
struct area_span {
  struct data_area *area;               /* NULL: none */
  uint32_t first, count;                /* chunks */
  bool punch;                           /* give its memory back when released */
  bool beyond_budget;                   /* not counted in chunks_used */
};

/* Map the area the supervisor sent (fd stays the caller's), with a budget
 * of memory bytes for this client: NULL, and a warning, if it cannot be
 * used.  One reference: the client's. */
struct data_area *area_map (int fd, uint32_t memory);
/* Take enough chunks for len bytes (1 .. NBD_MAX_REQUEST_SIZE): -1 when
 * the area has no room now (replies being sent free some). */
int area_take (struct data_area *a, uint32_t len, struct area_span *span);
/* The same, beyond the client's budget (its staging spans, limits-staging.h):
 * -1 only when no run of chunks is free. */
int area_take_beyond_budget (struct data_area *a, uint32_t len, struct area_span *span);
/* Give a span back (none: nothing happens), and its reference. */
void area_release (struct area_span *span);
uint8_t *area_address (const struct area_span *span);
void area_unref (struct data_area *a);

#endif
