/*
 * direct.h: private to the direct path (fetcher-direct.c and the
 * direct-*.c files beside it): a read's states, the path's one state,
 * and what its files call in each other.  fetcher-http.c sees only the
 * entry points in fetcher-http.h.
 *
 * The files, each one concern (the arrows of calls go down this list,
 * but for the state machine, which the others move on when a wait
 * ends):
 *   fetcher-direct.c     a read's state machine (step) and its start
 *   direct-prepare.c     whether an export's reads go direct; the
 *                        request head every read sends
 *   direct-wait.c        what the reads wait for, and their deadlines
 *   direct-body.c        moving bodies: the data pipe's owners, and
 *                        bodies received into the data area
 *   direct-fail.c        a failed attempt, or a read handed to libcurl
 *   direct-sizing.c      sizing the requests to the link
 *   direct-tls.c         https connections made by libcurl
 *   direct-conn.c        each slot's connection: open, reuse, send,
 *                        receive, close
 *   direct-head-parse.c  the reply's header section (no state: it links
 *                        on its own, for tests/unit/)
 */
#ifndef NBDCURLD_DIRECT_H
#define NBDCURLD_DIRECT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include "clock.h"
#include "fetcher-http.h"

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

enum direct_state {
  DIRECT_CONNECTING,          /* non-blocking connect: wait POLLOUT */
  DIRECT_SENDING,             /* the request: wait POLLOUT */
  DIRECT_HEADERS,             /* the reply's header section: wait POLLIN */
  DIRECT_QUEUED,              /* headers good: waiting to own the pipe */
  DIRECT_BODY,                /* owner: splicing the body */
  DIRECT_HANDED,              /* to go through libcurl (direct_take_handed) */
};

struct direct_path {
  bool prepared;
  bool tls;                         /* https: connections through libcurl,
                                       bodies into the data area */
  struct sockaddr_storage addr;     /* where libcurl connected */
  socklen_t addr_len;
  char *request_head;               /* every header but Range */
  /* Owner queue: the head is the pipe's writer. */
  struct transfer *owner, *owner_tail;
  /* The owner's last attempt: waiting for room in the pipe, not data. */
  bool owner_wants_pipe;
  /* Reads sent to libcurl because the pipe filled before they were
   * complete (pipe_stuck). */
  unsigned pipe_overflows;
  /* Sizing to the link (see direct-sizing.c). */
  uint64_t rtt_us;                  /* the round trip: 0, none measured yet */
  uint64_t rtt_min_now, rtt_min_last;  /* the least of this epoch, the last */
  unsigned rtt_samples;             /* in this epoch */
  uint64_t rate;                    /* bytes a second into the pipe, 0: none */
  uint64_t rate_start_us, rate_bytes;  /* this rate window: 0, none open */
  uint32_t ahead;                   /* the look-ahead: bytes requested and not
                                       yet in the pipe, at most */
  uint32_t sock_hold;               /* the most a socket holds unread
                                       (SO_RCVLOWAT's cap), 0: not known */
};
extern struct direct_path direct;

static inline uint64_t
clock_ms (void)
{
  return monotonic_ms ();
}

static inline uint64_t
clock_us (void)
{
  return monotonic_us ();
}

/* fetcher-direct.c */
/* Run one read's state machine as far as it goes without waiting. */
void step (struct transfer *t);
/* Make t's request for its range (again: a retry), its reply not begun. */
void start_request (struct transfer *t);

/* direct-wait.c */
/* The next wait on the server may last this long, and never past the
 * read's --timeout. */
void set_deadline (struct transfer *t, unsigned seconds);
/* The server has a stall window (--stall-timeout) from now. */
void start_window (struct transfer *t);

/* direct-body.c */
/* The read's headers passed: it waits for the data pipe at the owner
 * queue's tail; out of the queue (ended, failed, or handed over). */
void owner_queue_add (struct transfer *t);
void owner_queue_remove (struct transfer *t);
/* A read in the owner queue waits, to be woken when its part is here. */
void start_waiting (struct transfer *t);
/* t's socket wakes its poll only once it holds bytes; false if the
 * kernel capped the mark below. */
bool set_wake_mark (struct transfer *t, size_t bytes);
/* Body bytes of t's read that are here; is all of its next part? */
size_t body_available (const struct transfer *t);
bool part_here (const struct transfer *t);
/* Let the pipe's owners work, one after the other, until one must wait. */
void run_owners (void);
/* A body into the data area, as it comes (https, or larger than the pipe
 * takes). */
void tls_receive_body (struct transfer *t);

/* direct-fail.c */
/* This attempt failed for why: retried, or its parts left get EIO. */
void direct_fail_cause (struct transfer *t, enum retry_cause cause, const char *why);
PRINTF_LIKE (3, 4) void direct_failf (struct transfer *t, enum retry_cause cause,
                                      const char *fmt, ...);
/* May a failed system call on the server's connection pass? */
enum retry_cause errno_cause (int e);
/* The parts left go to libcurl, and every later read too unless
 * just_this_read; or (give up) this server's replies are not the plain
 * case. */
void direct_to_libcurl (struct transfer *t, const char *why, bool just_this_read);
void direct_give_up (struct transfer *t, const char *why);

/* direct-sizing.c */
void sizing_init (void);
/* A reply's header section came us after its request's last byte. */
void rtt_sample (uint64_t us);
/* A new rate window; bytes of a part went into the pipe or the area. */
void rate_open (void);
void rate_count (size_t bytes);
/* Make t's socket able to hold the whole body unread. */
void hold_body (struct transfer *t);

/* direct-tls.c */
/* Can OpenSSL's read-ahead be turned on in the connections libcurl makes? */
bool tls_read_ahead_possible (void);
/* Start t's https connection: 0, or -1 with errno set. */
int tls_connect (struct transfer *t);
/* Is t a direct read whose connection is coming up?  Is any? */
bool tls_connecting_slot (const struct transfer *t);
bool tls_connecting (void);
/* Move the connections coming up on. */
void tls_connects (void);
/* The descriptors of t's connection coming up, up to max, and how long
 * it may wait. */
unsigned tls_connect_fds (struct transfer *t, struct curl_waitfd *fds, unsigned max,
                          long *timeout_ms);

/* direct-conn.c */
/* Open t's connection (connecting, not yet up): 0, or -1 with errno. */
int open_connection (struct transfer *t);
void close_connection (struct transfer *t);
/* May t's kept connection carry another request? */
bool connection_usable (struct transfer *t);
/* Acknowledge what the server sent at once. */
void quick_ack (struct transfer *t);
/* send(2) and recv(2) on t's connection, plain or TLS, and the words for
 * their failure. */
ssize_t conn_send (struct transfer *t, const void *buf, size_t len);
ssize_t conn_recv (struct transfer *t, void *buf, size_t len);
const char *conn_error (const struct transfer *t, int e);
/* A reused connection failed before the reply began: true if the read
 * went on (or failed) on a new one. */
bool retry_on_new_connection (struct transfer *t);

#endif
