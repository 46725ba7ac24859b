/*
 * direct-body.c: a direct read's body, once its headers passed.  Into
 * the data pipe: the pipe has one writer at a time, the head of the
 * owner queue, which splices its body part by part, each part only once
 * all of it is here, and lends the pipe to a read whose part is here
 * meanwhile; the reads waiting are woken by their sockets' low-water
 * marks.  Into the data area (https, or larger than the pipe takes):
 * received as it comes, with no queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sock_diag.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "direct.h"
#include "limits-direct.h"

/* Room kept free in a socket that waits for a part (socket_can_hold):
 * a segment or two of loopback's. */
#define HOLD_SLACK_BYTES (128 * 1024)

void
owner_queue_add (struct transfer *t)
{
  t->dstate = DIRECT_QUEUED;
  t->next_owner = NULL;
  if (direct.owner_tail)
    direct.owner_tail->next_owner = t;
  else
    direct.owner = t;
  direct.owner_tail = t;
}

void
owner_queue_remove (struct transfer *t)
{
  struct transfer **pp = &direct.owner;

  for (; *pp; pp = &(*pp)->next_owner)
    if (*pp == t) {
      *pp = t->next_owner;
      break;
    }
  if (t->wake_on_part && t->sock >= 0)
    (void) set_wake_mark (t, 1);  /* the connection may serve the next read */
  t->wake_on_part = false;
  direct.owner_tail = NULL;
  for (t = direct.owner; t; t = t->next_owner)
    direct.owner_tail = t;
  direct.owner_wants_pipe = false;
}

/* Body bytes of t's read that are here: with its headers, and in its
 * socket. */
size_t
body_available (const struct transfer *t)
{
  int queued = 0;

  /* Over TLS the socket's bytes are records, and a body is taken as it
   * comes: only what came with the headers waits. */
  if (direct.tls)
    return t->head_len - t->body_pos;
  if (ioctl (t->sock, FIONREAD, &queued) == -1 || queued < 0)
    queued = 0;
  return t->head_len - t->body_pos + (size_t) queued;
}

bool
part_here (const struct transfer *t)
{
  return body_available (t) >= t->parts[t->next_part].length - t->part_received;
}

/* What of t's next part has yet to come into its socket: the mark that
 * says it is all here (the bytes read with the headers do not count for
 * the socket). */
static size_t
socket_part_bytes (const struct transfer *t)
{
  size_t need = t->parts[t->next_part].length - t->part_received;
  size_t with_head = t->head_len - t->body_pos;

  return need > with_head ? need - with_head : 1;
}

/* A read waiting in the owner queue is woken (its socket polled for
 * POLLIN) only once its next part has all arrived: the socket's low-water
 * mark says so, and Linux makes room for that many bytes.  Set when it
 * starts to wait, back to 1 when it owns the pipe (splice ignores it, but
 * the owner is polled for any data).  Returns false if the kernel capped
 * the mark below the part (a tiny tcp_rmem maximum): then it is not
 * polled, as if the part could not be here before its turn. */
bool
set_wake_mark (struct transfer *t, size_t bytes)
{
  int v = (int) bytes, got = 0;
  socklen_t len = sizeof got;

  if (setsockopt (t->sock, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v) == -1 ||
      getsockopt (t->sock, SOL_SOCKET, SO_RCVLOWAT, &got, &len) == -1)
    return false;
  return got == v;
}

void
start_waiting (struct transfer *t)
{
  t->dstate = DIRECT_QUEUED;
  /* Not over a Unix socket (unix-socket-path=): its poll ignores the
   * mark. */
  t->wake_on_part = direct.addr.ss_family != AF_UNIX && !part_here (t) &&
    set_wake_mark (t, socket_part_bytes (t));
}

/* Between two parts (none of the owner's unannounced bytes in the pipe),
 * the pipe may go to another read: if the owner's next part has not all
 * arrived and a later owner's has, that one goes first, so a small read
 * whose bytes are here is not stuck behind a big or slow body (NBD
 * replies may come in any order).  Returns true if it did; the owner
 * waits in the queue, unpolled, second in line. */
static bool
yield_pipe (struct transfer *t)
{
  struct transfer *prev = t, *o;

  if (t->next_owner == NULL || t->part_received > 0 || part_here (t))
    return false;
  for (o = t->next_owner; o != NULL; prev = o, o = o->next_owner)
    if (part_here (o)) {
      prev->next_owner = o->next_owner;       /* o out of the queue, */
      if (direct.owner_tail == o)
        direct.owner_tail = prev;
      o->next_owner = t;                      /* and in front of t */
      direct.owner = o;
      start_waiting (t);
      return true;
    }
  return false;
}

/* Has the server closed or failed t's connection?  Then the rest of the
 * body will never come, and waiting for it would wake at once for ever
 * (poll reports the end however high the mark). */
static bool
server_ended (const struct transfer *t)
{
  struct pollfd pfd = { .fd = t->sock, .events = POLLRDHUP };

  return poll (&pfd, 1, 0) == 1 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* Can t's socket queue mark bytes before its receive buffer is full
 * (and the server's window closed, so that they would never come)?  The
 * buffer counts each piece's kernel overhead too: estimated from what is
 * queued now (on loopback barely more than the bytes), or twice the
 * bytes while nothing is (a NIC's buffers of 2 or 4 KiB for 1448-byte
 * segments), with a margin. */
static bool
socket_can_hold (const struct transfer *t, size_t mark)
{
  uint32_t mem[SK_MEMINFO_VARS];
  socklen_t len = sizeof mem;
  int queued = 0;
  double ratio = 2;

  if (getsockopt (t->sock, SOL_SOCKET, SO_MEMINFO, mem, &len) == -1 ||
      len < (SK_MEMINFO_RCVBUF + 1) * sizeof mem[0])
    return false;
  if (ioctl (t->sock, FIONREAD, &queued) == 0 && queued > 0 &&
      mem[SK_MEMINFO_RMEM_ALLOC] > 0)
    ratio = 1.125 * mem[SK_MEMINFO_RMEM_ALLOC] / queued;
  return (double) mark * ratio + HOLD_SLACK_BYTES <= mem[SK_MEMINFO_RCVBUF];
}

/* The owner, between two parts, waits until all of its next part is
 * here before it moves any (woken by the socket's mark, as a queued
 * read): a part is announced only once complete anyway, and meanwhile the
 * pipe serves reads whose parts are here (yield_pipe), instead of being
 * held while one server sends at its pace.  Returns true if it waits;
 * false when the part is here, or the server ended the connection, or
 * the kernel will not hold the part (a tiny tcp_rmem maximum), or it is
 * small (DIRECT_HOLD_MIN_BYTES: it holds the pipe for moments, and a
 * small random read is spared the system calls): then it moves bytes as
 * they come, as it always did. */
static bool
wait_for_part (struct transfer *t)
{
  if (direct.addr.ss_family != AF_UNIX &&
      t->parts[t->next_part].length > DIRECT_HOLD_MIN_BYTES &&
      !part_here (t) && !server_ended (t) &&
      socket_can_hold (t, socket_part_bytes (t)) &&
      set_wake_mark (t, socket_part_bytes (t))) {
    t->wake_on_part = true;
    return true;
  }
  /* Moving bytes: the owner's socket is polled for any. */
  if (t->wake_on_part) {
    (void) set_wake_mark (t, 1);
    t->wake_on_part = false;
  }
  return false;
}

/* Is the pipe full of nothing but the owner's own unannounced bytes?
 * Then it can never drain (see fetcher-direct.c, at its top). */
static bool
pipe_stuck (const struct transfer *t)
{
  int queued = 0;

  if (ioctl (fetcher_pipe_fd, FIONREAD, &queued) == -1)
    return false;
  return queued >= 0 && (size_t) queued <= t->part_received;
}

/* bytes more of t's body are in their place, the pipe or the data
 * area: a part all there is answered. */
static void
body_moved (struct transfer *t, size_t bytes)
{
  unsigned p = t->next_part;

  t->received += bytes;
  t->part_received += bytes;
  t->window_bytes += bytes;
  fetcher_stats.web_bytes += bytes;
  if (t->part_received < t->parts[p].length)
    return;
  if (t->to_area)
    answer_part (t, p);
  else {
    fetcher_reply_piped (t->parts[p].id);
    /* Now, not when the owner next waits: the front-end drains the pipe
     * only as far as it was told, and the pipe holds few parts. */
    fetcher_flush_replies ();
  }
  rate_count (t->parts[p].length);
  t->next_part++;
  t->part_received = 0;
}

/* Body bytes that came with the headers, into the pipe: copied, a few
 * KiB at most.  Returns what write(2) did. */
static ssize_t
pipe_head_bytes (struct transfer *t, size_t need)
{
  size_t have = t->head_len - t->body_pos;
  ssize_t r = write (fetcher_pipe_fd, t->head + t->body_pos, have < need ? have : need);

  if (r > 0)
    t->body_pos += (size_t) r;
  return r;
}

/* The owner's last move took nothing (errno says why).  It waits for
 * its server or for room in the pipe, or fails, or goes to libcurl. */
static void
pipe_blocked (struct transfer *t)
{
  struct pollfd pfd = { .fd = fetcher_pipe_fd, .events = POLLOUT };

  if (errno == EPIPE) {
    /* The front-end closed the pipe: its client is gone. */
    debug ("the front-end closed the data pipe; exiting");
    exit (EXIT_SUCCESS);
  }
  if (errno != EAGAIN && errno != EWOULDBLOCK) {
    direct_failf (t, errno_cause (errno), "receiving the body: %s", strerror (errno));
    return;
  }
  /* Waiting for the server, or for room in the pipe? */
  if (t->body_pos >= t->head_len && poll (&pfd, 1, 0) == 1 && (pfd.revents & POLLOUT))
    return;                     /* the server: its socket is polled */
  if (pipe_stuck (t)) {
    /* The pieces are the socket's, as the server's segments arrived:
     * now and then even a well-behaved server's fill the pipe before a
     * read is complete.  Those reads go to libcurl; a server that does
     * it often is not worth the detours. */
    direct_to_libcurl (t, "the server's data came in pieces too small for "
                       "the data pipe",
                       ++direct.pipe_overflows <= MAX_PIPE_OVERFLOWS);
    return;
  }
  direct.owner_wants_pipe = true;
}

/* The owner moves its body into the pipe.  Returns when it must wait, or
 * has ended (then the next owner may go), or gave the pipe to a read
 * whose part is here (yield_pipe). */
static void
move_body (struct transfer *t)
{
  /* The server has had its time from now: new owner, or room again (the
   * wait was for the front-end, not the server). */
  if (t->dstate == DIRECT_QUEUED || direct.owner_wants_pipe)
    start_window (t);
  /* A mark set while it waited stays until its part is here
   * (wait_for_part). */
  t->dstate = DIRECT_BODY;
  direct.owner_wants_pipe = false;
  while (t->next_part < t->nparts) {
    size_t need = t->parts[t->next_part].length - t->part_received;
    ssize_t r;

    if (yield_pipe (t))
      return;
    if (t->part_received == 0 && wait_for_part (t))
      return;
    if (t->body_pos < t->head_len)
      r = pipe_head_bytes (t, need);
    else {
      r = splice (t->sock, NULL, fetcher_pipe_fd, NULL, need, SPLICE_F_NONBLOCK);
      quick_ack (t);
      if (r == 0) {
        direct_failf (t, RETRY_CAUSE_TRANSIENT, "short body: %zu of %" PRIu32
                      " bytes (the server closed "
                      "the connection)", t->received, t->length);
        return;
      }
    }
    if (r == -1 && errno == EINTR)
      continue;
    if (r == -1) {
      pipe_blocked (t);
      return;
    }
    body_moved (t, (size_t) r);
  }
  /* Done: every part announced.  The connection stays for the next read
   * unless the server said it closes it. */
  owner_queue_remove (t);
  if (t->conn_close)
    close_connection (t);
  release (t);
}

/* Let the pipe's owners work, one after the other, until one must wait. */
void
run_owners (void)
{
  while (direct.owner != NULL) {
    struct transfer *t = direct.owner;
    move_body (t);
    if (direct.owner == t)
      return;                   /* still the owner: it waits */
    /* Ended, or gave the pipe to a read whose part is here: the next. */
  }
}

/* An https read takes its body as it comes, straight into its parts'
 * places in the data area (the bytes that came with the headers first),
 * and answers each part as soon as all of it is there: its reply passed
 * every check, and Content-Length is the range's length, so no byte
 * past the last part is ever taken.  Returns when it must wait, or has
 * ended. */
void
tls_receive_body (struct transfer *t)
{
  while (t->next_part < t->nparts) {
    unsigned p = t->next_part;
    size_t need = t->parts[p].length - t->part_received;
    uint8_t *to = t->parts[p].data + t->part_received;
    ssize_t r;

    if (t->body_pos < t->head_len) {
      r = (ssize_t) MIN (t->head_len - t->body_pos, need);
      memcpy (to, t->head + t->body_pos, (size_t) r);
      t->body_pos += (size_t) r;
    }
    else {
      r = conn_recv (t, to, need);
      if (r == -1 && (errno == EAGAIN || errno == EINTR))
        return;                 /* every record read: the socket is polled */
      if (r == -1) {
        direct_failf (t, RETRY_CAUSE_TRANSIENT, "receiving the body: %s",
                      conn_error (t, errno));
        return;
      }
      if (r == 0) {
        direct_failf (t, RETRY_CAUSE_TRANSIENT, "short body: %zu of %" PRIu32
                      " bytes (the server closed the connection)", t->received, t->length);
        return;
      }
    }
    body_moved (t, (size_t) r);
  }
  if (t->conn_close)
    close_connection (t);
  release (t);
}
