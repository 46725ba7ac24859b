/*
 * clients.c: what every phase of a client does to it, below the loop and
 * the protocol phases that call it: the clock its deadlines are counted
 * on, its fetcher's turn to be started (the supervisor starts fetchers, a
 * bounded number at once, oldest request first), dropping its fetcher,
 * and closing it.  A closed client stays in fe.clients, marked dead, until
 * the loop reaps it at the end of the round (frontend.c).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "data-path.h"
#include "frontend.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "limits-clients.h"
#include "log.h"

uint64_t
now_ms (void)
{
  return monotonic_ms ();
}

/* ---- Fetchers, through the supervisor. ---- */

/* Ask the supervisor for the fetchers of the clients waiting their turn,
 * oldest first, while fewer than max_fetchers_starting are starting. */
static void
start_waiting_fetchers (void)
{
  while (fe.fetchers_starting < fe.max_fetchers_starting) {
    struct client *next = NULL;
    struct ipc_header h = { .type = IPC_SPAWN_FETCHER };
    unsigned i;

    for (i = 0; i < fe.nclients; i++) {
      struct client *c = fe.clients[i];
      if (!c->dead && c->spawn == SPAWN_QUEUED &&
          (next == NULL || c->spawn_turn < next->spawn_turn))
        next = c;
    }
    if (next == NULL)
      return;
    h.id = next->token;
    h.length = next->export_index;
    if (ipc_send_packet (fe.control_fd, &h, NULL, 0) == -1)
      fatal_errno ("asking the supervisor for a fetcher");
    next->spawn = SPAWN_STARTING;
    fe.fetchers_starting++;
  }
}

void
fetcher_start_done (struct client *c)
{
  if (c->spawn == SPAWN_STARTING)
    fe.fetchers_starting--;             /* counted when asked for */
  c->spawn = SPAWN_NONE;
  start_waiting_fetchers ();
}

int
request_fetcher (struct client *c, uint32_t export_index)
{
  c->export_index = export_index;
  c->fetcher_spawns++;
  c->spawn = SPAWN_QUEUED;
  c->spawn_turn = ++fe.spawn_turns;
  /* The wait is the server's: the handshake timeout stops meanwhile (it
   * starts again once the export is open), with a bound of its own. */
  c->deadline_ms = now_ms () + (uint64_t) FETCHER_OPEN_TIMEOUT * 1000;
  start_waiting_fetchers ();
  return 0;
}
/* ---- A fetcher's end, and a client's. ---- */

void
drop_fetcher (struct client *c)
{
  if (c->spawn != SPAWN_NONE)
    fetcher_start_done (c);
  stats_fetcher_dropped (c);
  if (c->fetcher_fd >= 0)
    close (c->fetcher_fd);          /* the fetcher exits on EOF */
  c->fetcher_fd = -1;
  c->fetcher_open = false;
  outq_clear (&c->to_fetcher);
  memset (&c->fin, 0, sizeof c->fin);
  c->discards_unmatched = 0;
  staging_drop (c);                 /* before the area's last reference */
  if (c->area) {
    area_unref (c->area);           /* replies still queued keep it */
    c->area = NULL;
  }
  if (c->pipe) {
    data_pipe_unref (c->pipe);      /* so do chunks still queued */
    c->pipe = NULL;
  }
}

void
client_close (struct client *c, const char *why)
{
  if (c->dead)
    return;
  if (why)
    debug ("client %s: closing: %s", c->peer, why);
  fe.nlive--;                           /* counted by admit_client */
  stats_client_closed (c);
  drop_fetcher (c);
  outq_clear (&c->out);
  for (unsigned i = 0; i < MAX_INFLIGHT_PER_CLIENT; i++)
    area_release (&c->slots[i].span);
  c->payload = NULL;
  tls_end (c);
  if (c->wfd != c->rfd && c->wfd >= 0)
    close (c->wfd);
  if (c->rfd >= 0)
    close (c->rfd);
  c->rfd = c->wfd = -1;
  /* Freed by reap_clients() (frontend.c) at the end of the loop round, so that every
   * caller up the stack may still look at c->dead. */
  c->dead = true;
}

