/*
 * unit-event.c: the event helper (src/common/event.c): registration,
 * dispatch order, removal and closing while dispatching, deadlines in
 * their order, a full table, a signal during the wait.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "clock.h"
#include "event.h"
#include "unit.h"

/* What the functions saw, in the order they ran. */
static int seen[16];
static unsigned nseen;
static struct event_loop *loop;
static int pipes[4][2];

static void
note (int what)
{
  if (nseen < sizeof seen / sizeof seen[0])
    seen[nseen++] = what;
}

static void
on_fd (int fd, short revents, void *cookie)
{
  (void) fd;
  if (revents & POLLIN)
    note ((int) (intptr_t) cookie);
}

/* Removes the next pipe's registration: its function must not run. */
static void
on_fd_remove_next (int fd, short revents, void *cookie)
{
  on_fd (fd, revents, cookie);
  event_remove (loop, pipes[1][0]);
}

/* Closes its own descriptor and another's, and a new descriptor takes
 * the other's number: nothing runs for that number this round. */
static void
on_fd_close (int fd, short revents, void *cookie)
{
  on_fd (fd, revents, cookie);
  event_remove (loop, fd);
  close (fd);
  event_remove (loop, pipes[2][0]);
  close (pipes[2][0]);
  pipes[2][0] = dup (pipes[3][0]);
}

static void
on_timer (void *cookie)
{
  note ((int) (intptr_t) cookie);
}

/* Sets itself again, at once: that one waits for the next round. */
static void
on_timer_again (void *cookie)
{
  note ((int) (intptr_t) cookie);
  (void) event_timer (loop, 0, on_timer, (void *) (intptr_t) 99);
}

static void
on_alarm (int sig)
{
  (void) sig;
}

static void
make_pipes (void)
{
  unsigned i;

  for (i = 0; i < 4; i++)
    if (pipe (pipes[i]) == -1 || write (pipes[i][1], "x", 1) != 1) {
      printf ("Bail out! pipe\n");
      exit (1);
    }
}

static void
close_pipes (void)
{
  unsigned i;

  for (i = 0; i < 4; i++) {
    close (pipes[i][0]);
    close (pipes[i][1]);
  }
}

static bool
seen_is (const int *want, unsigned n)
{
  return nseen == n && memcmp (seen, want, n * sizeof *want) == 0;
}

static void
test_order (void)
{
  const int want[] = { 3, 1, 2 };
  unsigned i;

  make_pipes ();
  loop = event_new (8, 4);
  /* Registration order, not descriptor order; a descriptor that is not
   * ready and one without the event asked for stay quiet. */
  CHECK (event_add (loop, pipes[2][0], POLLIN, on_fd, (void *) 3) == 0, "add");
  CHECK (event_add (loop, pipes[0][0], POLLIN, on_fd, (void *) 1) == 0, "add");
  CHECK (event_add (loop, pipes[0][1], 0, on_fd, (void *) 7) == 0, "add with no events");
  CHECK (event_add (loop, pipes[1][0], POLLIN, on_fd, (void *) 2) == 0, "add");
  CHECK (event_add (loop, -1, POLLIN, on_fd, (void *) 8) == 0, "a closed peer is skipped");
  nseen = 0;
  CHECK (event_dispatch (loop) == EVENT_DISPATCHED, "dispatch");
  CHECK (seen_is (want, 3), "ready descriptors in registration order");
  /* Registrations last until removed. */
  nseen = 0;
  CHECK (event_dispatch (loop) == EVENT_DISPATCHED && seen_is (want, 3), "kept");
  event_clear (loop);
  nseen = 0;
  CHECK (event_timer (loop, monotonic_ms (), NULL, NULL) >= 0, "a wake-up alone");
  CHECK (event_dispatch (loop) == EVENT_DISPATCHED && nseen == 0, "cleared");
  for (i = 0; i < 8; i++)
    (void) event_add (loop, pipes[0][0], POLLIN, on_fd, (void *) 1);
  errno = 0;
  CHECK (event_add (loop, pipes[1][0], POLLIN, on_fd, NULL) == -1 && errno == ENOSPC,
         "a full table refuses");
  event_remove (loop, pipes[0][0]);
  CHECK (event_add (loop, pipes[1][0], POLLIN, on_fd, (void *) 2) == 0,
         "a removed entry's place is free again");
  nseen = 0;
  CHECK (event_dispatch (loop) == EVENT_DISPATCHED && nseen == 1 && seen[0] == 2,
         "only what is left runs");
  event_free (loop);
  close_pipes ();
}

static void
test_removal (void)
{
  const int want_remove[] = { 1, 3 }, want_close[] = { 1, 2, 4 };

  make_pipes ();
  loop = event_new (8, 1);
  (void) event_add (loop, pipes[0][0], POLLIN, on_fd_remove_next, (void *) 1);
  (void) event_add (loop, pipes[1][0], POLLIN, on_fd, (void *) 2);
  (void) event_add (loop, pipes[2][0], POLLIN, on_fd, (void *) 3);
  nseen = 0;
  CHECK (event_dispatch (loop) == EVENT_DISPATCHED && seen_is (want_remove, 2),
         "a descriptor removed while dispatching does not run");
  event_clear (loop);
  (void) event_add (loop, pipes[0][0], POLLIN, on_fd_close, (void *) 1);
  (void) event_add (loop, pipes[1][0], POLLIN, on_fd, (void *) 2);
  (void) event_add (loop, pipes[2][0], POLLIN, on_fd, (void *) 3);
  nseen = 0;
  CHECK (event_dispatch (loop) == EVENT_DISPATCHED && seen_is (want_close, 2),
         "a descriptor closed by a function, and one it closed, do not run");
  /* The new descriptor, registered while dispatching, is polled next. */
  (void) event_add (loop, pipes[2][0], POLLIN, on_fd, (void *) 4);
  nseen = 0;
  CHECK (event_dispatch (loop) == EVENT_DISPATCHED && seen_is (want_close + 1, 2),
         "the rest runs in the next round");
  event_free (loop);
  pipes[0][0] = dup (pipes[3][0]);      /* closed by on_fd_close */
  close_pipes ();
}

static void
test_timers (void)
{
  const int want[] = { 10, 20, 21, 30 }, want_next[] = { 99 };
  uint64_t now = monotonic_ms ();
  int id;

  loop = event_new (1, 8);
  (void) event_timer (loop, now - 1, on_timer_again, (void *) 30);
  (void) event_timer (loop, now - 3, on_timer, (void *) 10);
  (void) event_timer (loop, now - 2, on_timer, (void *) 20);
  (void) event_timer (loop, now - 2, on_timer, (void *) 21);
  (void) event_timer (loop, now + 60000, on_timer, (void *) 40);
  id = event_timer (loop, now - 4, on_timer, (void *) 5);
  event_timer_cancel (loop, id);
  nseen = 0;
  CHECK (event_dispatch (loop) == EVENT_DISPATCHED && seen_is (want, 4),
         "due deadlines earliest first, equal ones in the order set, a cancelled one never");
  nseen = 0;
  CHECK (event_dispatch (loop) == EVENT_DISPATCHED && seen_is (want_next, 1),
         "one set while dispatching waits for the next round");
  event_clear (loop);
  (void) event_timer (loop, monotonic_ms () + 30, on_timer, (void *) 1);
  now = monotonic_ms ();
  nseen = 0;
  CHECK (event_dispatch (loop) == EVENT_DISPATCHED && nseen == 1 &&
         monotonic_ms () >= now + 29, "the wait lasts until the deadline");
  for (id = 0; id < 8; id++)
    (void) event_timer (loop, now + 60000, on_timer, NULL);
  errno = 0;
  CHECK (event_timer (loop, now, on_timer, NULL) == -1 && errno == ENOSPC,
         "a full timer table refuses");
  event_free (loop);
}

static void
test_interrupted (void)
{
  struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = 0 };   /* no SA_RESTART */
  const struct itimerval in_20ms = { .it_value = { .tv_usec = 20000 } };
  uint64_t start;
  int p[2];

  if (pipe (p) == -1)
    exit (1);
  sigaction (SIGALRM, &sa, NULL);
  loop = event_new (1, 1);
  (void) event_add (loop, p[0], POLLIN, on_fd, (void *) 1);
  (void) event_timer (loop, monotonic_ms () + 60000, on_timer, (void *) 2);
  setitimer (ITIMER_REAL, &in_20ms, NULL);
  nseen = 0;
  CHECK (event_dispatch (loop) == EVENT_INTERRUPTED && nseen == 0,
         "a signal ends the wait, and nothing runs");
  if (write (p[1], "x", 1) != 1)
    exit (1);
  CHECK (event_dispatch (loop) == EVENT_DISPATCHED && nseen == 1 && seen[0] == 1,
         "the next round goes on");
  event_free (loop);
  CHECK (event_wait_one (p[0], POLLIN, monotonic_ms () + 60000) == 1,
         "a single wait: ready");
  close (p[0]);
  close (p[1]);
  if (pipe (p) == -1)
    exit (1);
  setitimer (ITIMER_REAL, &in_20ms, NULL);
  start = monotonic_ms ();
  CHECK (event_wait_one (p[0], POLLIN, start + 60) == 0 && monotonic_ms () >= start + 59,
         "a single wait goes on through a signal, until its deadline");
  close (p[0]);
  close (p[1]);
}

int
main (void)
{
  test_order ();
  test_removal ();
  test_timers ();
  test_interrupted ();
  return UNIT_END ();
}
