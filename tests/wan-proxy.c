/*
 * wan-proxy.c: a TCP proxy that makes a local web server look distant,
 * for the benchmark's wan section and its tests (never installed).
 *
 *   wan-proxy --listen HOST:PORT --target HOST:PORT --delay-ms D
 *             [--rate-mbps R] [--queue-kib K] [--port-file F]
 *
 * Every byte, in each direction, is passed on D/2 ms after it arrived:
 * D is added to the round trip (a request and its reply each wait D/2).
 * A new connection's first client bytes wait a further D, the round trip
 * a real TCP handshake would have cost before the client could send.
 * With --rate-mbps, each TCP connection is held to R megabytes (10^6
 * bytes) per second in each direction by a token bucket, as CDNs and
 * object stores cap every connection.  --listen's port may be 0: the port
 * chosen is written to --port-file (written whole, then renamed in), or
 * to stdout.
 *
 * One thread, one epoll loop, non-blocking sockets.  Each direction of
 * each connection holds at most --queue-kib bytes (default 16 MiB, enough
 * for 1.6 GB/s per connection at D = 20); a full queue stops reading that
 * side, so the sender's TCP window closes as it would on a real link.  An
 * end-of-file is passed on (shutdown SHUT_WR) after the bytes before it,
 * with the same delay; a connection is closed when both directions have
 * ended, or at once when either side fails.  SIGTERM or SIGINT ends it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* Arrival marks per direction: reads within MARK_MERGE_NS of the last one
 * share its mark, so a direction needs about one mark per 100 us of
 * delay; a full mark ring stops reading like a full queue. */
#define MARKS 16384
#define MARK_MERGE_NS 100000ull
/* One read or write moves at most this much (a bounded turn per socket,
 * so one fast connection does not starve the others). */
#define IO_CHUNK (256 * 1024)
/* The bucket holds 20 ms of rate (at least 16 KiB): a loop woken a few
 * ms late on a busy machine loses no tokens, and a burst (1 MB at 50
 * MB/s) stays small next to any transfer measured.  Writes wait for
 * TOKENS_WAIT bytes of tokens rather than waking for every few. */
#define BUCKET_MS 20
#define TOKENS_WAIT 16384.0
#define BUCKET_MIN 16384.0
#define NSEC 1000000000ull

struct mark {
  uint64_t end;        /* the direction's byte count after these bytes */
  uint64_t release;    /* when they may go on (CLOCK_MONOTONIC ns) */
};

/* One direction: bytes read from one socket, to be written to the other. */
struct dir {
  unsigned char *buf;  /* ring of queue_bytes, allocated on first read */
  uint64_t in, out;    /* bytes read and written, ever */
  uint64_t released;   /* bytes whose delay has passed */
  struct mark *marks;  /* ring of MARKS */
  unsigned mark_head, mark_count;
  uint64_t not_before; /* bytes that arrive earlier count as arriving
                          then (the client's first bytes: the handshake) */
  bool eof;            /* the reading side ended */
  uint64_t eof_release;
  bool shut;           /* the end was passed on */
  double tokens;       /* the rate cap's bucket, in bytes */
  uint64_t shift;      /* byte n is at (n + shift) % queue_bytes: an empty
                          queue starts again at the ring's start */
  uint64_t refilled;
};

struct conn;
struct end {
  struct conn *c;
  int side;            /* 0: the client's socket, 1: the target's */
};

struct conn {
  int fd[2];
  uint32_t events[2];  /* what epoll watches on each fd */
  bool hup[2];         /* taken out of epoll after EPOLLHUP (see handle) */
  struct end ends[2];
  struct dir d[2];     /* d[0]: client to target, d[1]: target to client */
  bool connecting;
  bool dead;
  struct conn *next;
};

static int epfd, timer_fd, listen_fd;
static struct conn *conns;
static uint64_t delay_ns;       /* one way: D/2 */
static uint64_t handshake_ns;   /* D */
static double rate;             /* bytes per second per direction; 0: none */
static size_t queue_bytes = 16u * 1024 * 1024;
static struct sockaddr_storage target;
static socklen_t target_len;
static int listen_tag, timer_tag;
static volatile sig_atomic_t stopping;

static void
die (const char *what)
{
  fprintf (stderr, "wan-proxy: %s: %s\n", what, strerror (errno));
  exit (1);
}

static void
usage (void)
{
  fprintf (stderr, "usage: wan-proxy --listen HOST:PORT --target HOST:PORT "
           "--delay-ms D [--rate-mbps R] [--queue-kib K] [--port-file F]\n"
           "  D ms are added to the round trip (D/2 each way); R caps each TCP\n"
           "  connection at R*10^6 bytes/s per direction; PORT 0 picks one.\n");
  exit (2);
}

static uint64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * NSEC + (uint64_t) ts.tv_nsec;
}

/* HOST:PORT (HOST may be [v6]) into an address. */
static void
resolve (const char *arg, bool passive, struct sockaddr_storage *ss,
         socklen_t *len)
{
  char host[256];
  const char *colon = strrchr (arg, ':');
  size_t hl;
  struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
  int r;

  if (colon == NULL || colon == arg || colon[1] == '\0')
    usage ();
  hl = (size_t) (colon - arg);
  if (arg[0] == '[' && colon[-1] == ']') {
    arg++;
    hl -= 2;
  }
  if (hl >= sizeof host)
    usage ();
  memcpy (host, arg, hl);
  host[hl] = '\0';
  if (passive)
    hints.ai_flags = AI_PASSIVE;
  r = getaddrinfo (host, colon + 1, &hints, &res);
  if (r != 0) {
    fprintf (stderr, "wan-proxy: %s: %s\n", arg, gai_strerror (r));
    exit (1);
  }
  memcpy (ss, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo (res);
}

static double
number (const char *s)
{
  char *end;
  double v;

  errno = 0;
  v = strtod (s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(v >= 0) || v > 1e9)
    usage ();
  return v;
}

static void
watch (struct conn *c, int side, uint32_t events)
{
  struct epoll_event ev = { .events = events, .data.ptr = &c->ends[side] };

  if (c->hup[side]) {
    /* Back in only when there is something to read (the end of file). */
    if ((events & EPOLLIN) == 0)
      return;
    if (epoll_ctl (epfd, EPOLL_CTL_ADD, c->fd[side], &ev) == -1)
      die ("epoll_ctl");
    c->hup[side] = false;
    c->events[side] = events;
    return;
  }
  if (c->events[side] == events)
    return;
  if (epoll_ctl (epfd, EPOLL_CTL_MOD, c->fd[side], &ev) == -1)
    die ("epoll_ctl");
  c->events[side] = events;
}

static void
conn_free (struct conn *c)
{
  for (int i = 0; i < 2; i++) {
    if (c->fd[i] >= 0)
      close (c->fd[i]);
    free (c->d[i].buf);
    free (c->d[i].marks);
  }
  free (c);
}

static void
accept_all (void)
{
  for (;;) {
    int cfd = accept4 (listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    int sfd, one = 1;
    struct conn *c;
    uint64_t now;

    if (cfd == -1) {
      if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
        return;
      if (errno == EMFILE || errno == ENFILE || errno == ENOMEM) {
        fprintf (stderr, "wan-proxy: accept: %s (connection left queued)\n",
                 strerror (errno));
        return;
      }
      die ("accept");
    }
    sfd = socket (target.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    c = calloc (1, sizeof *c);
    if (sfd == -1 || c == NULL) {
      fprintf (stderr, "wan-proxy: new connection dropped: %s\n", strerror (errno));
      close (cfd);
      if (sfd >= 0)
        close (sfd);
      free (c);
      continue;
    }
    setsockopt (cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt (sfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd[0] = cfd;
    c->fd[1] = sfd;
    now = now_ns ();
    for (int i = 0; i < 2; i++) {
      struct epoll_event ev = { .events = 0, .data.ptr = &c->ends[i] };
      c->ends[i].c = c;
      c->ends[i].side = i;
      c->d[i].tokens = BUCKET_MIN;
      c->d[i].refilled = now;
      if (epoll_ctl (epfd, EPOLL_CTL_ADD, c->fd[i], &ev) == -1)
        die ("epoll_ctl");
    }
    c->d[0].not_before = now + handshake_ns;
    c->connecting = true;
    if (connect (sfd, (struct sockaddr *) &target, target_len) == 0)
      c->connecting = false;
    else if (errno != EINPROGRESS) {
      fprintf (stderr, "wan-proxy: connect to the target: %s\n", strerror (errno));
      c->dead = true;
    }
    c->next = conns;
    conns = c;
  }
}

/* Read what side SIDE has into its direction's queue. */
static void
read_side (struct conn *c, int side)
{
  struct dir *d = &c->d[side];
  uint64_t now = now_ns ();

  if (d->buf == NULL) {
    d->buf = malloc (queue_bytes);
    d->marks = malloc (MARKS * sizeof *d->marks);
    if (d->buf == NULL || d->marks == NULL) {
      fprintf (stderr, "wan-proxy: out of memory: connection closed\n");
      c->dead = true;
      return;
    }
  }
  while (!d->eof && d->in - d->out < queue_bytes && d->mark_count < MARKS) {
    /* Subtraction: in - out <= queue_bytes, checked above. */
    size_t at;
    if (d->in == d->out)
      /* Empty: the next bytes go to the ring's start, so that a
       * connection used for request after request keeps reusing the same
       * few (cached, mapped) pages instead of walking all of its ring:
       * with dozens of connections that walk made the proxy spend its CPU
       * on cold copies and page faults.  (n + shift) % queue_bytes == 0
       * for n == in. */
      d->shift = (queue_bytes - d->in % queue_bytes) % queue_bytes;
    at = (size_t) ((d->in + d->shift) % queue_bytes);
    size_t room = queue_bytes - (size_t) (d->in - d->out);
    size_t n = queue_bytes - at < room ? queue_bytes - at : room;
    ssize_t r;
    uint64_t release = (now > d->not_before ? now : d->not_before) + delay_ns;

    if (n > IO_CHUNK)
      n = IO_CHUNK;
    r = read (c->fd[side], d->buf + at, n);
    if (r == -1) {
      if (errno == EAGAIN || errno == EINTR)
        return;
      c->dead = true;
      return;
    }
    if (r == 0) {
      d->eof = true;
      d->eof_release = release;
      return;
    }
    d->in += (uint64_t) r;
    if (d->mark_count > 0) {
      struct mark *last = &d->marks[(d->mark_head + d->mark_count - 1) % MARKS];
      if (release - last->release < MARK_MERGE_NS) {
        last->end = d->in;
        if ((size_t) r < n)
          return;
        continue;
      }
    }
    d->marks[(d->mark_head + d->mark_count) % MARKS] =
      (struct mark) { .end = d->in, .release = release };
    d->mark_count++;
    if ((size_t) r < n)
      return;             /* drained for now */
  }
}

/* Pass on what direction I may pass on now; returns the time at which
 * it can do more without a socket event (UINT64_MAX: none), and sets
 * *blocked when the writing socket is full. */
static uint64_t
pump_dir (struct conn *c, int i, uint64_t now, bool *blocked)
{
  struct dir *d = &c->d[i];
  int wfd = c->fd[1 - i];
  uint64_t next = UINT64_MAX;

  *blocked = false;
  while (d->mark_count > 0 && d->marks[d->mark_head].release <= now) {
    d->released = d->marks[d->mark_head].end;
    d->mark_head = (d->mark_head + 1) % MARKS;
    d->mark_count--;
  }
  if (d->mark_count > 0)
    next = d->marks[d->mark_head].release;
  if (i == 0 && c->connecting)
    return next;          /* EPOLLOUT on the target says when */
  if (rate > 0) {
    double depth = rate * BUCKET_MS / 1000;
    if (depth < BUCKET_MIN)
      depth = BUCKET_MIN;
    d->tokens += (double) (now - d->refilled) * rate / NSEC;
    if (d->tokens > depth)
      d->tokens = depth;
    d->refilled = now;
  }
  while (d->released > d->out) {
    size_t at = (size_t) ((d->out + d->shift) % queue_bytes);
    uint64_t avail = d->released - d->out;
    size_t n = queue_bytes - at;
    ssize_t w;

    if (avail < n)
      n = (size_t) avail;
    if (n > IO_CHUNK)
      n = IO_CHUNK;
    if (rate > 0) {
      if (d->tokens < 1 || (d->tokens < (double) n && d->tokens < TOKENS_WAIT)) {
        double want = (double) n < TOKENS_WAIT ? (double) n : TOKENS_WAIT;
        uint64_t t = now + (uint64_t) ((want - d->tokens) * NSEC / rate) + 1;
        return t < next ? t : next;
      }
      if ((double) n > d->tokens)
        n = (size_t) d->tokens;
    }
    w = send (wfd, d->buf + at, n, MSG_NOSIGNAL);
    if (w == -1) {
      if (errno == EAGAIN || errno == EINTR) {
        *blocked = true;
        return next;
      }
      c->dead = true;
      return UINT64_MAX;
    }
    d->out += (uint64_t) w;
    if (rate > 0)
      d->tokens -= (double) w;
  }
  if (d->eof && !d->shut && d->out == d->in) {
    if (d->eof_release <= now) {
      shutdown (wfd, SHUT_WR);
      d->shut = true;
    }
    else if (d->eof_release < next)
      next = d->eof_release;
  }
  return next;
}

/* Write what is due on every connection, set what epoll watches, free
 * the finished ones; returns the earliest time something falls due. */
static uint64_t
pump_all (void)
{
  uint64_t now = now_ns (), next = UINT64_MAX;

  for (struct conn **pp = &conns; *pp != NULL; ) {
    struct conn *c = *pp;
    bool blocked[2] = { false, false };

    for (int i = 0; i < 2 && !c->dead; i++) {
      uint64_t t = pump_dir (c, i, now, &blocked[i]);
      if (t < next)
        next = t;
    }
    if (!c->dead && c->d[0].shut && c->d[1].shut)
      c->dead = true;     /* both ends passed on: done */
    if (c->dead) {
      *pp = c->next;
      conn_free (c);
      continue;
    }
    for (int side = 0; side < 2; side++) {
      struct dir *rd = &c->d[side];       /* read from this side */
      uint32_t ev = 0;
      if (!rd->eof && rd->in - rd->out < queue_bytes && rd->mark_count < MARKS &&
          !(side == 1 && c->connecting))
        ev |= EPOLLIN;
      /* This side is written by direction 1 - side. */
      if (blocked[1 - side] || (side == 1 && c->connecting))
        ev |= EPOLLOUT;
      watch (c, side, ev);
    }
    pp = &c->next;
  }
  return next;
}

static void
arm_timer (uint64_t when)
{
  struct itimerspec its = { 0 };

  if (when != UINT64_MAX) {
    its.it_value.tv_sec = (time_t) (when / NSEC);
    its.it_value.tv_nsec = (long) (when % NSEC);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
      its.it_value.tv_nsec = 1;
  }
  if (timerfd_settime (timer_fd, TFD_TIMER_ABSTIME, &its, NULL) == -1)
    die ("timerfd_settime");
}

static void
on_signal (int sig)
{
  (void) sig;
  stopping = 1;
}

static void
handle (struct end *e, uint32_t events)
{
  struct conn *c = e->c;

  if (c->dead)
    return;
  if (e->side == 1 && c->connecting && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt (c->fd[1], SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      fprintf (stderr, "wan-proxy: connect to the target: %s\n", strerror (err));
      c->dead = true;
      return;
    }
    c->connecting = false;
  }
  if (events & EPOLLERR) {
    c->dead = true;       /* a reset: pass it on by closing both */
    return;
  }
  if (events & (EPOLLIN | EPOLLHUP))
    read_side (c, e->side);
  /* epoll reports a hang-up whatever it watches: while this side may not
   * be read (its queue full, or its end already seen) it would wake the
   * loop for nothing until the queue drains. */
  if ((events & EPOLLHUP) && !c->dead && (c->events[e->side] & EPOLLIN) == 0) {
    if (epoll_ctl (epfd, EPOLL_CTL_DEL, c->fd[e->side], NULL) == -1)
      die ("epoll_ctl");
    c->hup[e->side] = true;
    c->events[e->side] = 0;
  }
}

int
main (int argc, char **argv)
{
  const char *listen_arg = NULL, *target_arg = NULL, *port_file = NULL;
  double delay_ms = -1;
  struct sockaddr_storage ls;
  socklen_t ll;
  int one = 1;
  struct epoll_event ev;
  struct sigaction sa = { .sa_handler = on_signal };
  sigset_t blocked, waiting;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc)
      usage ();
    if (strcmp (a, "--listen") == 0) listen_arg = argv[++i];
    else if (strcmp (a, "--target") == 0) target_arg = argv[++i];
    else if (strcmp (a, "--delay-ms") == 0) delay_ms = number (argv[++i]);
    else if (strcmp (a, "--rate-mbps") == 0) rate = number (argv[++i]) * 1e6;
    else if (strcmp (a, "--queue-kib") == 0) {
      double k = number (argv[++i]);
      if (k < 64 || k > 1024 * 1024)
        usage ();
      queue_bytes = (size_t) k * 1024;
    }
    else if (strcmp (a, "--port-file") == 0) port_file = argv[++i];
    else usage ();
  }
  if (listen_arg == NULL || target_arg == NULL || delay_ms < 0)
    usage ();
  delay_ns = (uint64_t) (delay_ms * 1e6 / 2);
  handshake_ns = (uint64_t) (delay_ms * 1e6);
  resolve (target_arg, false, &target, &target_len);
  resolve (listen_arg, true, &ls, &ll);

  signal (SIGPIPE, SIG_IGN);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);
  /* Blocked except inside epoll_pwait: a signal between the check of
   * stopping and the wait would otherwise be missed. */
  sigemptyset (&blocked);
  sigaddset (&blocked, SIGTERM);
  sigaddset (&blocked, SIGINT);
  sigprocmask (SIG_BLOCK, &blocked, &waiting);
  sigdelset (&waiting, SIGTERM);
  sigdelset (&waiting, SIGINT);

  listen_fd = socket (ls.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd == -1)
    die ("socket");
  setsockopt (listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind (listen_fd, (struct sockaddr *) &ls, ll) == -1)
    die ("bind");
  if (listen (listen_fd, 512) == -1)
    die ("listen");
  ll = sizeof ls;
  if (getsockname (listen_fd, (struct sockaddr *) &ls, &ll) == -1)
    die ("getsockname");
  {
    unsigned port = ntohs (ls.ss_family == AF_INET6
                           ? ((struct sockaddr_in6 *) &ls)->sin6_port
                           : ((struct sockaddr_in *) &ls)->sin_port);
    if (port_file != NULL) {
      char tmp[PATH_MAX];
      FILE *f;
      snprintf (tmp, sizeof tmp, "%s.tmp", port_file);
      f = fopen (tmp, "w");
      if (f == NULL || fprintf (f, "%u\n", port) < 0 || fclose (f) != 0 ||
          rename (tmp, port_file) == -1)
        die (port_file);
    }
    else {
      printf ("%u\n", port);
      fflush (stdout);
    }
  }

  epfd = epoll_create1 (EPOLL_CLOEXEC);
  timer_fd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (epfd == -1 || timer_fd == -1)
    die ("epoll_create1");
  ev = (struct epoll_event) { .events = EPOLLIN, .data.ptr = &listen_tag };
  if (epoll_ctl (epfd, EPOLL_CTL_ADD, listen_fd, &ev) == -1)
    die ("epoll_ctl");
  ev = (struct epoll_event) { .events = EPOLLIN, .data.ptr = &timer_tag };
  if (epoll_ctl (epfd, EPOLL_CTL_ADD, timer_fd, &ev) == -1)
    die ("epoll_ctl");

  while (!stopping) {
    struct epoll_event evs[64];
    int n;

    arm_timer (pump_all ());
    n = epoll_pwait (epfd, evs, 64, -1, &waiting);
    if (n == -1) {
      if (errno == EINTR)
        continue;
      die ("epoll_wait");
    }
    for (int i = 0; i < n; i++) {
      void *p = evs[i].data.ptr;
      if (p == &listen_tag)
        accept_all ();
      else if (p == &timer_tag) {
        uint64_t x;
        if (read (timer_fd, &x, sizeof x) == -1 && errno != EAGAIN)
          die ("timerfd read");
      }
      else
        handle (p, evs[i].events);
    }
  }
  while (conns != NULL) {
    struct conn *c = conns;
    conns = c->next;
    conn_free (c);
  }
  return 0;
}
