/*
 * clock.h: milliseconds (and microseconds) on CLOCK_MONOTONIC, for deadlines and rates in
 * every role (a clock that wall-clock changes cannot move).
 */
#ifndef NBDCURLD_CLOCK_H
#define NBDCURLD_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t
monotonic_ms (void)
{
  struct timespec ts;

  /* Cannot fail with CLOCK_MONOTONIC and a valid pointer. */
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Round trips on a LAN are tens of microseconds. */
static inline uint64_t
monotonic_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

#endif
