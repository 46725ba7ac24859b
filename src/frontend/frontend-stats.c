/*
 * frontend-stats.c: the statistics the front-end keeps (stats-wire.h)
 * and sends to the supervisor, which writes them (log, --stats-file).
 *
 * Each client in transmission has its figures (struct client's stats,
 * counted by transmission.c) and its fetcher's latest own figures (what
 * IPC_FETCHER_STATS said: untrusted, only ever summed with saturation).
 * At a client's close they are added to its export's sums, and sent once
 * more for the log (IPC_CLIENT_STATS, best effort).  A report
 * (IPC_STATS_REQUEST, and the last one as the front-end exits) is one
 * IPC_EXPORT_STATS per export: the closed clients' sums plus the
 * connected ones'.  Memory: a stats_wire per client and per export,
 * nothing that grows with what peers send.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "frontend.h"
#include "ipc.h"
#include "limits-clients.h"
#include "log.h"
#include "stats.h"

static_assert (CLIENT_STATS_WIRE_SIZE <= IPC_MAX_DATAGRAM_PAYLOAD,
               "a client's statistics fit one control packet");

/* Closed clients' sums, one per export. */
static struct stats_wire *closed;

uint64_t
now_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

void
stats_init (void)
{
  closed = calloc (fe.config.nexports ? fe.config.nexports : 1, sizeof *closed);
  if (closed == NULL)
    fatal_errno ("calloc");
}

void
stats_client_serving (struct client *c)
{
  if (c->counted)
    return;
  c->counted = true;
  c->stats.connections = 1;
  c->serving_since_ms = now_ms ();
}

void
stats_fetcher_report (struct client *c, const uint8_t *payload)
{
  memcpy (&c->fetcher_stats, payload, sizeof c->fetcher_stats);
}

void
stats_fetcher_dropped (struct client *c)
{
  stats_add_fetcher (&c->stats.fetcher, &c->fetcher_stats);
  memset (&c->fetcher_stats, 0, sizeof c->fetcher_stats);
}

/* A client's figures as of now: its own, its fetcher's, its time. */
static void
client_figures (const struct client *c, struct stats_wire *out)
{
  *out = c->stats;
  stats_add_fetcher (&out->fetcher, &c->fetcher_stats);
  out->connected_ms = now_ms () - c->serving_since_ms;
}

void
stats_client_closed (struct client *c)
{
  struct client_stats_wire w = { 0 };
  struct ipc_header h = {
    .type = IPC_CLIENT_STATS, .id = c->token, .length = c->export_index,
    .payload_len = CLIENT_STATS_WIRE_SIZE,
  };

  if (!c->counted)
    return;
  c->counted = false;
  client_figures (c, &w.stats);
  stats_add (&closed[c->export_index], &w.stats);
  snprintf (w.peer, sizeof w.peer, "%s", c->peer);
  /* For the log only, and the log may go without it: the sums are in
   * closed[], whatever happens to this packet. */
  if (ipc_send_datagram (fe.control_fd, &h, &w) == -1)
    debug ("client %s: its statistics did not fit the control socket (%s): "
           "counted in the export's sums only", c->peer, strerror (errno));
}

/* Send a report's packet, waiting a little for room: the supervisor
 * reads the control socket in every round of its loop. */
static void
send_report_packet (const struct ipc_header *h, const void *payload)
{
  uint64_t until = now_ms () + STATS_SEND_WAIT_MS;

  while (ipc_send_datagram (fe.control_fd, h, payload) == -1) {
    struct pollfd p = { .fd = fe.control_fd, .events = POLLOUT };
    uint64_t now = now_ms ();
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || now >= until) {
      warn ("statistics of export \"%s\" not sent to the supervisor: %s",
            fe.config.exports[h->length].name, strerror (errno));
      return;
    }
    (void) poll (&p, 1, (int) (until - now));
  }
}

void
stats_report (bool final)
{
  struct stats_wire sum, one;
  uint32_t e;
  unsigned i;

  for (e = 0; e < fe.config.nexports; e++) {
    struct ipc_header h = {
      .type = IPC_EXPORT_STATS, .length = e, .payload_len = STATS_WIRE_SIZE,
      .flags = (uint16_t) ((e + 1 == fe.config.nexports ? EXPORT_STATS_LAST : 0) |
                           (final ? EXPORT_STATS_FINAL : 0)),
    };
    sum = closed[e];
    for (i = 0; i < fe.nclients; i++) {
      const struct client *c = fe.clients[i];
      if (c->dead || !c->counted || c->export_index != e)
        continue;
      client_figures (c, &one);
      stats_add (&sum, &one);
    }
    send_report_packet (&h, &sum);
  }
}
