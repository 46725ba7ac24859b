/* unit-launcher-parse.c: the fetcher launcher's check of the supervisor's
 * messages (src/launcher/launcher-parse.c) against hostile ones, TAP
 * output. */
#include <stdint.h>

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

/* Fields and types the table or the launcher refuses. */
static void
hostile (void)
{
  struct ipc_header h;

  h = start (2);
  h.flags = 1;
  CHECK (!launcher_request_acceptable (&h, 2), "flags refused");
  h = start (2);
  h.id = 7;
  CHECK (!launcher_request_acceptable (&h, 2), "an id refused");
  h = start (2);
  h.offset = 4096;
  CHECK (!launcher_request_acceptable (&h, 2), "an offset refused");
  h = start (2);
  h.area_offset = 4096;
  CHECK (!launcher_request_acceptable (&h, 2), "an area offset refused");
  h = start (2);
  h.error = 5;
  CHECK (!launcher_request_acceptable (&h, 2), "an error refused");
  h = start (2);
  h.payload_len = 1;
  CHECK (!launcher_request_acceptable (&h, 2), "a payload refused");

  /* The table lets the supervisor send IPC_CONFIG_END to the launcher:
   * only the launcher's own check refuses it here. */
  h = (struct ipc_header) { .type = IPC_CONFIG_END };
  CHECK (!launcher_request_acceptable (&h, 0), "end of configuration refused");
  h = (struct ipc_header) { .type = IPC_CONFIG_LAUNCHER, .length = 2 };
  CHECK (!launcher_request_acceptable (&h, 2), "configuration refused");
  h = (struct ipc_header) { .type = IPC_FETCHER_LAUNCHED, .id = 100 };
  CHECK (!launcher_request_acceptable (&h, 0), "its own answer refused");
  h = (struct ipc_header) { .type = IPC_SPAWN_FETCHER, .length = 2 };
  CHECK (!launcher_request_acceptable (&h, 2), "a front-end's type refused");
  h = (struct ipc_header) { .type = 0x7777, .length = 2 };
  CHECK (!launcher_request_acceptable (&h, 2), "unknown type refused");
}

int
main (void)
{
  good ();
  descriptors ();
  hostile ();
  return UNIT_END ();
}
