/*
 * frontend.c: the front-end role: one process, one poll loop, every client.
 *
 * Peers and their handlers (watch_peers):
 *   listening sockets   listener_ready() -> accept_clients()
 *   supervisor          frontend_dispatch_supervisor(): IPC_FETCHER_SPAWNED,
 *                       IPC_STOP_ACCEPTING (frontend_stop_accepting()) and
 *                       IPC_STATS_REQUEST (stats_report(), frontend-stats.c)
 *   key holder          tls_keyholder_register() (frontend-tls.c)
 *   each client         client_socket_ready() -> client_read() -> handshake.c /
 *                       transmission.c
 *   each fetcher        fetcher_socket_ready() -> transmission_read_fetcher()
 *
 * Nothing here blocks: every socket is non-blocking, and what cannot be
 * written now waits in an output queue.  Queues and in-flight requests are
 * bounded per client (limits-queues.h, data-path.h), and a client that
 * exceeds a bound is simply not read until its replies drain.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "child-fds.h"
#include "child.h"
#include "config-wire.h"
#include "data-path.h"
#include "event.h"
#include "frontend.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "limits-clients.h"
#include "limits-queues.h"
#include "limits-server.h"
#include "log.h"
#include "sandbox.h"

struct frontend fe;

static volatile sig_atomic_t stop_requested;

static void
on_stop_signal (int sig)
{
  (void) sig;
  stop_requested = 1;
}

static void
set_nonblocking (int fd)
{
  int flags = fcntl (fd, F_GETFL);
  if (flags == -1 || fcntl (fd, F_SETFL, flags | O_NONBLOCK) == -1)
    fatal_errno ("fcntl O_NONBLOCK");
}

/* Free the clients closed during this round. */
static void
reap_clients (void)
{
  unsigned i = 0;

  while (i < fe.nclients) {
    struct client *c = fe.clients[i];
    if (!c->dead) {
      i++;
      continue;
    }
    fe.clients[i] = fe.clients[fe.nclients - 1];   /* nclients >= 1 here */
    fe.nclients--;
    free (c);
    /* With -s the one client was the whole job. */
    if (fe.config.flags & FRONTEND_SINGLE) {
      stats_report (true);
      exit (EXIT_SUCCESS);
    }
  }
}

/* Does the client still owe us an option (rather than waiting for us)? */
static bool
client_negotiating (const struct client *c)
{
  return !c->dead && (c->state == CLIENT_GREETING || c->state == CLIENT_OPTIONS ||
                       c->state == CLIENT_TLS_HANDSHAKE);
}

static bool
same_address (const struct client_address *a, const struct client_address *b)
{
  return a->family == b->family && memcmp (a->addr, b->addr, sizeof a->addr) == 0;
}

/* Every slot is taken: the handshake whose slot a connection from `from`
 * takes, or NULL when no client is still negotiating.  Its own address's
 * oldest once that address holds MAX_HANDSHAKES_PER_ADDRESS handshakes,
 * else the oldest of all.  One pass over the clients. */
static struct client *
handshake_to_displace (const struct client_address *from)
{
  struct client *oldest = NULL, *oldest_here = NULL;
  unsigned here = 0, i;

  for (i = 0; i < fe.nclients; i++) {
    struct client *c = fe.clients[i];
    if (!client_negotiating (c))
      continue;
    if (oldest == NULL || c->connected_ms < oldest->connected_ms)
      oldest = c;
    if (same_address (&c->from, from)) {
      here++;
      if (oldest_here == NULL || c->connected_ms < oldest_here->connected_ms)
        oldest_here = c;
    }
  }
  return here >= MAX_HANDSHAKES_PER_ADDRESS ? oldest_here : oldest;
}

/* Take a new client, displacing an unfinished handshake if every slot is
 * taken; or refuse it (closing its descriptors) and return NULL. */
static struct client *
admit_client (int rfd, int wfd, const char *peer, const struct client_address *from)
{
  uint64_t now = now_ms ();
  struct client *c;

  if (fe.nlive >= fe.max_clients) {
    struct client *old = handshake_to_displace (from);
    if (old == NULL) {
      warn ("refusing client %s: already serving %u clients (--max-clients)",
            peer, fe.max_clients);
      close (rfd);
      if (wfd != rfd)
        close (wfd);
      return NULL;
    }
    warn ("client %s: closing its unfinished handshake after %llu ms to admit "
          "%s: all %u client slots are taken", old->peer,
          (unsigned long long) (now - old->connected_ms), peer, fe.max_clients);
    client_close (old, NULL);
  }
  c = calloc (1, sizeof *c);
  if (c == NULL)
    fatal_errno ("calloc");
  c->token = ++fe.next_token;
  c->rfd = rfd;
  c->wfd = wfd;
  c->fetcher_fd = -1;
  c->from = *from;
  c->connected_ms = now;
  snprintf (c->peer, sizeof c->peer, "%s", peer);
  c->deadline_ms = now + (uint64_t) fe.config.handshake_timeout * 1000;
  /* Room: nclients <= nlive + clients closed this round, and at most
   * ACCEPTS_PER_ROUND are admitted (so closed) per round. */
  fe.clients[fe.nclients++] = c;
  fe.nlive++;
  debug ("client %s: connected", c->peer);
  handshake_start (c);
  return c;
}

/* A Unix socket's send buffer is the most a client has queued towards it,
 * and it starts small (net.core.wmem_default): read replies are written a
 * fraction of a request at a time, a wakeup each.  Larger, each write
 * moves many replies.  The kernel caps it at net.core.wmem_max.  TCP
 * sizes its own buffers (setting one would stop that). */
static void
enlarge_send_buffer (int fd)
{
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  int size = CLIENT_UNIX_SEND_BUFFER;

  if (getsockname (fd, (struct sockaddr *) &ss, &sl) == 0 && ss.ss_family == AF_UNIX)
    (void) setsockopt (fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
}

/* Name the peer for log lines, and note its address for counting. */
static void
describe_peer (int fd, char *buf, size_t len, struct client_address *from)
{
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  char host[INET6_ADDRSTRLEN];

  memset (from, 0, sizeof *from);
  if (getpeername (fd, (struct sockaddr *) &ss, &sl) == -1) {
    snprintf (buf, len, "fd %d", fd);
    return;
  }
  from->family = ss.ss_family;
  if (ss.ss_family == AF_INET) {
    struct sockaddr_in *sin = (struct sockaddr_in *) &ss;
    memcpy (from->addr, &sin->sin_addr, sizeof sin->sin_addr);
    inet_ntop (AF_INET, &sin->sin_addr, host, sizeof host);
    snprintf (buf, len, "%s:%u", host, ntohs (sin->sin_port));
  }
  else if (ss.ss_family == AF_INET6) {
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &ss;
    memcpy (from->addr, &sin6->sin6_addr, sizeof sin6->sin6_addr);
    inet_ntop (AF_INET6, &sin6->sin6_addr, host, sizeof host);
    snprintf (buf, len, "[%s]:%u", host, ntohs (sin6->sin6_port));
  }
  else
    snprintf (buf, len, "unix#%" PRIu64, ++fe.unix_peers);
}

/* accept failed for want of descriptors.  With the reserve, take that one
 * connection and close it, so it is refused rather than left to wake the
 * loop again at once; without, rest the listeners a while. */
static void
refuse_for_descriptors (int lfd, int accept_errno)
{
  int fd = -1;

  if (fe.reserve_fd >= 0) {
    close (fe.reserve_fd);
    fe.reserve_fd = -1;
    fd = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC);
  }
  if (fd >= 0) {
    char peer[64];
    struct client_address from;
    describe_peer (fd, peer, sizeof peer, &from);
    warn ("refusing client %s: out of file descriptors (%s); raise the "
          "limit (ulimit -n) or lower --max-clients", peer, strerror (accept_errno));
    close (fd);
    fe.reserve_fd = fcntl (fe.control_fd, F_DUPFD_CLOEXEC, 0);
  }
  if (fe.reserve_fd < 0) {
    warn ("out of file descriptors (%s): not accepting clients for %u ms",
          strerror (accept_errno), ACCEPT_PAUSE_MS);
    fe.accept_paused_until = now_ms () + ACCEPT_PAUSE_MS;
    fe.reserve_fd = fcntl (fe.control_fd, F_DUPFD_CLOEXEC, 0);
  }
}

static void
accept_clients (int lfd)
{
  /* Bounded per round over all listeners: a flood of connections cannot
   * keep us here, and admit_client's closed entries fit the table. */
  while (fe.accepts_left > 0) {
    char peer[64];
    struct client_address from;
    int fd = accept4 (lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd == -1) {
      if (errno == EMFILE || errno == ENFILE)
        refuse_for_descriptors (lfd, errno);
      else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
               errno != ECONNABORTED)
        warn_errno ("accept");
      return;
    }
    fe.accepts_left--;
    describe_peer (fd, peer, sizeof peer, &from);
    enlarge_send_buffer (fd);
    admit_client (fd, fd, peer, &from);
  }
}

/* Hand buffered client bytes to the phase the client is in; stop when one
 * needs more bytes, the client must wait (fetcher, full queues), or it was
 * closed.  Called after reads, and again whenever a wait ends, since a
 * client may have sent everything already. */
static void
client_process_input (struct client *c)
{
  size_t off = 0;

  /* Each round consumes bytes or changes state; a state change without
   * consuming can only lead to a waiting state, so the loop ends. */
  while (!c->dead && off < c->in_len) {
    enum client_state before = c->state;
    size_t used;

    if (c->state == CLIENT_WAIT_FETCHER || c->state == CLIENT_CLOSING ||
        c->state == CLIENT_TLS_HANDSHAKE)
      break;
    if (c->state == CLIENT_TRANSMISSION &&
        (c->ninflight >= MAX_INFLIGHT_PER_CLIENT || c->disconnect_requested))
      break;
    /* Its replies hold its share of memory: wait for them to drain. */
    if (c->out.mem >= CLIENT_QUEUE_MEMORY || c->to_fetcher.mem >= CLIENT_QUEUE_MEMORY)
      break;
    if (c->state < CLIENT_WAIT_FETCHER)
      used = handshake_consume (c, c->in + off, c->in_len - off);
    else
      used = transmission_consume (c, c->in + off, c->in_len - off);
    if (used == 0 && c->state == before)
      break;
    off += used;                    /* used <= in_len - off */
  }
  if (c->dead)
    return;
  /* Bytes that came after STARTTLS, in clear, were never part of the TLS
   * session: someone on the path may have put them there (the class of
   * nbdkit's CVE-2021-3716).  Dropped, unread. */
  if (c->state == CLIENT_TLS_HANDSHAKE && off < c->in_len) {
    warn ("client %s: dropping %zu bytes sent in clear after STARTTLS",
          c->peer, c->in_len - off);
    off = c->in_len;
  }
  if (c->out.mem > CLIENT_QUEUE_MEMORY_LIMIT || c->to_fetcher.mem > CLIENT_QUEUE_MEMORY_LIMIT) {
    /* Cannot happen with the bounds above unless something is broken. */
    warn ("client %s: its queued replies hold %zu bytes of memory, over the "
          "limit of %u: closing", c->peer, c->out.mem + c->to_fetcher.mem,
          CLIENT_QUEUE_MEMORY_LIMIT);
    client_close (c, NULL);
    return;
  }
  /* Keep the unconsumed tail at the front (off <= in_len). */
  memmove (c->in, c->in + off, c->in_len - off);
  c->in_len -= off;
}

/* Read what the client sent. */
static void
client_read (struct client *c)
{
  ssize_t r;

  /* A WRITE's payload goes straight into its buffer. */
  if (c->state == CLIENT_WRITE_PAYLOAD && c->in_len == 0) {
    size_t want = c->slots[c->payload_slot].length - c->payload_got;
    r = client_recv (c, c->payload + c->payload_got, want);
    if (r == 0) {
      client_close (c, "end of file in a write's data");
      return;
    }
    if (r == -1) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        client_close (c, "read error");
      return;
    }
    c->payload_got += (size_t) r;
    transmission_payload_done (c);
    return;
  }

  r = client_recv (c, c->in + c->in_len, sizeof c->in - c->in_len);
  if (r == 0) {
    client_close (c, "end of file");
    return;
  }
  if (r == -1) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      client_close (c, "read error");
    return;
  }
  c->in_len += (size_t) r;
  client_process_input (c);
}

/* Does the front-end want more bytes from this client now? */
static bool
client_wants_input (const struct client *c)
{
  switch (c->state) {
  case CLIENT_WAIT_FETCHER:
  case CLIENT_CLOSING:
  case CLIENT_TLS_HANDSHAKE:            /* GnuTLS reads the socket itself */
    return false;
  case CLIENT_TRANSMISSION:
    if (c->disconnect_requested || c->ninflight >= MAX_INFLIGHT_PER_CLIENT)
      return false;
    __attribute__ ((fallthrough));
  default:
    return c->out.bytes < MAX_QUEUED_BYTES && c->to_fetcher.bytes < MAX_QUEUED_BYTES &&
      c->out.mem < CLIENT_QUEUE_MEMORY && c->to_fetcher.mem < CLIENT_QUEUE_MEMORY &&
      c->in_len < sizeof c->in;
  }
}

static struct client *
find_client (uint64_t token)
{
  unsigned i;
  for (i = 0; i < fe.nclients; i++)
    if (fe.clients[i]->token == token && !fe.clients[i]->dead)
      return fe.clients[i];
  return NULL;
}

/* ---- A graceful stop, at the supervisor's word. ---- */

static bool draining;         /* IPC_STOP_ACCEPTING received */

/* IPC_STOP_ACCEPTING: new connections are refused from now on (the
 * listeners close: the supervisor closed its copies after starting us),
 * clients still negotiating are closed, and every client past the
 * handshake is treated as if it had sent NBD_CMD_DISC: no new request is
 * read, the ones in flight finish, and it is closed once its replies are
 * out (run_loop).  The supervisor bounds all of it by its grace period. */
static void
frontend_stop_accepting (void)
{
  unsigned i;

  if (draining)
    return;
  draining = true;
  for (i = 0; i < fe.nlisteners; i++)
    close (fe.listeners[i]);
  fe.nlisteners = 0;
  for (i = 0; i < fe.nclients; i++) {
    struct client *c = fe.clients[i];
    if (c->dead)
      continue;
    if (c->state < CLIENT_TRANSMISSION)
      client_close (c, "the server is stopping");
    else
      c->disconnect_requested = true;
  }
  debug ("stopping: %u client%s finishing their requests", fe.nlive,
         fe.nlive == 1 ? "" : "s");
}

/* Stopping, and every client gone. */
static bool
drained (void)
{
  return draining && fe.nlive == 0;
}

/* The supervisor may only answer our spawn requests, and ask us to stop. */
static void
frontend_dispatch_supervisor (void)
{
  struct ipc_header h;
  struct client *c;
  int fds[IPC_MAX_FDS];
  unsigned nfds, i;
  const char *why;

  if (ipc_recv_packet (fe.control_fd, &h, fds, &nfds) == -1) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
      return;
    if (errno == 0)
      fatal ("the supervisor closed the control socket");
    if (errno == EMFILE && h.type == IPC_FETCHER_SPAWNED &&
        (c = find_client (h.id)) != NULL) {
      /* We had no room for its descriptors (those that came are closed):
       * that client goes without, the others are untouched.  Its fetcher
       * sees its socket close and exits. */
      warn ("client %s: out of file descriptors receiving its fetcher: closing",
            c->peer);
      client_close (c, NULL);
      return;
    }
    fatal_errno ("reading from the supervisor");
  }
  why = ipc_check (&h, nfds, ROLE_SUPERVISOR, ROLE_FRONTEND);
  if (why != NULL)
    fatal ("malformed message from the supervisor (type %u, %u descriptors: %s)", h.type,
           nfds, why);
  if (h.type == IPC_STOP_ACCEPTING) {
    frontend_stop_accepting ();
    return;
  }
  if (h.type == IPC_STATS_REQUEST) {
    stats_report (false);
    return;
  }
  if (h.type != IPC_FETCHER_SPAWNED)
    fatal ("unexpected message type %u from the supervisor", h.type);

  c = find_client (h.id);
  if (c == NULL || c->state != CLIENT_WAIT_FETCHER || c->fetcher_fd >= 0) {
    /* The client left while its fetcher was being made. */
    for (i = 0; i < nfds; i++)
      close (fds[i]);
    return;
  }
  if (h.error != 0) {
    warn ("client %s: no fetcher could be started (%s)", c->peer, strerror ((int) h.error));
    fetcher_start_done (c);
    handshake_fetcher_opened (c, h.error, NULL, 0);
    return;
  }
  c->area = area_map (fds[1], fe.config.client_memory);
  close (fds[1]);                       /* the mapping stays */
  if (c->area == NULL) {
    close (fds[0]);
    if (nfds == 3)
      close (fds[2]);
    handshake_fetcher_opened (c, EIO, NULL, 0);
    return;
  }
  if (nfds == 3) {
    c->pipe = malloc (sizeof *c->pipe);
    if (c->pipe == NULL)
      fatal_errno ("malloc");
    set_nonblocking (fds[2]);
    *c->pipe = (struct data_pipe) { .fd = fds[2], .refs = 1 };   /* the client's */
  }
  set_nonblocking (fds[0]);
  c->fetcher_fd = fds[0];
  c->fetcher_open = false;
  c->fetcher_failed = false;
}

/* ---- The loop. ---- */

/* A client's TLS handshake is over (frontend-tls.c): options follow in
 * TLS, or the client goes. */
static void
tls_handshake_ended (struct client *c, bool established)
{
  if (established)
    handshake_tls_done (c);
  else
    client_close (c, NULL);
}

static void
take_listeners (void)
{
  unsigned i;

  if (fe.config.flags & FRONTEND_SINGLE) {
    const struct client_address none = { 0 };
    struct client *c;
    set_nonblocking (FRONTEND_FD_FIRST_LISTENER);
    set_nonblocking (FRONTEND_FD_FIRST_LISTENER + 1);
    c = admit_client (FRONTEND_FD_FIRST_LISTENER, FRONTEND_FD_FIRST_LISTENER + 1,
                      "stdin", &none);
    if (c == NULL)
      fatal ("cannot serve the client on standard input");
    return;
  }
  fe.nlisteners = fe.config.nlisteners;
  fe.listeners = calloc (fe.nlisteners, sizeof (int));
  if (fe.listeners == NULL)
    fatal_errno ("calloc");
  for (i = 0; i < fe.nlisteners; i++) {
    fe.listeners[i] = FRONTEND_FD_FIRST_LISTENER + (int) i;
    set_nonblocking (fe.listeners[i]);
  }
}

/* The loop's table is sized for every client at once (run_loop): a full
 * one is a broken invariant. */
static void
watch (struct event_loop *ev, int fd, short events, event_fd_fn *fn, void *cookie)
{
  if (event_add (ev, fd, events, fn, cookie) == -1)
    fatal ("more descriptors to poll than the loop holds");
}

/* A deadline that only ends the wait: the pass over every client after
 * the round's events (client_round_end) does what is due. */
static void
wake_at (struct event_loop *ev, uint64_t at_ms)
{
  if (event_timer (ev, at_ms, NULL, NULL) == -1)
    fatal ("more deadlines than the loop holds");
}

/* A client's socket is ready (read_end: its read end, which is its write
 * end too but with -s). */
static void
client_ready (struct client *c, bool read_end, short re)
{
  if (c->state == CLIENT_TLS_HANDSHAKE) {
    /* STARTTLS's answer goes in clear; then GnuTLS reads and writes the
     * socket itself. */
    if (c->out.bytes && outq_flush (&c->out, c->wfd) == -1)
      client_close (c, "write error");
    else if (c->out.bytes == 0)
      tls_handshake_step (c);
    return;
  }
  if ((re & POLLOUT) && client_flush (c) == -1) {
    client_close (c, "write error");
    return;
  }
  if (re & (POLLIN | POLLHUP | POLLERR)) {
    if (read_end)
      client_read (c);
    else if (!(re & POLLOUT))
      client_close (c, "hang-up");
  }
}

static void
client_socket_ready (int fd, short re, void *cookie)
{
  struct client *c = cookie;

  /* A client handled earlier in this round may have been closed. */
  if (!c->dead)
    client_ready (c, fd == c->rfd, re);
}

/* A client's fetcher socket (fd, as polled) is ready. */
static void
fetcher_ready (struct client *c, int fd, short re)
{
  if (fd != c->fetcher_fd)
    return;                             /* replaced or dropped this round */
  if ((re & POLLOUT) && outq_flush (&c->to_fetcher, c->fetcher_fd) == -1) {
    transmission_fail_inflight (c);
    return;
  }
  if (re & (POLLIN | POLLHUP | POLLERR))
    transmission_read_fetcher (c);
}

static void
fetcher_socket_ready (int fd, short re, void *cookie)
{
  struct client *c = cookie;

  if (!c->dead)
    fetcher_ready (c, fd, re);
}

/* A client's descriptors, and its deadlines. */
static void
watch_client (struct event_loop *ev, struct client *c, uint64_t now)
{
  bool wants = client_wants_input (c);
  short in = wants ? POLLIN : 0, out = client_unsent (c) ? POLLOUT : 0;

  if (c->deadline_ms)
    wake_at (ev, c->deadline_ms);
  if (tls_key_deadline (c))
    wake_at (ev, tls_key_deadline (c));
  /* Decrypted bytes inside GnuTLS: poll would not wake us for them. */
  if (wants && tls_input_pending (c))
    wake_at (ev, now);
  if (c->state == CLIENT_TLS_HANDSHAKE && !out) {
    short hev = tls_handshake_events (c);
    in = hev & POLLIN;
    out = hev & POLLOUT;
  }
  /* Waiting for the key holder: nothing of the client's until then. */
  if (tls_key_waiting (c))
    in = out = 0;
  if (c->rfd == c->wfd)
    watch (ev, c->rfd, in | out, client_socket_ready, c);
  else {
    watch (ev, c->rfd, in, client_socket_ready, c);
    watch (ev, c->wfd, out, client_socket_ready, c);
  }
  if (c->fetcher_fd >= 0) {
    short fev = c->to_fetcher.bytes ? POLLOUT : 0;
    /* Read the fetcher only while the client drains its replies. */
    if (c->out.bytes < MAX_QUEUED_BYTES)
      fev |= POLLIN;
    watch (ev, c->fetcher_fd, fev, fetcher_socket_ready, c);
  }
}

static void
listener_ready (int fd, short re, void *cookie)
{
  (void) re, (void) cookie;
  accept_clients (fd);
}

static void
control_ready (int fd, short re, void *cookie)
{
  (void) fd, (void) cookie;
  if (re & (POLLIN | POLLHUP | POLLERR))
    frontend_dispatch_supervisor ();
}

/* This round's descriptors and deadlines, in the order their handlers
 * run: the listeners, the supervisor, the key holder, then each client's
 * socket and its fetcher's. */
static void
watch_peers (struct event_loop *ev, uint64_t now)
{
  /* Accepting even when full: a newcomer takes a handshake's slot or
   * is refused at once, rather than left hanging in the backlog. */
  bool accepting = now >= fe.accept_paused_until;
  size_t i;

  event_clear (ev);
  if (!accepting)
    wake_at (ev, fe.accept_paused_until);
  fe.accepts_left = ACCEPTS_PER_ROUND;
  for (i = 0; i < fe.nlisteners; i++)
    watch (ev, fe.listeners[i], accepting ? POLLIN : 0, listener_ready, NULL);
  watch (ev, fe.control_fd, POLLIN, control_ready, NULL);
  if (tls_keyholder_register (ev) == -1)
    fatal ("more descriptors to poll than the loop holds");
  for (i = 0; i < fe.nclients; i++)
    watch_client (ev, fe.clients[i], now);
}

/* Send what is queued and take the input that waited, alternately, while
 * either makes progress (run_loop says why). */
static void
client_catch_up (struct client *c)
{
  for (;;) {
    size_t queued = client_unsent (c), waiting;
    if (queued && client_flush (c) == -1) {
      client_close (c, "write error");
      return;
    }
    if (c->in_len == 0)
      return;
    waiting = c->in_len;
    client_process_input (c);
    if (c->dead || (c->in_len == waiting && client_unsent (c) == queued))
      return;
  }
}

/* Close a client whose handshake, or export's opening, is out of time;
 * and one whose last reply has gone. */
static void
client_check_end (struct client *c, uint64_t now)
{
  if (c->deadline_ms && now >= c->deadline_ms) {
    if (c->state == CLIENT_WAIT_FETCHER)
      warn ("client %s: export \"%s\" did not open in %u seconds: closing",
            c->peer, fe.config.exports[c->export_index].name, FETCHER_OPEN_TIMEOUT);
    else
      warn ("client %s: did not finish the handshake in %u seconds: closing",
            c->peer, fe.config.handshake_timeout);
    client_close (c, NULL);
  }
  if (!c->dead && client_unsent (c) == 0 &&
      (c->state == CLIENT_CLOSING || (c->disconnect_requested && c->ninflight == 0)))
    client_close (c, NULL);
}

/* One client's work after the round's events. */
static void
client_round_end (struct client *c, uint64_t now)
{
  /* Decrypted input GnuTLS holds, while the client may send more. */
  while (!c->dead && tls_input_pending (c) && client_wants_input (c))
    client_read (c);
  if (c->dead)
    return;
  client_catch_up (c);
  if (c->dead)
    return;
  tls_key_deadline_check (c, now);
  if (c->dead)
    return;
  /* STARTTLS's answer is out: the handshake starts. */
  if (c->state == CLIENT_TLS_HANDSHAKE && c->out.bytes == 0 && !tls_handshake_begun (c))
    tls_handshake_step (c);
  if (!c->dead && c->fetcher_fd >= 0 && c->to_fetcher.bytes &&
      outq_flush (&c->to_fetcher, c->fetcher_fd) == -1)
    transmission_fail_inflight (c);
  if (!c->dead)
    client_check_end (c, now);
}

static void
run_loop (void)
{
  /* Each client: its socket (or two with -s) and its fetcher; its
   * handshake's or its export's deadline, its key holder's, and GnuTLS's
   * input.  Then the listeners, the supervisor and the key holder, and
   * the listeners' rest. */
  const size_t nclients = (size_t) fe.max_clients + ACCEPTS_PER_ROUND;
  struct event_loop *ev = event_new ((unsigned) (3 + fe.nlisteners + 3 * nclients),
                                     (unsigned) (1 + 3 * nclients));

  if (ev == NULL)
    fatal_errno ("calloc");
  while (!stop_requested && !drained ()) {
    uint64_t now;
    size_t i;
    int r;

    watch_peers (ev, now_ms ());
    r = event_dispatch (ev);
    if (r == -1)
      fatal_errno ("poll");
    if (r == EVENT_INTERRUPTED)
      continue;

    /* Queued replies go out now rather than after another poll, and
     * input that waited (for a fetcher, for replies to drain, for room in
     * the data area) is handled now.  The two alternate while either makes
     * progress: sending read data is what frees the data area, and a
     * client that has sent every request it wants sends nothing more to
     * wake us, so we may only wait once a flush sent nothing and the input
     * that is left could not be taken after it.  Each pass sends bytes or
     * consumes input, so the passes end.  Then handshake deadlines, and
     * clients whose last reply has gone. */
    now = now_ms ();
    for (i = 0; i < fe.nclients; i++)
      if (!fe.clients[i]->dead)
        client_round_end (fe.clients[i], now);
    reap_clients ();
  }
  debug (draining ? "stopped: every client is done" : "stopping on signal");
}

/* Descriptors the front-end needs for n clients (limits-clients.h). */
static rlim_t
frontend_nofile (unsigned n)
{
  return FRONTEND_FDS_FIXED + fe.config.nlisteners + (rlim_t) FRONTEND_FDS_PER_CLIENT * n;
}

/* --max-clients sets the descriptor budget; when RLIMIT_NOFILE's hard
 * limit (which the sandbox never raises) is lower, serve as many clients
 * as fit rather than fail at the client past the limit, and say so. */
static void
fit_descriptor_budget (void)
{
  struct rlimit rl;
  unsigned fit;

  fe.max_clients = (fe.config.flags & FRONTEND_SINGLE) ? 1 : fe.config.max_clients;
  if (getrlimit (RLIMIT_NOFILE, &rl) == -1)
    fatal_errno ("getrlimit RLIMIT_NOFILE");
  if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= frontend_nofile (fe.max_clients))
    return;
  if (rl.rlim_max < frontend_nofile (1))
    fatal ("at most %llu file descriptors (ulimit -n): the front-end needs %llu "
           "for one client", (unsigned long long) rl.rlim_max,
           (unsigned long long) frontend_nofile (1));
  fit = (unsigned) ((rl.rlim_max - frontend_nofile (0)) / FRONTEND_FDS_PER_CLIENT);
  warn ("at most %llu file descriptors (ulimit -n): serving %u clients at once, "
        "not %u; raise the limit to %llu for --max-clients %u",
        (unsigned long long) rl.rlim_max, fit, fe.max_clients,
        (unsigned long long) frontend_nofile (fe.max_clients), fe.max_clients);
  fe.max_clients = fit;
}

int
frontend_main (void)
{
  struct sigaction sa = { .sa_handler = on_stop_signal };

  child_start (ROLE_FRONTEND);
  config_recv_frontend (CHILD_FD_CONFIG, &fe.config);
  close (CHILD_FD_CONFIG);
  log_init (roles[ROLE_FRONTEND].name, (fe.config.flags & FRONTEND_VERBOSE) != 0);
  if (fe.config.handshake_timeout == 0 || fe.config.handshake_timeout > MAX_HANDSHAKE_TIMEOUT)
    fatal ("configuration: bad handshake timeout");
  if (!(fe.config.flags & FRONTEND_SINGLE) &&
      (fe.config.nlisteners == 0 || fe.config.nlisteners > 64))
    fatal ("configuration: bad listener count");

  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);

  fe.control_fd = CHILD_FD_PEER;
  set_nonblocking (fe.control_fd);
  fit_descriptor_budget ();
  {
    long cpus = sysconf (_SC_NPROCESSORS_ONLN);
    fe.max_fetchers_starting = cpus > 0 ? FETCHER_STARTS_PER_CPU * (unsigned) cpus : 0;
    if (fe.max_fetchers_starting < MIN_FETCHER_STARTS)
      fe.max_fetchers_starting = MIN_FETCHER_STARTS;
  }
  fe.clients = calloc ((size_t) fe.max_clients + ACCEPTS_PER_ROUND, sizeof *fe.clients);
  if (fe.clients == NULL)
    fatal_errno ("calloc");
  fe.reserve_fd = fcntl (fe.control_fd, F_DUPFD_CLOEXEC, 0);
  if (fe.reserve_fd == -1)
    fatal_errno ("reserving a descriptor");
  stats_init ();
  take_listeners ();
  tls_setup (tls_handshake_ended);

  /* Every layer before the first client byte: no files, no network of
   * its own (its sockets were made by the supervisor), no privileges. */
  {
    const struct sandbox_spec spec = {
      .role = roles[ROLE_FRONTEND].name,
      .rules = roles[ROLE_FRONTEND].rules, .nrules = *roles[ROLE_FRONTEND].nrules,
      .debug = (fe.config.flags & FRONTEND_SANDBOX_DEBUG) != 0,
      /* Unprivileged already: the supervisor changed to --user. */
      .landlock = true,                   /* no paths, no ports */
      .new_netns = true, .new_ipc_uts = true,
      .nofile = frontend_nofile (fe.max_clients),
      .no_file_writes = true,
    };
    sandbox_enter (&spec);
  }

  run_loop ();
  stats_report (true);
  return EXIT_SUCCESS;
}
