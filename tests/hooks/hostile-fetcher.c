/*
 * hostile-fetcher.c: a fetcher that breaks the internal protocol on
 * purpose, built only into the test binary nbdcurld-test (never into
 * nbdcurld).  It stands for a fetcher taken over by a hostile web server:
 * the front-end must fail that client's requests with EIO and keep
 * serving everyone else.
 *
 * The mode comes from the export URL's fragment, "#hostile=MODE":
 *   good          a correct fetcher serving the byte pattern (offset & 0xff)
 *   payload       a read reply carrying its data in the message (data
 *                 belongs in the data area: a reply has no payload)
 *   area-offset   a read reply naming a place in the data area
 *   unknown-id    a reply to a request that was never sent
 *   duplicate     every reply sent twice
 *   bad-type      a message type that does not exist
 *   huge-payload  a header announcing a 4 GiB payload
 *   die           exits on the first request
 *   bad-open      IPC_FETCHER_OPENED with unknown capability flags
 *   garbage       random bytes instead of a header
 *   pipe-lie      a read reply that says its data is in the data pipe,
 *                 with nothing written there
 *   pipe-short    the same with a byte fewer written than the read asked
 *   pipe-discard  IPC_PIPE_DISCARD longer than any read that the pipe takes
 *   pipe-discard-flood many IPC_PIPE_DISCARD of one byte for every read (one
 *                 per read in flight is the most a fetcher may send)
 *   started-twice IPC_FETCHER_STARTED twice before IPC_FETCHER_OPENED
 *   started-late  IPC_FETCHER_STARTED after IPC_FETCHER_OPENED
 *   started-fields IPC_FETCHER_STARTED with a field that is not 0
 *   script-wrong  (an export with a header-script) a message the
 *                 supervisor sends, sent back to it on the script channel
 *   script-payload IPC_SCRIPT_RENEW with a payload
 *   script-flood  IPC_SCRIPT_RENEW for the current values, a thousand
 *                 times, then once a millisecond while it serves
 *   stats-size    IPC_FETCHER_STATS a byte short
 *   stats-lie     serves right, but before every reply says it fetched,
 *                 retried and read ahead 2^64-1 of everything (a lie
 *                 that must only make the figures wrong)
 *   stage-good    serves right, and stages (limits-staging.h): asks
 *                 for spans with its first reply, stages the export's
 *                 first and second halves into them, and checks that each
 *                 span that comes back says how far its reads went
 *   stage-unlent  IPC_STAGED into a span of the data area it was not lent
 *   stage-beyond  IPC_STAGED of bytes past the export's end
 *   stage-twice   IPC_STAGED twice into one span
 *   stage-long    IPC_STAGED of more bytes than a span holds
 *   stage-unasked IPC_STAGE_WANTED from a fetcher that opened without
 *                 FETCHER_CAN_STAGE
 * Every mode but the started-* ones starts as a real fetcher does: with
 * IPC_FETCHER_STARTED, then IPC_FETCHER_OPENED.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "child-fds.h"
#include "config.h"
#include "data-path.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "limits-staging.h"
#include "log.h"
#include "script-values.h"
#include "stats-wire.h"

#define HOSTILE_EXPORT_SIZE (1024u * 1024)

int hostile_fetcher_main (const char *mode);

/* The script-* modes: the script channel, told what to do. */
static uint64_t script_generation;

static void
script_misbehave (const char *mode)
{
  uint8_t values[SCRIPT_VALUES_MAX_PAYLOAD];
  struct ipc_header h;
  struct pollfd p = { .fd = CHILD_FD_SCRIPTS, .events = POLLIN };
  unsigned i;

  /* The first values, as a real fetcher waits for them. */
  if (poll (&p, 1, 70000) != 1 ||
      ipc_recv_datagram (CHILD_FD_SCRIPTS, &h, values, sizeof values) == -1)
    exit (EXIT_FAILURE);
  script_generation = h.id;
  if (strcmp (mode, "script-wrong") == 0) {
    h = (struct ipc_header) { .type = IPC_SCRIPT_VALUES, .id = script_generation };
    (void) ipc_send_datagram (CHILD_FD_SCRIPTS, &h, NULL);
  }
  else if (strcmp (mode, "script-payload") == 0) {
    h = (struct ipc_header) { .type = IPC_SCRIPT_RENEW, .id = script_generation,
                              .payload_len = 4 };
    (void) ipc_send_datagram (CHILD_FD_SCRIPTS, &h, "abcd");
  }
  else if (strcmp (mode, "script-flood") == 0) {
    h = (struct ipc_header) { .type = IPC_SCRIPT_RENEW, .id = script_generation };
    for (i = 0; i < 1000; i++)
      (void) ipc_send_datagram (CHILD_FD_SCRIPTS, &h, NULL);
  }
}

/* script-flood, while serving: read the new values (their generation),
 * ask again at once. */
static void
script_flood_more (void)
{
  uint8_t values[SCRIPT_VALUES_MAX_PAYLOAD];
  struct ipc_header h;

  while (ipc_recv_datagram (CHILD_FD_SCRIPTS, &h, values, sizeof values) == 0)
    script_generation = h.id;
  h = (struct ipc_header) { .type = IPC_SCRIPT_RENEW, .id = script_generation };
  (void) ipc_send_datagram (CHILD_FD_SCRIPTS, &h, NULL);
}

static void
send_or_exit (const struct ipc_header *h, const void *payload)
{
  if (ipc_send (CHILD_FD_PEER, h, payload) == -1)
    exit (EXIT_FAILURE);
}

/* The stage-* modes: a span given (back).  stage-good stages the
 * export's halves, the first then the second (each
 * STAGE_OVERLAP_BYTES longer than half), and checks that a span that
 * comes back from staging says its reads went somewhere inside it; the
 * others break the rules once. */
static void
stage_given (const char *mode, uint8_t *area, const struct ipc_header *give)
{
  static unsigned staged;
  const uint32_t half = HOSTILE_EXPORT_SIZE / 2;
  struct ipc_header h = {
    .type = IPC_STAGED, .area_offset = give->area_offset,
    .offset = staged % 2 == 0 ? 0 : half - STAGE_OVERLAP_BYTES,
    .length = half + STAGE_OVERLAP_BYTES,
  };

  if (give->length != STAGE_SPAN_BYTES || give->area_offset > DATA_AREA_SIZE - give->length ||
      (give->id > 0 && (give->offset == 0 || give->offset > HOSTILE_EXPORT_SIZE)))
    exit (EXIT_FAILURE);
  if (strcmp (mode, "stage-unlent") == 0)
    h.area_offset += DATA_AREA_CHUNK;
  else if (strcmp (mode, "stage-beyond") == 0)
    h.offset = HOSTILE_EXPORT_SIZE - 10;
  else if (strcmp (mode, "stage-long") == 0)
    h.length = STAGE_SPAN_BYTES + 1;
  for (uint32_t i = 0; i < h.length && i < STAGE_SPAN_BYTES; i++)
    area[give->area_offset + i] = (uint8_t) ((h.offset + i) & 0xff);
  send_or_exit (&h, NULL);
  if (strcmp (mode, "stage-twice") == 0)
    send_or_exit (&h, NULL);
  staged++;
}

int
hostile_fetcher_main (const char *mode)
{
  struct ipc_header opened = {
    .type = IPC_FETCHER_OPENED, .offset = HOSTILE_EXPORT_SIZE,
  };

  uint8_t *area = mmap (NULL, DATA_AREA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
                        CHILD_FD_DATA_AREA, 0);

  if (area == MAP_FAILED)
    exit (EXIT_FAILURE);
  /* As a real fetcher, it is told to open first (IPC_FETCHER_OPEN); its
   * misbehaviour is towards the front-end, after that. */
  {
    struct ipc_header go;
    uint8_t *none = NULL;
    if (ipc_recv (CHILD_FD_PEER, &go, &none, 0) == -1 || go.type != IPC_FETCHER_OPEN)
      exit (EXIT_FAILURE);
    free (none);
  }
  if (strncmp (mode, "script-", 7) == 0)
    script_misbehave (mode);
  if (strcmp (mode, "bad-open") == 0)
    opened.flags = 0x8000;
  if (strncmp (mode, "stage-", 6) == 0 && strcmp (mode, "stage-unasked") != 0)
    opened.flags = FETCHER_CAN_STAGE;
  if (strncmp (mode, "started-", 8) != 0 || strcmp (mode, "started-twice") == 0)
    send_or_exit (&(struct ipc_header) { .type = IPC_FETCHER_STARTED }, NULL);
  if (strcmp (mode, "started-twice") == 0)
    send_or_exit (&(struct ipc_header) { .type = IPC_FETCHER_STARTED }, NULL);
  if (strcmp (mode, "started-fields") == 0)
    send_or_exit (&(struct ipc_header) { .type = IPC_FETCHER_STARTED, .length = 1 }, NULL);
  send_or_exit (&opened, NULL);
  if (strcmp (mode, "started-late") == 0)
    send_or_exit (&(struct ipc_header) { .type = IPC_FETCHER_STARTED }, NULL);

  for (;;) {
    struct ipc_header req, rep = { .type = IPC_REPLY };
    uint8_t *payload = NULL;
    uint32_t i;

    if (strcmp (mode, "script-flood") == 0) {
      struct pollfd p = { .fd = CHILD_FD_PEER, .events = POLLIN };
      while (poll (&p, 1, 1) == 0)
        script_flood_more ();
    }
    if (ipc_recv (CHILD_FD_PEER, &req, &payload, 0) == -1)
      exit (EXIT_SUCCESS);
    if (req.type == IPC_STAGE_GIVE && strncmp (mode, "stage-", 6) == 0) {
      stage_given (mode, area, &req);
      continue;
    }
    if (req.type != IPC_READ || req.length > HOSTILE_EXPORT_SIZE ||
        req.area_offset > DATA_AREA_SIZE - req.length)
      exit (EXIT_FAILURE);
    for (i = 0; i < req.length; i++)
      area[req.area_offset + i] = (uint8_t) ((req.offset + i) & 0xff);

    rep.id = req.id;
    if (strncmp (mode, "stats-", 6) == 0) {
      struct fetcher_stats_wire lie;
      memset (&lie, 0xff, sizeof lie);
      send_or_exit (&(struct ipc_header) {
          .type = IPC_FETCHER_STATS,
          .payload_len = strcmp (mode, "stats-size") == 0 ? sizeof lie - 1 : sizeof lie,
        }, &lie);
    }
    if (strcmp (mode, "payload") == 0) {
      rep.payload_len = req.length;
      send_or_exit (&rep, area + req.area_offset);
      continue;
    }
    else if (strcmp (mode, "area-offset") == 0)
      rep.area_offset = DATA_AREA_CHUNK;
    else if (strcmp (mode, "unknown-id") == 0)
      rep.id = req.id + 1000;
    else if (strcmp (mode, "bad-type") == 0)
      rep.type = 999;
    else if (strcmp (mode, "die") == 0)
      _exit (3);
    else if (strcmp (mode, "huge-payload") == 0) {
      rep.payload_len = UINT32_MAX;
      if (write_full (CHILD_FD_PEER, &rep, sizeof rep) == -1)
        exit (EXIT_FAILURE);
      continue;
    }
    else if (strncmp (mode, "pipe-", 5) == 0) {
      if (strcmp (mode, "pipe-short") == 0 &&
          write_full (CHILD_FD_DATA_PIPE, area + req.area_offset, req.length - 1) == -1)
        exit (EXIT_FAILURE);
      if (strcmp (mode, "pipe-discard") == 0) {
        rep.type = IPC_PIPE_DISCARD;
        rep.id = 0;
        rep.length = DATA_PIPE_READ_MAX + 1;
      }
      else if (strcmp (mode, "pipe-discard-flood") == 0) {
        /* Each discard's byte is in the pipe, so only their number is
         * wrong; then the read's real data. */
        struct ipc_header discard = { .type = IPC_PIPE_DISCARD, .length = 1 };
        for (i = 0; i < 2 * MAX_INFLIGHT_PER_CLIENT; i++) {
          if (write_full (CHILD_FD_DATA_PIPE, "x", 1) == -1)
            exit (EXIT_FAILURE);
          send_or_exit (&discard, NULL);
        }
        rep.type = IPC_REPLY;
        rep.flags = IPC_REPLY_PIPED;
        if (write_full (CHILD_FD_DATA_PIPE, area + req.area_offset, req.length) == -1)
          exit (EXIT_FAILURE);
      }
      else
        rep.flags = IPC_REPLY_PIPED;
    }
    else if (strcmp (mode, "garbage") == 0) {
      uint8_t junk[IPC_HEADER_SIZE];
      for (i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t) (i * 37 + 11);
      if (write_full (CHILD_FD_PEER, junk, sizeof junk) == -1)
        exit (EXIT_FAILURE);
      continue;
    }
    send_or_exit (&rep, NULL);
    if (strcmp (mode, "duplicate") == 0)
      send_or_exit (&rep, NULL);
    if (strncmp (mode, "stage-", 6) == 0)
      send_or_exit (&(struct ipc_header) { .type = IPC_STAGE_WANTED }, NULL);
  }
}
