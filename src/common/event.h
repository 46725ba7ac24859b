/*
 * event.h: descriptors with callbacks and deadlines, one poll(2) that
 * waits for them and dispatches (event.c).
 *
 * A loop registers each descriptor it wants to hear about, with the
 * events it wants (POLLIN, POLLOUT), a function and a cookie, and each
 * deadline with a function and a cookie; event_dispatch waits until a
 * descriptor is ready or the earliest deadline, then calls the ready
 * descriptors' functions in the order they were registered, then the due
 * deadlines' functions, earliest first.  The tables are sized once, at
 * event_new: nothing is allocated per round.  No state outside the
 * struct event_loop the caller holds.
 *
 * The loops here build their set anew each round (event_clear, then each
 * peer's module registers what its state wants now: POLLOUT only while
 * output is queued, no POLLIN while a peer must wait), so that what is
 * polled never lags behind what a peer's state says.  Registrations also
 * last until removed, for a loop that keeps them.
 */
#ifndef NBDCURLD_EVENT_H
#define NBDCURLD_EVENT_H

#include <poll.h>
#include <stdint.h>

struct event_loop;

/* A registered descriptor is ready: revents as poll(2) gave them. */
typedef void event_fd_fn (int fd, short revents, void *cookie);
/* A deadline has come. */
typedef void event_timer_fn (void *cookie);

/* What event_dispatch did. */
enum {
  EVENT_DISPATCHED = 0,         /* waited, and ran what was ready or due */
  EVENT_INTERRUPTED = 1,        /* a signal cut the wait short: nothing ran,
                                   so the caller's loop can look at what its
                                   handler set before going round */
};

/* A loop for at most max_fds descriptors and max_timers deadlines at a
 * time; NULL with errno when there is no memory. */
struct event_loop *event_new (unsigned max_fds, unsigned max_timers);
void event_free (struct event_loop *ev);

/* Forget every descriptor and deadline (not during event_dispatch). */
void event_clear (struct event_loop *ev);

/* Call fn (fd, revents, cookie) when fd has one of events, or an error
 * or hang-up (which poll reports even for events 0).  A descriptor below
 * 0 (a peer gone) is not watched, and 0 returned.  Returns 0, or -1 with
 * errno ENOSPC when max_fds are registered.  One added while
 * event_dispatch runs is first polled in the next round. */
int event_add (struct event_loop *ev, int fd, short events, event_fd_fn *fn, void *cookie);

/* Stop watching fd, wherever it was registered.  Safe from any function
 * event_dispatch calls: fd's function does not run for this round's
 * events, so a callback may close the descriptors of another peer (or
 * its own) and the number's next owner is never mistaken for it. */
void event_remove (struct event_loop *ev, int fd);

/* Call fn (cookie) once at_ms (CLOCK_MONOTONIC, clock.h) has come; fn
 * NULL only bounds the wait (the caller's own pass after event_dispatch
 * looks at what is due).  Returns the deadline's id for
 * event_timer_cancel, or -1 with errno ENOSPC when max_timers are set. */
int event_timer (struct event_loop *ev, uint64_t at_ms, event_timer_fn *fn, void *cookie);
/* Safe from any function event_dispatch calls. */
void event_timer_cancel (struct event_loop *ev, int id);

/* One round: wait (poll, restarted by nothing: see EVENT_INTERRUPTED)
 * until a descriptor is ready or a deadline comes, then dispatch.
 * Deadlines set while it dispatches wait for the next round, so a
 * function that sets itself again cannot keep the round going.  Returns
 * EVENT_DISPATCHED, EVENT_INTERRUPTED, or -1 with poll's errno. */
int event_dispatch (struct event_loop *ev);

/* Wait for one descriptor alone, until deadline_ms, through signals:
 * for a peer whose answer is waited for synchronously.  Returns 1 when
 * fd has one of events (or an error or hang-up), 0 once the deadline has
 * passed, -1 with poll's errno. */
int event_wait_one (int fd, short events, uint64_t deadline_ms);

#endif
