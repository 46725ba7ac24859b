/* unit-launcher-parse.c: the fetcher launcher's check of the supervisor's
 * messages (src/launcher/launcher-parse.c) against hostile ones, TAP
 * output. */
#include <stdint.h>

#include "child-fds.h"
#include "ipc-messages.h"
#include "launcher-parse.h"
#include "unit.h"

/* A start with n descriptors, as launcher-client.c sends it. */
static struct ipc_header
start (unsigned n)
{
  return (struct ipc_header) { .type = IPC_LAUNCH_FETCHER, .length = n };
}

static void
good (void)
{
  struct ipc_header h = start (2);

  CHECK (launcher_request_acceptable (&h, 2), "start with the fewest descriptors accepted");
  h = start (3);
  CHECK (launcher_request_acceptable (&h, 3), "start with three descriptors accepted");
  h = start (LAUNCH_MAX_FDS);
  CHECK (launcher_request_acceptable (&h, LAUNCH_MAX_FDS),
         "start with the most descriptors accepted");
}

/* The descriptors that came must be the ones it names, as many as a
 * fetcher takes. */
static void
descriptors (void)
{
  struct ipc_header h = start (3);

  CHECK (!launcher_request_acceptable (&h, 2), "fewer descriptors than named refused");
  CHECK (!launcher_request_acceptable (&h, 4), "more descriptors than named refused");
  h = start (0);
  CHECK (!launcher_request_acceptable (&h, 0), "start without descriptors refused");
  h = start (1);
  CHECK (!launcher_request_acceptable (&h, 1), "start with one descriptor refused");
  h = start (LAUNCH_MAX_FDS + 1);
  CHECK (!launcher_request_acceptable (&h, LAUNCH_MAX_FDS + 1),
         "start with too many descriptors refused");
  h = start (UINT32_MAX);
  CHECK (!launcher_request_acceptable (&h, 2), "length field of 2^32-1 refused");
}

/* Fields and types the table or the launcher refuses, each with the
 * descriptors that came with it. */
static const struct {
  struct ipc_header h;
  unsigned nfds;
  const char *name;
} refused[] = {
  { { .type = IPC_LAUNCH_FETCHER, .length = 2, .flags = 1 }, 2, "flags refused" },
  { { .type = IPC_LAUNCH_FETCHER, .length = 2, .id = 7 }, 2, "an id refused" },
  { { .type = IPC_LAUNCH_FETCHER, .length = 2, .offset = 4096 }, 2, "an offset refused" },
  { { .type = IPC_LAUNCH_FETCHER, .length = 2, .area_offset = 4096 }, 2,
    "an area offset refused" },
  { { .type = IPC_LAUNCH_FETCHER, .length = 2, .error = 5 }, 2, "an error refused" },
  { { .type = IPC_LAUNCH_FETCHER, .length = 2, .payload_len = 1 }, 2, "a payload refused" },
  /* The table lets the supervisor send IPC_CONFIG_END to the launcher:
   * only the launcher's own check refuses it here. */
  { { .type = IPC_CONFIG_END }, 0, "end of configuration refused" },
  { { .type = IPC_CONFIG_LAUNCHER, .length = 2 }, 2, "configuration refused" },
  { { .type = IPC_FETCHER_LAUNCHED, .id = 100 }, 0, "its own answer refused" },
  { { .type = IPC_SPAWN_FETCHER, .length = 2 }, 2, "a front-end's type refused" },
  { { .type = 0x7777, .length = 2 }, 2, "unknown type refused" },
};

static void
hostile (void)
{
  size_t i;

  for (i = 0; i < sizeof refused / sizeof refused[0]; i++)
    CHECK (!launcher_request_acceptable (&refused[i].h, refused[i].nfds), refused[i].name);
}

int
main (void)
{
  good ();
  descriptors ();
  hostile ();
  return UNIT_END ();
}
