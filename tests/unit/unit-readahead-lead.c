/* unit-readahead-lead.c: how far readahead-lead.c has the store fetch
 * ahead of readers of several speeds on near and far links, driven by a
 * simulated clock, TAP output. */
#include <inttypes.h>
#include <stdio.h>

#include "limits-readahead-windows.h"
#include "readahead-lead.h"
#include "unit.h"

#define KiB UINT64_C (1024)
#define MiB (KiB * KiB)
#define MAX_WINDOW ((uint32_t) (16 * MiB / (READAHEAD_MAX_INFLIGHT + 2)))
#define MAX_LEAD ((uint64_t) MAX_WINDOW * READAHEAD_MAX_INFLIGHT)

/* A reader that takes read bytes every gap_us for seconds, a window
 * arriving fetch_us after its request every window_every reads; each
 * read waits (starved) if wait says so. */
struct reader {
  uint64_t now_us;
  uint32_t read;
  uint64_t gap_us, fetch_us;
  unsigned window_every;
  bool wait;
};

static void
run (struct readahead_lead *l, struct reader *r, uint64_t seconds)
{
  uint64_t end = r->now_us + seconds * 1000000;
  unsigned n = 0;

  while (r->now_us < end) {
    r->now_us += r->gap_us;
    if (r->wait) {
      lead_starved (l, r->now_us);
      r->now_us += r->fetch_us;
    }
    lead_consumed (l, r->read, r->now_us);
    if (++n % r->window_every == 0)
      lead_fetched (l, r->fetch_us);
  }
}

/* A slow reader on a near link (a booting guest: 16 KiB every 5 ms, about
 * 3 MB/s; windows in a millisecond) has no more than the least lead
 * fetched ahead of it, in small windows, however long it reads. */
static void
slow_reader (void)
{
  struct readahead_lead l;
  struct reader r = { .now_us = 1000, .read = 16 * KiB, .gap_us = 5000, .fetch_us = 1000,
                      .window_every = 8 };

  lead_init (&l, MAX_WINDOW);
  lead_start (&l, r.read, 0, r.now_us);
  lead_starved (&l, r.now_us);          /* its first read missed */
  run (&l, &r, 10);
  printf ("# slow reader: lead %" PRIu64 " KiB, window %" PRIu32 " KiB, rate %" PRIu64
          " KiB/s\n", lead_bytes (&l) / KiB, lead_window (&l) / 1024, l.rate / KiB);
  CHECK (lead_bytes (&l) == READAHEAD_MIN_LEAD, "a slow reader's lead is the least");
  CHECK (lead_window (&l) <= 2 * READAHEAD_MIN_WINDOW,
         "a slow reader's windows are small (50 ms of its reading)");
}

/* A reader that the link holds back (every read waits a window's time:
 * 20 ms round trip, a capped connection) gets the most the store holds,
 * within a few windows' times. */
static void
held_back_reader (void)
{
  struct readahead_lead l;
  struct reader r = { .now_us = 1000, .read = 20 * KiB, .gap_us = 50, .fetch_us = 60000,
                      .window_every = 1, .wait = true };

  lead_init (&l, MAX_WINDOW);
  lead_start (&l, r.read, 0, r.now_us);
  run (&l, &r, 1);
  printf ("# held back: lead %" PRIu64 " KiB, window %" PRIu32 " KiB\n",
          lead_bytes (&l) / KiB, lead_window (&l) / 1024);
  CHECK (lead_bytes (&l) == MAX_LEAD, "a reader held back by the link gets the most lead");
  CHECK (lead_window (&l) == MAX_WINDOW, "in the largest windows");
  /* Then it keeps up (no read waits) at 100 MB/s on that far link:
   * 100 MB/s x 2 x 60 ms is more than the store holds: the lead stays. */
  r.wait = false;
  r.gap_us = 200;                       /* 20 KiB every 200 us */
  run (&l, &r, 3);
  CHECK (lead_bytes (&l) == MAX_LEAD, "a fast reader on a far link keeps the most lead");
  /* It stops for two seconds and reads on: the interval that held the
   * pause lowers the lead by half at most. */
  r.now_us += 2000000;
  lead_consumed (&l, r.read, r.now_us);
  CHECK (lead_bytes (&l) == MAX_LEAD / 2, "a pause halves the lead, no more");
  /* And on slowly for a while: the lead comes down to the least. */
  r.gap_us = 20000;
  run (&l, &r, 10);
  CHECK (lead_bytes (&l) == READAHEAD_MIN_LEAD, "a reader that slows down has its lead shrink");
}

/* A fast reader on a near link (30 MB/s, windows in 2 ms): the lead is
 * READAHEAD_LEAD_MIN_MS of its reading, in windows of at least
 * READAHEAD_WINDOW_MIN_MS of it: some twenty requests a second. */
static void
fast_near_reader (void)
{
  struct readahead_lead l;
  struct reader r = { .now_us = 1000, .read = 20 * KiB, .gap_us = 683, .fetch_us = 2000,
                      .window_every = 50 };
  uint64_t rate, lead;

  lead_init (&l, MAX_WINDOW);
  lead_start (&l, r.read, 0, r.now_us);
  run (&l, &r, 5);
  rate = l.rate;
  lead = lead_bytes (&l);
  printf ("# fast near reader: %" PRIu64 " KiB/s, lead %" PRIu64 " KiB, window %" PRIu32
          " KiB\n", rate / KiB, lead / KiB, lead_window (&l) / 1024);
  CHECK (rate > 27000000 && rate < 33000000, "the reader's rate is measured");
  CHECK (lead >= rate * READAHEAD_LEAD_MIN_MS / 1000 / 2 &&
         lead <= rate * READAHEAD_LEAD_MIN_MS / 1000 * 2,
         "its lead is about READAHEAD_LEAD_MIN_MS of reading");
  CHECK (lead_window (&l) >= rate * READAHEAD_WINDOW_MIN_MS / 1000 * 9 / 10,
         "its windows hold at least READAHEAD_WINDOW_MIN_MS of reading");
}

/* The first lead follows the round trip: on a near server the least
 * (READAHEAD_MIN_LEAD), on a distant one READAHEAD_FIRST_RATE x
 * READAHEAD_LEAD_GAIN round trips, so that a reader of that rate waits
 * through no doubling; a slow reader on that link has its lead come down
 * from there in a few intervals. */
static void
far_start (void)
{
  struct readahead_lead l;
  struct reader r = { .now_us = 1000, .read = 16 * KiB, .gap_us = 5000, .fetch_us = 25000,
                      .window_every = 8 };
  uint64_t far = (uint64_t) READAHEAD_FIRST_RATE * READAHEAD_LEAD_GAIN * 20 / 1000;

  lead_init (&l, MAX_WINDOW);
  lead_start (&l, 20 * KiB, 150, 1000);
  CHECK (lead_bytes (&l) == READAHEAD_MIN_LEAD, "a near server: the least first lead");
  lead_init (&l, MAX_WINDOW);
  lead_start (&l, 20 * KiB, 20000, 1000);
  printf ("# 20 ms away: first lead %" PRIu64 " KiB, window %" PRIu32 " KiB\n",
          lead_bytes (&l) / KiB, lead_window (&l) / 1024);
  CHECK (lead_bytes (&l) == far, "20 ms away: the first rate's take in two round trips");
  CHECK (lead_window (&l) == far / READAHEAD_MAX_INFLIGHT, "over the windows in flight");
  /* The same start, then a reader of some 3 MB/s. */
  run (&l, &r, 5);
  CHECK (lead_bytes (&l) == READAHEAD_MIN_LEAD, "a slow reader's far lead comes down");
  lead_init (&l, MAX_WINDOW);
  lead_start (&l, 20 * KiB, UINT64_MAX, 1000);
  CHECK (lead_bytes (&l) == MAX_LEAD, "an absurd round trip: the most lead, no more");
}

/* An interval in which a read waited does not lower the lead, and a
 * burst of waiting reads doubles it once per window's time, not once a
 * read. */
static void
starvation (void)
{
  struct readahead_lead l;
  uint64_t before;

  lead_init (&l, MAX_WINDOW);
  lead_start (&l, 4096, 0, 1000);
  lead_fetched (&l, 10000);
  before = lead_bytes (&l);
  lead_starved (&l, 20000);
  CHECK (lead_bytes (&l) == 2 * before, "a waiting read doubles the lead");
  lead_starved (&l, 20100);
  lead_starved (&l, 25000);
  CHECK (lead_bytes (&l) == 2 * before, "once per window's time");
  lead_starved (&l, 31000);
  CHECK (lead_bytes (&l) == 4 * before, "and again after it");
  /* A slow interval that had a wait in it: the lead stays. */
  lead_consumed (&l, 4096, 32000);
  lead_starved (&l, 32500);
  before = lead_bytes (&l);
  lead_consumed (&l, 4096, 900000);
  CHECK (lead_bytes (&l) == before, "an interval with a wait does not lower the lead");
  /* A server that failed: nothing until a reader starts it again. */
  lead_restart (&l);
  CHECK (lead_bytes (&l) == 0, "a failed window restarts the lead");
  lead_starved (&l, 2000000);
  CHECK (lead_bytes (&l) == 0, "a wait does not start it");
}

/* Edges: a store smaller than the least lead, a store that shrinks,
 * first reads of every size, absurd times and byte counts (a hostile
 * front-end's lengths; UBSan watches the conversions). */
static void
edges (void)
{
  struct readahead_lead l;

  lead_init (&l, 64 * 1024);
  lead_start (&l, 4096, 0, 1);
  CHECK (lead_bytes (&l) == 4 * 64 * KiB, "a small store bounds the lead");
  CHECK (lead_window (&l) == 64 * 1024, "and the window");
  lead_init (&l, MAX_WINDOW);
  lead_start (&l, 32 * 1024 * 1024, 0, 1);
  CHECK (lead_bytes (&l) == MAX_LEAD, "a 32 MiB first read: the most lead");
  lead_set_max_window (&l, MAX_WINDOW / 2);
  CHECK (lead_bytes (&l) == MAX_LEAD / 2, "a shrinking store shrinks the lead");
  lead_fetched (&l, 0);
  CHECK (l.fetch_us == 1, "a window in no time counts as one microsecond");
  lead_fetched (&l, UINT64_MAX / 8);
  lead_consumed (&l, UINT32_MAX, 2);
  lead_consumed (&l, UINT64_MAX / 4, UINT64_MAX / 2);
  lead_consumed (&l, UINT64_MAX / 4, UINT64_MAX - 1);
  lead_consumed (&l, 1, 5);             /* the clock went back: a new interval */
  CHECK (lead_bytes (&l) >= READAHEAD_MIN_LEAD && lead_bytes (&l) <= MAX_LEAD / 2,
         "absurd figures keep the lead within its bounds");
  CHECK (lead_window (&l) >= READAHEAD_MIN_WINDOW && lead_window (&l) <= MAX_WINDOW / 2,
         "and the window");
}

int
main (void)
{
  slow_reader ();
  held_back_reader ();
  fast_near_reader ();
  far_start ();
  starvation ();
  edges ();
  return UNIT_END ();
}
