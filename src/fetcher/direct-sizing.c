/*
 * direct-sizing.c: how many bytes the direct reads ask of the server at
 * once, and in how many requests, from the round trip and the rate they
 * measure (see below); and the socket room a body needs to wait unread.
 */
#include <inttypes.h>
#include <sys/socket.h>

#include "direct.h"
#include "limits-direct.h"

/* ---- Sizing to the link ----
 *
 * A distant server (a CDN, an object store) answers each request a round
 * trip late and often caps each TCP connection's rate: a few large
 * ranges on a few connections then leave the link mostly idle.  The
 * reads sized here are ones the client already asked for
 * (the front-end holds at most --client-memory of them in flight), so
 * nothing is fetched on speculation: what is chosen is how many bytes of
 * them are asked of the server at once (the look-ahead), and in how many
 * requests.  Measured as reads go:
 *
 * - the round trip r: the least time from a request's last byte to its
 *   reply's whole header section, over this epoch of DIRECT_RTT_SAMPLES
 *   replies and the last (a busy server or event loop only adds to it,
 *   and a server that moves away is followed within two epochs);
 * - the rate R: bytes moved into the pipe a second, over windows of
 *   DIRECT_RATE_WINDOW_MS and at least four round trips, counted only
 *   while direct reads run.
 *
 * The look-ahead is DIRECT_AHEAD_GAIN x R x r: a few times bandwidth x
 * delay, so that it grows for as long as more bytes in flight bring more
 * rate, and shrinks when they do not.  It is at least DIRECT_AHEAD_BYTES,
 * which is what suits a LAN, where R x r is tiny; at most
 * DIRECT_AHEAD_MAX_BYTES; and it moves by a doubling or a halving per
 * window at most.
 *
 * On a distant server (r of DIRECT_FAR_RTT_US or more, or none measured
 * yet) each request
 * carries the look-ahead divided among the connections: throughput is
 * about look-ahead / (r + piece / one connection's rate), so smaller
 * pieces on more connections go faster, down to DIRECT_PIECE_MIN_BYTES (a
 * request costs the server and this process more than its header bytes).
 * A near server keeps ranges of up to COALESCE_MAX_BYTES, the size that
 * suits a LAN best.
 *
 * Each piece must be able to arrive while another read owns the pipe,
 * or its socket fills, the server's window closes, and the connections'
 * caps never add up.  So a request's socket is made big enough for its
 * whole body when it goes out (hold_body), a piece is no bigger than a
 * socket can hold (SO_RCVLOWAT's cap: half of tcp_rmem's maximum), and
 * the pipe's owner moves a part only once all of it is here (move_body):
 * the pipe is never held waiting for a server.  The bodies stay spliced:
 * received into the data area instead while the pipe is busy, every byte
 * would be copied twice (recv, and the front-end's send from the area),
 * the CPU the data pipe exists to save; and a socket's unread bytes cost
 * no more memory than the same bytes in the area would.
 */

void
sizing_init (void)
{
  direct.rtt_us = 0;
  direct.rtt_min_now = direct.rtt_min_last = UINT64_MAX;
  direct.rtt_samples = 0;
  direct.rate = 0;
  direct.rate_start_us = 0;
  direct.ahead = DIRECT_AHEAD_BYTES;
}

void
rtt_sample (uint64_t us)
{
  if (us == 0)
    us = 1;                     /* 0 means none measured */
  if (us < direct.rtt_min_now)
    direct.rtt_min_now = us;
  if (++direct.rtt_samples == DIRECT_RTT_SAMPLES) {
    direct.rtt_min_last = direct.rtt_min_now;
    direct.rtt_min_now = UINT64_MAX;
    direct.rtt_samples = 0;
  }
  direct.rtt_us = MIN (direct.rtt_min_now, direct.rtt_min_last);
}

uint64_t
direct_round_trip_us (void)
{
  return direct.rtt_us;
}

/* A new rate window, when direct reads start after none ran: the time
 * between is not the link's. */
void
rate_open (void)
{
  direct.rate_start_us = clock_us ();
  direct.rate_bytes = 0;
}

static void
resize_ahead (void)
{
  /* In floating point: R x r could pass 2^64 in integers (rates of
   * terabytes a second, round trips of minutes), never a double. */
  double want = (double) DIRECT_AHEAD_GAIN * (double) direct.rate *
    (double) direct.rtt_us / 1e6;
  double now = direct.ahead;

  if (want > 2 * now)
    want = 2 * now;
  if (want < now / 2)
    want = now / 2;
  if (want < DIRECT_AHEAD_BYTES)
    want = DIRECT_AHEAD_BYTES;
  if (want > DIRECT_AHEAD_MAX_BYTES)
    want = DIRECT_AHEAD_MAX_BYTES;
  if ((uint32_t) want != direct.ahead)
    debug ("direct reads: look-ahead %" PRIu32 " KiB (%" PRIu64 " KiB/s, round "
           "trip %" PRIu64 " us, pieces of up to %" PRIu32 " KiB)",
           (uint32_t) want / 1024, direct.rate / 1024, direct.rtt_us,
           direct_piece_max () / 1024);
  direct.ahead = (uint32_t) want;
}

/* bytes of a part went into the pipe. */
void
rate_count (size_t bytes)
{
  uint64_t now = clock_us (), span, window;

  if (direct.rate_start_us == 0)
    rate_open ();
  direct.rate_bytes += bytes;
  span = now - direct.rate_start_us;
  window = MAX ((uint64_t) DIRECT_RATE_WINDOW_MS * 1000, 4 * direct.rtt_us);
  if (span < window)
    return;
  direct.rate = (uint64_t) ((double) direct.rate_bytes * 1e6 / (double) span);
  rate_open ();
  resize_ahead ();
}

uint32_t
direct_piece_max (void)
{
  uint64_t piece;

  /* Near.  Before the first reply no round trip is known: then split,
   * as on a distant server, since one whole range on one capped
   * connection could take seconds (COALESCE_MAX_BYTES at a few MB/s),
   * while a few more requests on a LAN cost next to nothing. */
  if (direct.rtt_us != 0 && direct.rtt_us < DIRECT_FAR_RTT_US)
    return COALESCE_MAX_BYTES;
  piece = direct.ahead / http.f->cfg->connections;
  if (piece < DIRECT_PIECE_MIN_BYTES)
    piece = DIRECT_PIECE_MIN_BYTES;
  if (direct.sock_hold != 0 && piece > direct.sock_hold)
    piece = direct.sock_hold;
  return (uint32_t) MIN (piece, COALESCE_MAX_BYTES);
}

/* Make t's socket able to hold the whole body unread: SO_RCVLOWAT grows
 * the receive buffer to twice the mark (up to tcp_rmem's maximum, unless
 * SO_RCVBUF fixed it), and the buffer stays when the mark goes back to 1.
 * (SO_RCVBUF itself would fix the buffer at net.core.rmem_max and stop
 * the kernel's own tuning.)  The mark the kernel took says how much a
 * socket can hold: later pieces are no bigger (direct_piece_max). */
void
hold_body (struct transfer *t)
{
  /* Twice the body: the kernel's room for a mark is an estimate of its
   * buffers' overhead, and a socket that cannot take all of a part it
   * waits for is left waiting (a buffer made for exactly the body closes
   * its window just short of it).  length <= COALESCE_MAX_BYTES: no
   * overflow. */
  int v = (int) (2 * t->length), got = 0, one = 1;
  socklen_t len = sizeof got;

  if (direct.addr.ss_family == AF_UNIX || t->to_area)
    return;                     /* no such mark: its buffer is its own; a
                                   body into the data area is received as
                                   it comes */
  if (t->length <= DIRECT_HOLD_MIN_BYTES)
    return;                     /* the first window holds it: three system
                                   calls saved on every small random read */
  if (setsockopt (t->sock, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v) == 0 &&
      getsockopt (t->sock, SOL_SOCKET, SO_RCVLOWAT, &got, &len) == 0 &&
      got > 1 && got < v &&
      (direct.sock_hold == 0 || (uint32_t) got / 2 < direct.sock_hold))
    direct.sock_hold = (uint32_t) got / 2;
  (void) setsockopt (t->sock, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
}

bool
direct_may_start (void)
{
  uint64_t ahead = 0;
  unsigned i;

  for (i = 0; i < http.f->cfg->connections; i++)
    if (http.pool[i].direct)
      ahead += http.pool[i].length - http.pool[i].received;
  return ahead < direct.ahead;
}
