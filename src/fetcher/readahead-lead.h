/*
 * readahead-lead.h: how far ahead of a forward reader the prefetch store
 * (fetcher-readahead.c) keeps bytes stored or coming (the lead), and in
 * what size of window it asks for them, from what the reader takes a
 * second and how long a window takes to arrive.  Pure arithmetic on the
 * times it is given, so that a test can drive it.
 */
#ifndef NBDCURLD_READAHEAD_LEAD_H
#define NBDCURLD_READAHEAD_LEAD_H

#include <stdbool.h>
#include <stdint.h>

struct readahead_lead {
  uint64_t lead;              /* bytes to keep past the reader, 0: none yet */
  uint32_t max_window;        /* what one window may carry (the store's share) */
  uint64_t rate;              /* bytes the reader took a second, 0: none measured */
  uint64_t fetch_us;          /* a window's time from request to its last
                                 checked byte, smoothed; 0: none arrived */
  /* The measuring interval now open: since when, bytes taken in it, and
   * whether a read had to wait for the store in it. */
  uint64_t interval_start_us;
  uint64_t interval_bytes;
  bool interval_starved;
  uint64_t grown_us;          /* when a waiting read last doubled the lead */
};

/* Set up, or change the largest window (the store's size changed). */
void lead_init (struct readahead_lead *l, uint32_t max_window);
void lead_set_max_window (struct readahead_lead *l, uint32_t max_window);

/* A forward reader needs windows: the lead starts, if it has not, at
 * READAHEAD_MAX_INFLIGHT first windows (READAHEAD_MIN_WINDOW, or four of
 * read_length), or at what a reader at READAHEAD_FIRST_RATE takes in
 * READAHEAD_LEAD_GAIN round trips to the server if that is more
 * (round_trip_us: as the direct reads measured it, 0 if they did not). */
void lead_start (struct readahead_lead *l, uint32_t read_length, uint64_t round_trip_us,
                 uint64_t now_us);

/* The reader took bytes (a forward read, or reads the front-end answered
 * from staged spans). */
void lead_consumed (struct readahead_lead *l, uint64_t bytes, uint64_t now_us);

/* A forward read had to wait for the store, or missed it: the lead was
 * too short. */
void lead_starved (struct readahead_lead *l, uint64_t now_us);

/* A window arrived, fetch_us after its request. */
void lead_fetched (struct readahead_lead *l, uint64_t fetch_us);

/* The server failed a window: start small again. */
void lead_restart (struct readahead_lead *l);

/* The bytes to keep stored or coming past the reader's furthest byte. */
uint64_t lead_bytes (const struct readahead_lead *l);

/* The size of the next window (at least READAHEAD_MIN_WINDOW, at most
 * max_window). */
uint32_t lead_window (const struct readahead_lead *l);

#endif
