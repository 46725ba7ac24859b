/*
 * event.c: the event helper every role's loop uses (event.h).
 *
 * relayd and httpd put libevent under their loops.  Ours is a few dozen
 * lines over poll(2) instead, for the sandboxes: libevent would be one
 * more library mapped into the front-end, which reads every client byte,
 * and it picks epoll or select by itself, system calls no role's policy
 * (policy/ROLE.policy) allows today.  This file makes poll and
 * clock_gettime only, which every role that runs a loop already may.
 *
 * The descriptors are a table in registration order, which is the order
 * their functions run in: a loop's fairness rules (the listeners before
 * the clients, a client's socket before its fetcher's) stay the caller's
 * to say.  A removed entry keeps its place until the next round starts,
 * so that what poll returned still lines up with the table while
 * functions run.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

#include "clock.h"
#include "event.h"

struct event_fd {
  int fd;                       /* -1: removed */
  short events;
  event_fd_fn *fn;
  void *cookie;
};

struct event_timer {
  bool set;
  bool due;                     /* came by this round's start: runs now */
  uint64_t at_ms;
  uint64_t serial;              /* equal deadlines run in the order set */
  event_timer_fn *fn;
  void *cookie;
};

struct event_loop {
  struct event_fd *fds;
  struct pollfd *pfd;           /* this round's poll set, as fds */
  unsigned nfds, max_fds;
  unsigned npolled;             /* entries dispatching now; 0 between rounds */
  struct event_timer *timers;
  unsigned max_timers;
  unsigned timers_end;          /* no timer set at or past this slot: the
                                   passes over them stop here */
  uint64_t timer_serial;
};

struct event_loop *
event_new (unsigned max_fds, unsigned max_timers)
{
  struct event_loop *ev = calloc (1, sizeof *ev);

  if (ev == NULL)
    return NULL;
  /* calloc (0, ...) may be NULL: one entry at least. */
  ev->fds = calloc (max_fds ? max_fds : 1, sizeof *ev->fds);
  ev->pfd = calloc (max_fds ? max_fds : 1, sizeof *ev->pfd);
  ev->timers = calloc (max_timers ? max_timers : 1, sizeof *ev->timers);
  if (ev->fds == NULL || ev->pfd == NULL || ev->timers == NULL) {
    event_free (ev);
    errno = ENOMEM;
    return NULL;
  }
  ev->max_fds = max_fds;
  ev->max_timers = max_timers;
  return ev;
}

void
event_free (struct event_loop *ev)
{
  if (ev == NULL)
    return;
  free (ev->fds);
  free (ev->pfd);
  free (ev->timers);
  free (ev);
}

void
event_clear (struct event_loop *ev)
{
  unsigned i;

  ev->nfds = 0;
  for (i = 0; i < ev->timers_end; i++)
    ev->timers[i].set = false;
  ev->timers_end = 0;
}

/* Close the gaps removed entries left, keeping the order (between
 * rounds only: while dispatching, positions are what poll answered for). */
static void
compact (struct event_loop *ev)
{
  unsigned i, n = 0;

  for (i = 0; i < ev->nfds; i++)
    if (ev->fds[i].fd >= 0)
      ev->fds[n++] = ev->fds[i];
  ev->nfds = n;
}

int
event_add (struct event_loop *ev, int fd, short events, event_fd_fn *fn, void *cookie)
{
  if (fd < 0)
    return 0;
  if (ev->nfds == ev->max_fds && ev->npolled == 0)
    compact (ev);
  if (ev->nfds == ev->max_fds) {
    errno = ENOSPC;
    return -1;
  }
  ev->fds[ev->nfds++] = (struct event_fd) {
    .fd = fd, .events = events, .fn = fn, .cookie = cookie,
  };
  return 0;
}

void
event_remove (struct event_loop *ev, int fd)
{
  unsigned i;

  for (i = 0; i < ev->nfds; i++)
    if (ev->fds[i].fd == fd)
      ev->fds[i].fd = -1;
}

int
event_timer (struct event_loop *ev, uint64_t at_ms, event_timer_fn *fn, void *cookie)
{
  /* Past the last slot in use, else the first free one: a loop that
   * sets every deadline anew each round only ever appends. */
  unsigned i = ev->timers_end;

  if (i == ev->max_timers)
    for (i = 0; i < ev->max_timers && ev->timers[i].set; i++)
      ;
  if (i == ev->max_timers) {
    errno = ENOSPC;
    return -1;
  }
  ev->timers[i] = (struct event_timer) {
    .set = true, .at_ms = at_ms, .serial = ev->timer_serial++, .fn = fn, .cookie = cookie,
  };
  if (i >= ev->timers_end)
    ev->timers_end = i + 1;
  return (int) i;                       /* i < max_timers, an unsigned */
}

void
event_timer_cancel (struct event_loop *ev, int id)
{
  if (id >= 0 && (unsigned) id < ev->max_timers)
    ev->timers[id].set = false;
}

/* poll's timeout: until the earliest deadline, -1 when none is set. */
static int
wait_ms (const struct event_loop *ev, uint64_t now)
{
  uint64_t next = UINT64_MAX;
  unsigned i;

  for (i = 0; i < ev->timers_end; i++)
    if (ev->timers[i].set && ev->timers[i].at_ms < next)
      next = ev->timers[i].at_ms;
  if (next == UINT64_MAX)
    return -1;
  return next <= now ? 0 : next - now < INT_MAX ? (int) (next - now) : INT_MAX;
}

static void
run_ready (struct event_loop *ev)
{
  unsigned i;

  for (i = 0; i < ev->npolled; i++) {
    struct event_fd *e = &ev->fds[i];
    /* Removed by a function run before it: not its events any more. */
    if (ev->pfd[i].revents != 0 && e->fd >= 0)
      e->fn (e->fd, ev->pfd[i].revents, e->cookie);
  }
  ev->npolled = 0;
}

/* The deadlines that had come by now, earliest first; one set meanwhile
 * waits for the next round. */
static void
run_due (struct event_loop *ev, uint64_t now)
{
  unsigned i;

  for (i = 0; i < ev->timers_end; i++) {
    struct event_timer *t = &ev->timers[i];
    t->due = t->set && t->at_ms <= now;
    if (t->due && t->fn == NULL)
      t->set = t->due = false;          /* it only bounded the wait */
  }
  for (;;) {
    struct event_timer *first = NULL;
    for (i = 0; i < ev->timers_end; i++) {
      struct event_timer *t = &ev->timers[i];
      if (t->set && t->due && (first == NULL || t->at_ms < first->at_ms ||
                               (t->at_ms == first->at_ms && t->serial < first->serial)))
        first = t;
    }
    if (first == NULL)
      return;
    first->set = first->due = false;
    first->fn (first->cookie);
  }
}

int
event_dispatch (struct event_loop *ev)
{
  unsigned i;
  int r;

  compact (ev);
  for (i = 0; i < ev->nfds; i++)
    ev->pfd[i] = (struct pollfd) { .fd = ev->fds[i].fd, .events = ev->fds[i].events };
  r = poll (ev->pfd, ev->nfds, wait_ms (ev, monotonic_ms ()));
  if (r == -1)
    return errno == EINTR ? EVENT_INTERRUPTED : -1;
  ev->npolled = ev->nfds;
  run_ready (ev);
  run_due (ev, monotonic_ms ());
  return EVENT_DISPATCHED;
}

int
event_wait_one (int fd, short events, uint64_t deadline_ms)
{
  for (;;) {
    struct pollfd pfd = { .fd = fd, .events = events };
    uint64_t now = monotonic_ms ();
    int r;

    if (now >= deadline_ms)
      return 0;
    r = poll (&pfd, 1, deadline_ms - now < INT_MAX ? (int) (deadline_ms - now) : INT_MAX);
    if (r == -1 && errno != EINTR)
      return -1;
    if (r > 0)
      return 1;
  }
}
