/* unit.h: TAP output for the unit tests in this folder. */
#ifndef NBDCURLD_UNIT_H
#define NBDCURLD_UNIT_H

#include <stdio.h>
#include <stdlib.h>

static int tests, failures;

#define CHECK(cond, name) do {                                  \
    tests++;                                                    \
    if (cond) printf ("ok %d - %s\n", tests, name);             \
    else { printf ("not ok %d - %s\n", tests, name); failures++; } \
  } while (0)

/* A writer_put_* building a test's input: the test's own buffer must hold it. */
#define PUT(call) do {                                          \
    if ((call) == -1) {                                         \
      printf ("Bail out! test input does not fit: %s\n", #call); \
      exit (1);                                                 \
    }                                                           \
  } while (0)

/* The plan, last; the exit status says whether all passed. */
#define UNIT_END() (printf ("1..%d\n", tests), failures == 0 ? 0 : 1)

#endif
