/*
 * readahead-lead.c: how far ahead of a forward reader to fetch (see
 * limits-readahead-windows.h for the numbers and why).
 *
 * Bytes fetched ahead serve the reader only if it comes for them before
 * it stops or jumps; each one fetched too early costs the server, the
 * link and --client-memory.  What must be ahead is what the reader takes
 * while the next window comes: its rate times a window's time, with a
 * margin.  Both are measured here: the rate from the bytes the reader
 * took over an interval, the window's time from request to last checked
 * byte, smoothed.  A reader that the link holds back cannot show its own
 * rate (it takes what comes), so a read that had to wait doubles the lead
 * instead, at most once a window's time, and an interval in which a read
 * waited does not lower it.
 */
#include "readahead-lead.h"

#include "limits-readahead-windows.h"

static uint64_t
max_lead (const struct readahead_lead *l)
{
  return (uint64_t) l->max_window * READAHEAD_MAX_INFLIGHT;
}

static uint64_t
min_lead (const struct readahead_lead *l)
{
  return max_lead (l) < READAHEAD_MIN_LEAD ? max_lead (l) : READAHEAD_MIN_LEAD;
}

static uint64_t
clamp (uint64_t v, uint64_t lo, uint64_t hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

void
lead_init (struct readahead_lead *l, uint32_t max_window)
{
  *l = (struct readahead_lead) { .max_window = max_window };
}

void
lead_set_max_window (struct readahead_lead *l, uint32_t max_window)
{
  l->max_window = max_window;
  if (l->lead > max_lead (l))
    l->lead = max_lead (l);
}

void
lead_start (struct readahead_lead *l, uint32_t read_length, uint64_t round_trip_us,
            uint64_t now_us)
{
  uint64_t first, far;

  if (l->lead != 0)
    return;
  /* read_length <= NBD_MAX_REQUEST_SIZE: no overflow. */
  first = (read_length <= READAHEAD_MIN_WINDOW / 4 ? READAHEAD_MIN_WINDOW
           : 4 * (uint64_t) read_length) * READAHEAD_MAX_INFLIGHT;
  /* In floating point: a round trip of hours times the rate passes no
   * bound that matters; the clamp below keeps the result in the store. */
  far = (uint64_t) ((double) READAHEAD_FIRST_RATE * READAHEAD_LEAD_GAIN *
                    (double) (round_trip_us < UINT32_MAX ? round_trip_us : UINT32_MAX) / 1e6);
  if (far > first)
    first = far;
  l->lead = clamp (first, min_lead (l), max_lead (l));
  l->grown_us = now_us;
}

/* Over a closed interval the reader took bytes in span_us: the lead goes
 * toward what it needs, by a doubling or a halving at most. */
static void
steer (struct readahead_lead *l, uint64_t bytes, uint64_t span_us)
{
  /* In floating point: a rate of terabytes a second times a window's
   * time of minutes would pass 2^64 in integers, never a double. */
  double rate = (double) bytes * 1e6 / (double) span_us, cover_us, want;

  l->rate = rate < 1e18 ? (uint64_t) rate : (uint64_t) 1e18;
  if (l->lead == 0 || l->interval_starved)
    return;                     /* not started, or held back: the link's rate */
  cover_us = (double) READAHEAD_LEAD_GAIN * (double) l->fetch_us;
  if (cover_us < READAHEAD_LEAD_MIN_MS * 1000.0)
    cover_us = READAHEAD_LEAD_MIN_MS * 1000.0;
  want = (double) l->rate * cover_us / 1e6;
  if (want > 2.0 * (double) l->lead)
    want = 2.0 * (double) l->lead;
  if (want < (double) l->lead / 2)
    want = (double) l->lead / 2;
  l->lead = clamp ((uint64_t) want, min_lead (l), max_lead (l));
}

void
lead_consumed (struct readahead_lead *l, uint64_t bytes, uint64_t now_us)
{
  uint64_t span, interval;

  if (l->interval_start_us == 0 || now_us < l->interval_start_us) {
    l->interval_start_us = now_us;
    l->interval_bytes = 0;
    l->interval_starved = false;
  }
  l->interval_bytes += bytes < UINT64_MAX - l->interval_bytes
                      ? bytes : UINT64_MAX - l->interval_bytes;
  span = now_us - l->interval_start_us;
  interval = 4 * l->fetch_us;
  if (interval < (l->rate == 0 ? READAHEAD_RATE_FIRST_MS : READAHEAD_RATE_MS) * 1000)
    interval = (l->rate == 0 ? READAHEAD_RATE_FIRST_MS : READAHEAD_RATE_MS) * 1000;
  if (span < interval)
    return;
  steer (l, l->interval_bytes, span);
  l->interval_start_us = now_us;
  l->interval_bytes = 0;
  l->interval_starved = false;
}

void
lead_starved (struct readahead_lead *l, uint64_t now_us)
{
  l->interval_starved = true;
  if (l->lead == 0)
    return;
  if (l->fetch_us != 0 && now_us - l->grown_us < l->fetch_us)
    return;                     /* the window that would answer it is coming */
  l->lead = clamp (2 * l->lead, min_lead (l), max_lead (l));
  l->grown_us = now_us;
}

void
lead_fetched (struct readahead_lead *l, uint64_t fetch_us)
{
  if (fetch_us == 0)
    fetch_us = 1;               /* 0 means none measured */
  if (fetch_us > UINT32_MAX)
    fetch_us = UINT32_MAX;      /* an hour and more: kept from overflowing
                                   the sums here and in lead_consumed */
  l->fetch_us = l->fetch_us == 0 ? fetch_us : (3 * l->fetch_us + fetch_us) / 4;
}

void
lead_restart (struct readahead_lead *l)
{
  l->lead = 0;
}

uint64_t
lead_bytes (const struct readahead_lead *l)
{
  return l->lead;
}

uint32_t
lead_window (const struct readahead_lead *l)
{
  uint64_t w = l->lead / READAHEAD_MAX_INFLIGHT;
  uint64_t floor = (uint64_t) ((double) l->rate * READAHEAD_WINDOW_MIN_MS / 1000.0);

  if (w < floor)
    w = floor;
  if (w < READAHEAD_MIN_WINDOW)
    w = READAHEAD_MIN_WINDOW;
  return (uint32_t) (w < l->max_window ? w : l->max_window);
}
