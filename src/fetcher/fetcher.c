/*
 * fetcher.c: the fetcher role, one process per client connection.
 *
 * Peers (see fetcher.h):
 *   supervisor  CHILD_FD_CONFIG: IPC_CONFIG_FETCHER, IPC_CONFIG_END, EOF
 *               CHILD_FD_PEER:   IPC_FETCHER_OPEN, the first message
 *   front-end   CHILD_FD_PEER:   requests in, replies out (after it)
 *   the export  fetcher-file.c or fetcher-http.c
 *
 * Start: read the configuration, (sandbox), wait for the supervisor's
 * IPC_FETCHER_OPEN (a spare waits long), open the export, tell the
 * front-end IPC_FETCHER_OPENED, then let the backend serve requests until
 * the front-end closes its end.
 *
 * Requests are read without blocking (recv MSG_DONTWAIT) through one
 * buffer, so the HTTP backend can read new requests while its transfers
 * run; replies are written with blocking writes.  Every field of every
 * request is checked (fetcher-request-parse.c), although the front-end
 * checked it too: a front-end that sends anything malformed is broken or
 * compromised, and this process ends (exit 1), which ends that one
 * client's connection.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child-fds.h"
#include "child.h"
#include "config.h"
#include "data-path.h"
#include "fetcher-cache.h"
#include "fetcher-wire.h"
#include "fetcher.h"
#include "fetcher-request-parse.h"
#include "ipc-messages.h"
#include "ipc.h"
#include "ipc-table.h"
#include "limits-web.h"
#include "log.h"
#include "roles.h"
#include "sandbox.h"
#include "url.h"
#include "wire.h"

#ifdef NBDCURLD_TEST_HOOKS
int hostile_fetcher_main (const char *mode);
void sandbox_probe (const char *probe);
#endif

/* Bytes read from the front-end at once: many request headers, so a
 * burst of requests costs one recv.  Requests carry no data: that is in
 * the data area. */
#define INPUT_BUFFER_SIZE (64u * 1024)

static struct {
  uint8_t buf[INPUT_BUFFER_SIZE];
  size_t start, end;          /* unparsed bytes: buf[start..end) */
} input;

/* The data area shared with the front-end (data-path.h), mapped at start. */
uint8_t *fetcher_data_area;

/* The front-end sent something it never should: end this connection. */
void
fetcher_front_end_violation (const char *fmt, ...)
{
  char what[256];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (what, sizeof what, fmt, ap);
  va_end (ap);
  log_error ("protocol violation by the front-end: %s; ending this connection", what);
  exit (EXIT_FAILURE);
}

/* Decode and check one request header (fetcher-request-parse.c), and
 * point req->data at its part of the data area. */
static void
take_request (const struct fetcher *f, const uint8_t *raw, struct fetcher_request *req)
{
  const struct fetcher_request_rules rules = {
    .size = f->size, .can = f->can, .data_area = fetcher_data_area,
  };
  char why[FETCHER_REQUEST_WHY_MAX];

  if (fetcher_request_parse (&rules, raw, req, why, sizeof why) == -1)
    fetcher_front_end_violation ("%s", why);
}

/* Receive more bytes from the front-end into dst without blocking.
 * Returns the count, 0 when nothing is there now, or -1 at EOF. */
static ssize_t
receive (void *dst, size_t len)
{
  ssize_t r;

  do
    r = recv (CHILD_FD_PEER, dst, len, MSG_DONTWAIT);
  while (r == -1 && errno == EINTR);
  if (r == -1) {
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return 0;
    if (errno == ECONNRESET)
      return -1;
    fatal_errno ("reading requests from the front-end");
  }
  if (r == 0)
    return -1;
  return r;
}

bool
fetcher_input_buffered (void)
{
  return input.end > input.start;
}

int
fetcher_next_request (struct fetcher *f, struct fetcher_request *req)
{
  /* Each pass either returns or adds bytes: recv returns 0 (no bytes)
   * only when nothing is waiting, which returns; so the loop ends. */
  for (;;) {
    size_t avail = input.end - input.start;   /* cannot underflow: start <= end */
    ssize_t r;

    if (avail >= IPC_HEADER_SIZE) {
      take_request (f, input.buf + input.start, req);
      input.start += IPC_HEADER_SIZE;
      return 1;
    }
    /* Less than a header: move it to the front and read more. */
    if (input.start > 0) {
      memmove (input.buf, input.buf + input.start, avail);
      input.start = 0;
      input.end = avail;
    }
    /* end = avail < IPC_HEADER_SIZE <= sizeof buf: there is room. */
    r = receive (input.buf + input.end, sizeof input.buf - input.end);
    if (r == -1) {
      if (avail > 0)
        fetcher_front_end_violation ("end of stream inside a request header");
      return -1;
    }
    if (r == 0)
      return 0;
    input.end += (size_t) r;
  }
}

bool
fetcher_front_end_gone (void)
{
  struct pollfd pfd = { .fd = CHILD_FD_PEER, .events = 0 };

  /* A Unix stream socket reports POLLHUP once the peer has closed both
   * directions, and only POLLRDHUP after a shutdown (SHUT_WR). */
  if (poll (&pfd, 1, 0) == -1)
    return false;
  return (pfd.revents & (POLLHUP | POLLERR)) != 0;
}

/* Replies wait here and go to the front-end in one write per batch. */
static struct {
  struct ipc_header h[128];
  unsigned n;
} replies;

struct fetcher_stats_wire fetcher_stats;

/* The figures as last sent, and the message that sends them. */
static struct fetcher_stats_wire stats_sent;
static struct {
  struct ipc_header h;
  struct fetcher_stats_wire s;
} stats_message;
static_assert (sizeof stats_message == IPC_HEADER_SIZE + FETCHER_STATS_WIRE_SIZE,
               "the statistics message has no padding");

/* The queued replies, after the figures when they changed: one write. */
static int
send_replies (void)
{
  static uint8_t out[sizeof stats_message + sizeof replies.h];
  size_t len = 0;

  if (memcmp (&fetcher_stats, &stats_sent, sizeof stats_sent) != 0) {
    stats_message.h = (struct ipc_header) {
      .type = IPC_FETCHER_STATS, .payload_len = FETCHER_STATS_WIRE_SIZE,
    };
    stats_message.s = fetcher_stats;
    stats_sent = fetcher_stats;
    memcpy (out, &stats_message, sizeof stats_message);
    len = sizeof stats_message;
  }
  memcpy (out + len, replies.h, replies.n * sizeof replies.h[0]);
  return write_full (CHILD_FD_PEER, out, len + replies.n * sizeof replies.h[0]);
}

void
fetcher_flush_replies (void)
{
  if (replies.n == 0)
    return;
  if (send_replies () == -1) {
    if (errno == EPIPE || errno == ECONNRESET) {
      /* The client went away and the front-end closed our socket. */
      debug ("the front-end closed the connection; exiting");
      exit (EXIT_SUCCESS);
    }
    fatal_errno ("sending replies to the front-end");
  }
  replies.n = 0;
}

/* Replies and discards keep their order: the front-end takes the pipe's
 * bytes in the order of the messages that announce them. */
void
fetcher_queue_message (const struct ipc_header *h)
{
  if (replies.n == sizeof replies.h / sizeof replies.h[0])
    fetcher_flush_replies ();
  replies.h[replies.n++] = *h;
}

void
fetcher_reply (uint64_t id, uint32_t error)
{
  fetcher_queue_message (&(struct ipc_header) { .type = IPC_REPLY, .id = id, .error = error });
}

int fetcher_pipe_fd = -1;
const char *fetcher_ca_bundle;
size_t fetcher_ca_bundle_len;

/* The CA certificates the supervisor read (ca-bundle.c), at
 * CHILD_FD_CA_BUNDLE or after the script channel: mapped for the
 * process's life (libcurl points at them, CURL_BLOB_NOCOPY), shared with
 * the other fetchers of the export and sealed against writing. */
static void
take_ca_bundle (const struct fetcher_config *cfg)
{
  const int fd = (cfg->flags & (FETCHER_HEADER_SCRIPT | FETCHER_COOKIE_SCRIPT))
                 ? CHILD_FD_SCRIPTS + 1 : CHILD_FD_CA_BUNDLE;
  struct stat st;
  void *p;

  if (cfg->ca_bundle_len == 0)
    return;
  if (fstat (fd, &st) == -1 || !S_ISREG (st.st_mode) ||
      (uint64_t) st.st_size != cfg->ca_bundle_len)
    fatal ("the CA certificates' descriptor is not the %u bytes the configuration says",
           cfg->ca_bundle_len);
  p = mmap (NULL, cfg->ca_bundle_len, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    fatal_errno ("mapping the CA certificates");
  close (fd);
  fetcher_ca_bundle = p;
  fetcher_ca_bundle_len = cfg->ca_bundle_len;
}
uint32_t fetcher_pipe_read_max;

void
fetcher_reply_piped (uint64_t id)
{
  fetcher_queue_message (&(struct ipc_header) {
      .type = IPC_REPLY, .flags = IPC_REPLY_PIPED, .id = id });
}

void
fetcher_pipe_discard (uint32_t length)
{
  fetcher_queue_message (&(struct ipc_header) { .type = IPC_PIPE_DISCARD, .length = length });
}

/* Take the data pipe, if the front-end reads it (FETCHER_DATA_PIPE; else
 * it is closed).  Before the sandbox: F_GETPIPE_SZ is not in the policy. */
static void
take_data_pipe (const struct fetcher *f)
{
  int capacity, flags;

  /* A writable file: export reads through the data area: a read's pages
   * in the pipe would show a write that came after the read.  So do the
   * reads of an export with a cache: spliced bytes never pass through
   * this process, so they could not be kept. */
  if (!(f->cfg->flags & FETCHER_DATA_PIPE) || fetcher_cache_on () ||
      (f->kind == URL_FILE && !(f->cfg->flags & FETCHER_READONLY))) {
    close (CHILD_FD_DATA_PIPE);
    return;
  }
  capacity = fcntl (CHILD_FD_DATA_PIPE, F_GETPIPE_SZ);
  flags = fcntl (CHILD_FD_DATA_PIPE, F_GETFL);
  if (capacity <= 0 || flags == -1 ||
      fcntl (CHILD_FD_DATA_PIPE, F_SETFL, flags | O_NONBLOCK) == -1)
    fatal ("fd %d is not the data pipe", CHILD_FD_DATA_PIPE);
  fetcher_pipe_fd = CHILD_FD_DATA_PIPE;
  /* A quarter of the capacity: a read waits for room only while earlier
   * ones drain, and a server's small segments (each takes a pipe slot of
   * its own) rarely fill the pipe before a read is complete. */
  fetcher_pipe_read_max = (uint32_t) capacity / 4;
  if (fetcher_pipe_read_max > DATA_PIPE_READ_MAX)
    fetcher_pipe_read_max = DATA_PIPE_READ_MAX;
}

/* The messages before the first request, sent at once (blocking), with
 * their payload (h->payload_len bytes). */
static void
send_control (const struct ipc_header *h, const void *payload)
{
  if (ipc_send (CHILD_FD_PEER, h, payload) == -1) {
    if (errno == EPIPE || errno == ECONNRESET) {
      debug ("the front-end closed the connection before the export was open");
      exit (h->error == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
    }
    fatal_errno ("sending message type %u to the front-end", h->type);
  }
}

static void
send_opened (uint64_t size, uint32_t can, uint32_t piped_read_max)
{
  send_control (&(struct ipc_header) {
      .type = IPC_FETCHER_OPENED,
      .flags = (uint16_t) can,
      .offset = size,
      .length = piped_read_max,
    }, NULL);
}

/* IPC_FETCHER_OPEN, the supervisor's go-ahead: the first message on our
 * socket, written before the front-end had it, so read whole and exactly
 * (nothing of the front-end's is consumed with it).  A spare fetcher
 * waits here, for as long as nobody needs it (limits-spares.h);
 * at end of file the supervisor let it go, which is no error. */
static void
wait_for_open (const struct fetcher *f)
{
  uint8_t raw[IPC_HEADER_SIZE];
  struct ipc_header h;
  size_t got = 0;

  while (got < sizeof raw) {
    ssize_t r = recv (CHILD_FD_PEER, raw + got, sizeof raw - got, 0);
    if (r == -1 && errno == EINTR)
      continue;
    if (r == -1 && errno != ECONNRESET)
      fatal_errno ("waiting for the word to open the export");
    if (r <= 0) {
      if (got > 0)
        fatal ("end of stream inside the word to open the export");
      debug ("export \"%s\": not needed after all; exiting", f->export_name);
      exit (EXIT_SUCCESS);
    }
    got += (size_t) r;
  }
  ipc_decode_header (raw, &h);
  if (h.type != IPC_FETCHER_OPEN || ipc_check (&h, 0, ROLE_SUPERVISOR, ROLE_FETCHER) != NULL)
    fatal ("the first message is not the word to open (type %u): stopping", h.type);
}

static void
open_or_exit (struct fetcher *f, const struct fetcher_backend *backend)
{
  int error;

  wait_for_open (f);
  error = backend->open (f);
  if (error != 0) {
    /* Why goes with the errno; a backend that did not say has logged it. */
    size_t len = strnlen (f->open_failure, MAX_OPEN_FAILURE_MESSAGE);
    send_control (&(struct ipc_header) {
        .type = IPC_FETCHER_OPENED,
        .error = (uint32_t) error,
        .payload_len = (uint32_t) len,
      }, f->open_failure);
    exit (EXIT_FAILURE);
  }
}

/* The TCP ports of a proxy or a Unix socket (proxy=, unix-socket-path=),
 * given the URL's nports in ports[] (of room for max).  Through a proxy
 * only the proxy is connected to, and the URL's ports stay only for the
 * hosts no_proxy exempts; on a Unix socket, no TCP port at all.  Returns
 * the new count. */
static size_t
proxy_or_socket_ports (const struct fetcher *f, uint16_t *ports, size_t nports, size_t max)
{
  const struct fetcher_config *cfg = f->cfg;
  uint16_t proxy[2];
  int n, i;
  size_t j;

  if (cfg->unix_socket_path[0] != '\0')
    return 0;
  if (cfg->proxy[0] == '\0')
    return nports;
  n = url_proxy_connect_ports (cfg->proxy, proxy, sizeof proxy / sizeof proxy[0]);
  if (n < 0)
    fatal ("export \"%s\": cannot find the port of the proxy", f->export_name);
  if (cfg->noproxy[0] == '\0')
    nports = 0;
  for (i = 0; i < n; i++) {
    for (j = 0; j < nports && ports[j] != proxy[i]; j++)
      ;
    if (j == nports && nports < max)
      ports[nports++] = proxy[i];
  }
  return nports;
}

/* Every layer before the first untrusted byte (see sandbox.h).  What is
 * left: for a network export, the files its libraries read (resolver,
 * CA store, OpenSSL configuration) and TCP connections to the ports its
 * URL and redirects may use (fetcher-connect.c: the URL's, 80, 443,
 * --allow-port, and DNS over TCP); for a file: export, nothing but the
 * open file. */
static void
fetcher_sandbox (const struct fetcher *f)
{
  const struct fetcher_config *cfg = f->cfg;
  struct sandbox_path paths[64];
  size_t npaths = 0, i;
  uint16_t ports[4 + MAX_ALLOWED_PORTS];
  int nports = 0;
  bool any_port = false, network = f->kind != URL_FILE;

  sandbox_prepare_fetcher (network);
  if (network) {
    /* No path of --cainfo or --capath: their certificates came as bytes
     * (take_ca_bundle). */
    static_assert (sizeof paths / sizeof paths[0] >= 16, "room for the built-in paths");
    for (i = 0; i < sandbox_network_npaths && i < sizeof paths / sizeof paths[0]; i++)
      paths[npaths++] = sandbox_network_paths[i];
    nports = fetcher_connect_ports (cfg, ports, sizeof ports / sizeof ports[0], &any_port);
    if (nports < 0)
      fatal ("export \"%s\": cannot find the port of %s", f->export_name, f->log_url);
    nports = (int) proxy_or_socket_ports (f, ports, (size_t) nports,
                                          sizeof ports / sizeof ports[0]);
  }
  {
    const struct sandbox_spec spec = {
      .role = roles[ROLE_FETCHER].name,
      /* unix-socket-path=: sockets of AF_UNIX too (fetcher-unix.policy). */
      .rules = cfg->unix_socket_path[0] ? fetcher_unix_policy_rules : roles[ROLE_FETCHER].rules,
      .nrules = cfg->unix_socket_path[0] ? fetcher_unix_policy_nrules : *roles[ROLE_FETCHER].nrules,
      .debug = (cfg->flags & FETCHER_SANDBOX_DEBUG) != 0,
      /* Unprivileged already: the supervisor changed to --user. */
      .landlock = true, .paths = paths, .npaths = npaths,
      .any_connect = any_port, .connect_ports = ports,
      .nports = nports > 0 ? (size_t) nports : 0,
      .new_ipc_uts = true,
      .nofile = 2 * MAX_CONNECTIONS + 32,
      .no_file_writes = network || (cfg->flags & FETCHER_READONLY),
    };
    sandbox_enter (&spec);
  }
}

/* The data area: the supervisor sealed it against resizing; map it whole. */
static void
map_data_area (void)
{
  fetcher_data_area = mmap (NULL, DATA_AREA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
                    CHILD_FD_DATA_AREA, 0);
  if (fetcher_data_area == MAP_FAILED)
    fatal_errno ("mapping the data area");
  close (CHILD_FD_DATA_AREA);
}

/* What f knows of its export from the configuration.  A URL that cannot
 * be read fails the open at once. */
static void
describe_export (struct fetcher *f, const struct fetcher_config *cfg)
{
  char err[256];

  f->cfg = cfg;
  f->export_name = cfg->export_name;
  f->log_url = url_for_log (cfg->url);
  if (f->log_url == NULL)
    fatal_errno ("malloc");
  if (url_parse (cfg->url, &f->kind, &f->file_path, err, sizeof err) == -1) {
    log_error ("export \"%s\" (%s): %s", f->export_name, f->log_url, err);
    send_control (&(struct ipc_header) { .type = IPC_FETCHER_OPENED, .error = EINVAL },
                  NULL);
    exit (EXIT_FAILURE);
  }
}

int
fetcher_main (void)
{
  static struct fetcher_config cfg;
  static struct fetcher f;
  const struct fetcher_backend *backend;

  child_start (ROLE_FETCHER);
  config_recv_fetcher (CHILD_FD_CONFIG, &cfg);
  if (close (CHILD_FD_CONFIG) == -1)
    fatal_errno ("close configuration pipe");
  log_init (roles[ROLE_FETCHER].name, (cfg.flags & FETCHER_VERBOSE) != 0);

#ifdef NBDCURLD_TEST_HOOKS
  /* Test binary only (tests/hooks/hostile-fetcher.c): a fetcher that breaks
   * the protocol on purpose.  Release builds do not contain this. */
  {
    const char *mode = strstr (cfg.url, "#hostile=");
    if (mode)
      return hostile_fetcher_main (mode + strlen ("#hostile="));
  }
#endif

  /* The supervisor checked all this; a mismatch is a bug there. */
  if (cfg.connect_timeout > MAX_TIMEOUT || cfg.timeout > MAX_TIMEOUT ||
      cfg.stall_timeout > MAX_TIMEOUT)
    fatal ("configuration: timeout out of range");

  map_data_area ();
  describe_export (&f, &cfg);
  fetcher_cache_take (&cfg);
  take_data_pipe (&f);
  take_ca_bundle (&cfg);
  backend = f.kind == URL_FILE ? &fetcher_file_backend : &fetcher_http_backend;
  debug ("export \"%s\": %s backend for %s", f.export_name, backend->name, f.log_url);
  if (backend->init)
    backend->init (&f);

  /* A file: export is "opened" before the sandbox: the supervisor passed
   * the image's descriptor, and checking it reads no untrusted byte (no
   * path is left reachable under Landlock).  A network export is opened
   * after: its first reply is the web server's, which is untrusted. */
  if (!backend->open_reads_untrusted)
    open_or_exit (&f, backend);
  fetcher_sandbox (&f);
  /* The front-end lets the next fetcher start now (limits-clients.h). */
  send_control (&(struct ipc_header) { .type = IPC_FETCHER_STARTED }, NULL);
  if (backend->open_reads_untrusted)
    open_or_exit (&f, backend);

#ifdef NBDCURLD_TEST_HOOKS
  /* Test binary only (tests/hooks/sandbox-probe.c): try what the sandbox must
   * refuse, from inside the real fetcher. */
  {
    const char *probe = strstr (cfg.url, "#probe=");
    if (probe)
      sandbox_probe (probe + strlen ("#probe="));
  }
#endif
  debug ("export \"%s\" open: %" PRIu64 " bytes%s", f.export_name, f.size,
         (f.can & FETCHER_CAN_WRITE) ? ", writable" : ", read-only");
  send_opened (f.size, f.can, f.piped_read_max);

  backend->serve (&f);
  debug ("the front-end closed the connection; exiting");
  /* Without the libraries' exit handlers (OpenSSL's and libcurl's
   * clean-up, 35 libraries' destructors): they only free memory that the
   * exit frees anyway, and are a large part of a short connection's CPU.
   * Nothing is left to write: log lines are unbuffered, a file: export's
   * writes went out with pwrite. */
  fflush (NULL);
  _exit (EXIT_SUCCESS);
}
