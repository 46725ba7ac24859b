/*
 * direct-wait.c: the event loop's side of the direct reads: the
 * descriptors they wait for and how long, moving them on when those are
 * ready, and the deadlines (--stall-timeout's windows, --timeout) that
 * end a read whose server stalls.
 */
#include <inttypes.h>

#include "direct.h"
#include "limits-transfer.h"

/* The next wait on the server may last this long, and never past the
 * read's --timeout. */
void
set_deadline (struct transfer *t, unsigned seconds)
{
  t->deadline_ms = clock_ms () + (uint64_t) seconds * 1000;
  if (t->deadline_ms > t->limit_ms)
    t->deadline_ms = t->limit_ms;
}

/* The server has a stall window (--stall-timeout) from now: for the
 * request and the whole header section, interim replies included (header
 * bytes move no deadline, as libcurl counts only body bytes), or for
 * MIN_TRANSFER_RATE bytes of body a second on average (deadline_passed
 * starts the next window when they came). */
void
start_window (struct transfer *t)
{
  t->window_bytes = 0;
  /* Bytes already here arrived before this window. */
  t->window_here = t->dstate == DIRECT_QUEUED || t->dstate == DIRECT_BODY
    ? body_available (t) : 0;
  set_deadline (t, fetcher_stall_timeout (http.f->cfg));
}

/* Body bytes that came in this window: moved into the pipe, or here
 * waiting for the whole part (wait_for_part). */
static uint64_t
window_arrived (const struct transfer *t)
{
  uint64_t here = body_available (t);

  return t->window_bytes + here > t->window_here
    ? t->window_bytes + here - t->window_here : 0;
}

/* A read is past its deadline.  Returns true if it goes on: its body
 * came at the minimum rate, and a new window starts; else it fails, and
 * says why. */
static bool
deadline_passed (struct transfer *t, uint64_t now)
{
  unsigned window = fetcher_stall_timeout (http.f->cfg);

  if (now >= t->limit_ms)
    direct_failf (t, RETRY_CAUSE_FINAL, "timed out after %" PRIu32 " seconds (--timeout)",
                  http.f->cfg->timeout);
  else if (t->dstate == DIRECT_CONNECTING)
    direct_failf (t, RETRY_CAUSE_TRANSIENT, "cannot connect to the web server: timed out");
  else if (t->dstate != DIRECT_BODY)
    direct_failf (t, RETRY_CAUSE_TRANSIENT, "stalled: no complete reply within %u "
                  "seconds of the request "
                  "(%s; %u interim replies)", window,
                  t->dstate == DIRECT_SENDING ? "it was not taken"
                  : t->head_len > 0 ? "its headers came in part" : "nothing came",
                  t->reply.interim);
  else if (window_arrived (t) < (uint64_t) MIN_TRANSFER_RATE * window)
    direct_failf (t, RETRY_CAUSE_TRANSIENT, "stalled: %" PRIu64 " bytes of the "
                  "reply's body in %u seconds, "
                  "less than %u a second", window_arrived (t), window, MIN_TRANSFER_RATE);
  else {
    start_window (t);
    return true;
  }
  return false;
}

/* The owner waits for its server's bytes between two parts: the pipe
 * is free for a read whose part is here. */
static bool
owner_waits_for_server (void)
{
  return direct.owner != NULL && !direct.owner_wants_pipe &&
    direct.owner->part_received == 0;
}

unsigned
direct_wait_fds (struct curl_waitfd *fds, unsigned max, long *timeout_ms)
{
  uint64_t now = clock_ms (), soonest = UINT64_MAX;
  unsigned n = 0, i;

  *timeout_ms = -1;
  if (!direct.prepared)
    return 0;
  for (i = 0; i < http.f->cfg->connections && n < max; i++) {
    struct transfer *t = &http.pool[i];
    short events;

    if (tls_connecting_slot (t)) {
      long connect_ms = -1;
      if (t->deadline_ms < soonest)
        soonest = t->deadline_ms;
      n += tls_connect_fds (t, fds + n, max - n, &connect_ms);
      if (connect_ms >= 0 && (uint64_t) connect_ms + now < soonest)
        soonest = (uint64_t) connect_ms + now;
      continue;
    }
    if (!t->direct || t->sock < 0)
      continue;
    if (t->dstate == DIRECT_QUEUED && !(t->wake_on_part && owner_waits_for_server ()))
      continue;                 /* waiting for the pipe, not the server */
    if (t->dstate == DIRECT_BODY && direct.owner_wants_pipe && !t->to_area)
      continue;
    events = (t->dstate == DIRECT_CONNECTING || t->dstate == DIRECT_SENDING)
      ? CURL_WAIT_POLLOUT : CURL_WAIT_POLLIN;
    fds[n++] = (struct curl_waitfd) { .fd = t->sock, .events = events };
    if (t->deadline_ms < soonest)
      soonest = t->deadline_ms;
  }
  if (direct.owner != NULL && direct.owner_wants_pipe && n < max)
    fds[n++] = (struct curl_waitfd) { .fd = fetcher_pipe_fd, .events = CURL_WAIT_POLLOUT };
  if (soonest != UINT64_MAX)
    *timeout_ms = soonest <= now ? 0 : (long) (soonest - now);
  return n;
}

/* Is t's socket among the descriptors a wait found ready? */
static bool
sock_ready (const struct transfer *t, const struct curl_waitfd *fds, unsigned n)
{
  unsigned j;

  for (j = 0; j < n; j++)
    if (fds[j].fd == t->sock && fds[j].revents != 0)
      return true;
  return false;
}

/* A read in the owner queue is polled only with its part all here
 * (start_waiting): it may go before an owner whose server is slow. */
static void
queued_ready (struct transfer *t)
{
  if (!part_here (t)) {
    /* Readable without its part: the server closed or reset the
     * connection.  Polled no more (it would be ready for ever); its turn
     * finds out. */
    (void) set_wake_mark (t, 1);
    t->wake_on_part = false;
  }
  else
    run_owners ();
}

/* One slot after a wait: past its deadline, or its descriptor ready. */
static void
slot_progress (struct transfer *t, const struct curl_waitfd *fds, unsigned n, uint64_t now)
{
  if (tls_connecting_slot (t)) {
    if (now >= t->deadline_ms)
      (void) deadline_passed (t, now);
    return;
  }
  if (!t->direct || t->sock < 0)
    return;
  if (t->dstate == DIRECT_QUEUED) {
    if (sock_ready (t, fds, n))
      queued_ready (t);
    return;
  }
  if (now >= t->deadline_ms &&
      !(t->dstate == DIRECT_BODY && direct.owner_wants_pipe && !t->to_area) &&
      !deadline_passed (t, now))
    return;
  if (!sock_ready (t, fds, n))
    return;
  if (t->dstate == DIRECT_BODY && !t->to_area)
    run_owners ();
  else
    step (t);
}

void
direct_progress (const struct curl_waitfd *fds, unsigned n)
{
  uint64_t now = clock_ms ();
  unsigned i, j;

  if (!direct.prepared)
    return;
  if (tls_connecting ())
    tls_connects ();
  /* Reads past their deadline (checked first, so that a server sending
   * a little all the time cannot keep it from coming), then reads whose
   * descriptor is ready. */
  for (i = 0; i < http.f->cfg->connections; i++)
    slot_progress (&http.pool[i], fds, n, now);
  for (j = 0; j < n; j++)
    if (fds[j].fd == fetcher_pipe_fd && fds[j].revents != 0)
      run_owners ();
  run_owners ();
}
