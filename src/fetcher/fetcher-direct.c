/*
 * fetcher-direct.c: range reads of http and https URLs without libcurl's
 * transfers: plain-http bodies spliced from the server's socket into the
 * data pipe (larger ones received into the data area), https bodies
 * decrypted into the data area.
 *
 * Why: libcurl reads every body into its own buffer, and the data area
 * path then copies it again; for a sequential copy those copies were a
 * quarter of all CPU time on a two-CPU machine (README, Performance).
 * Here the kernel moves the body's pages from the TCP socket into the
 * pipe, and the front-end moves them on into the client's socket.
 *
 * What: libcurl still opens the export (redirects, HEAD, probe) and pins
 * the URL, its size and validators.  Then, if the pinned URL is plain
 * http, carries no credentials and the supervisor gave a data pipe, each
 * slot of the transfer pool keeps its own kept-alive TCP connection to
 * the address libcurl used, and sends
 *     GET path HTTP/1.1, Host, User-Agent, Range, If-Match or
 *     If-Unmodified-Since
 * The reply's header section is read into one bounded buffer and parsed
 * line by line; the checker of libcurl's replies decides whether it is
 * the range asked for (web-reply.c), and on top of that Content-Length
 * must be exactly the range's length.  Anything this
 * parser does not handle (chunked or other transfer codings, no
 * Content-Length, obsolete line folding, bare LF line ends, a header
 * section over MAX_RESPONSE_HEADER_BYTES) sends the read and every later
 * one back to libcurl, which handles them: the direct path only ever takes
 * the plain case.
 *
 * The pipe has one writer at a time: reads whose headers passed wait in
 * an owner queue, and the owner splices its body part by part (a large
 * part only once all of it has arrived, and the bodies of the others
 * wait in their sockets, made big enough for them: see "Sizing"); each
 * part is announced to the front-end (fetcher_reply_piped) once all its
 * bytes are in the pipe.  If the body then fails, the part's bytes already in
 * the pipe are announced as discarded and the parts left fail with EIO, as
 * they would through libcurl.  A pipe slot holds one piece of the socket's
 * data however small, so a server sending tiny segments can fill the pipe
 * before a part is complete: then the read goes to libcurl, and after
 * MAX_PIPE_OVERFLOWS such reads every later one does.
 *
 * A read larger than the pipe takes (fetcher_pipe_read_max) goes direct
 * too, with its body received into its parts' places in the data area as
 * it comes (tls_receive_body, over recv here): no owner queue, so it
 * never holds the pipe.  Such reads are coalesced only with each other.
 *
 * https URLs go direct too (see "TLS" below): each slot's connection is
 * made by libcurl (CURLOPT_CONNECT_ONLY), with every option the open
 * had, so certificate, host name, pinning and client-key checks are
 * libcurl's own; the requests and replies above then go over it
 * (curl_easy_send and curl_easy_recv), and each body is decrypted
 * straight into its reads' places in the data area, with no pipe and
 * no owner queue: every connection receives at once.
 */
#include <arpa/inet.h>
#include <linux/sock_diag.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "clock.h"
#include "config-build.h"
#include "fetcher-http.h"
#include "fetcher-wire.h"
#include "ipc-messages.h"
#include "limits-direct.h"
#include "limits-reply.h"
#include "limits-strings.h"
#include "limits-transfer.h"
#include "web-reply.h"
#include "wire.h"

/* Bytes asked for by each read of a reply's header section. */
#define HEADER_READ_STEP 1024
/* Room kept free in a socket that waits for a part (socket_can_hold):
 * a segment or two of loopback's. */
#define HOLD_SLACK_BYTES (128 * 1024)

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

static struct {
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
  /* Sizing to the link (see "Sizing" below). */
  uint64_t rtt_us;                  /* the round trip: 0, none measured yet */
  uint64_t rtt_min_now, rtt_min_last;  /* the least of this epoch, the last */
  unsigned rtt_samples;             /* in this epoch */
  uint64_t rate;                    /* bytes a second into the pipe, 0: none */
  uint64_t rate_start_us, rate_bytes;  /* this rate window: 0, none open */
  uint32_t ahead;                   /* the look-ahead: bytes requested and not
                                       yet in the pipe, at most */
  uint32_t sock_hold;               /* the most a socket holds unread
                                       (SO_RCVLOWAT's cap), 0: not known */
} direct;

static void start_waiting (struct transfer *t);
static void step (struct transfer *t);
static void tls_receive_body (struct transfer *t);
static bool set_wake_mark (struct transfer *t, size_t bytes);
static size_t body_available (const struct transfer *t);
static void sizing_init (void);

static uint64_t
clock_ms (void)
{
  return monotonic_ms ();
}

/* Round trips on a LAN are tens of microseconds. */
static uint64_t
clock_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* ---- Preparing ---- */

/* Visible ASCII only: nothing that could end a request line or header. */
static bool
is_visible_ascii (const char *s)
{
  for (; *s; s++)
    if (*s <= 0x20 || *s >= 0x7f)
      return false;
  return true;
}

/* Why the pinned URL cannot be read directly, or NULL if it can; builds
 * the request head when it can. */
static const char *
build_request_head (void)
{
  CURLU *u = curl_url ();
  char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *query = NULL;
  char *user = NULL, *password = NULL;
  const char *why = NULL;

  if (u == NULL)
    fatal ("libcurl: out of memory");
  if (curl_url_set (u, CURLUPART_URL, http.range_url, 0) != CURLUE_OK ||
      curl_url_get (u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
      curl_url_get (u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
      curl_url_get (u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
    why = "libcurl cannot take the URL apart";
  else if (strcasecmp (scheme, "http") != 0 && strcasecmp (scheme, "https") != 0)
    why = "neither http nor https";
  else if (curl_url_get (u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
           curl_url_get (u, CURLUPART_PASSWORD, &password, 0) == CURLUE_OK ||
           (http.range_same_origin && http.f->cfg->auth_user[0] != '\0'))
    why = "credentials (libcurl sends them)";
  else {
    (void) curl_url_get (u, CURLUPART_PORT, &port, 0);    /* only if given */
    (void) curl_url_get (u, CURLUPART_QUERY, &query, 0);
    if (!is_visible_ascii (host) || !is_visible_ascii (path) ||
        (port && !is_visible_ascii (port)) || (query && !is_visible_ascii (query)))
      why = "the URL has bytes that need encoding";
    else if (asprintf (&direct.request_head,
                       "GET %s%s%s HTTP/1.1\r\n"
                       "Host: %s%s%s\r\n"
                       "User-Agent: %s\r\n"
                       "Accept: */*\r\n"
                       "%s%s%s",
                       path, query ? "?" : "", query ? query : "",
                       host, port ? ":" : "", port ? port : "",
                       http.f->cfg->user_agent[0] != '\0' ? http.f->cfg->user_agent
                                                         : "nbdcurld/" PACKAGE_VERSION,
                       http.precondition ? http.precondition : "",
                       http.precondition ? "\r\n" : "",
                       http.read_headers ? http.read_headers : "") == -1)
      fatal_errno ("malloc");
  }
  curl_free (scheme);
  curl_free (host);
  curl_free (port);
  curl_free (path);
  curl_free (query);
  curl_free (user);
  curl_free (password);
  curl_url_cleanup (u);
  return why;
}

/* The address libcurl's connection for the open went to (after any
 * redirect, with --resolve applied): range reads go to the same one. */
static const char *
take_address (struct transfer *opened)
{
  const char *unix_path = http.f->cfg->unix_socket_path;
  char *ip = NULL;
  long port = 0;

  /* unix-socket-path=: libcurl connected there, whatever the host. */
  if (unix_path[0] != '\0') {
    struct sockaddr_un *sun = (struct sockaddr_un *) &direct.addr;
    memset (&direct.addr, 0, sizeof direct.addr);
    sun->sun_family = AF_UNIX;
    /* config.c bounds it by MAX_UNIX_SOCKET_PATH, < sizeof sun_path. */
    static_assert (MAX_UNIX_SOCKET_PATH < sizeof sun->sun_path, "room for the path");
    memcpy (sun->sun_path, unix_path, strlen (unix_path));
    direct.addr_len = sizeof *sun;
    return NULL;
  }
  if (curl_easy_getinfo (opened->easy, CURLINFO_PRIMARY_IP, &ip) != CURLE_OK ||
      ip == NULL ||
      curl_easy_getinfo (opened->easy, CURLINFO_PRIMARY_PORT, &port) != CURLE_OK ||
      port <= 0 || port > 65535)
    return "libcurl did not say where it connected";
  memset (&direct.addr, 0, sizeof direct.addr);
  {
    struct sockaddr_in *sin = (struct sockaddr_in *) &direct.addr;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &direct.addr;
    if (inet_pton (AF_INET, ip, &sin->sin_addr) == 1) {
      sin->sin_family = AF_INET;
      sin->sin_port = htons ((uint16_t) port);
      direct.addr_len = sizeof *sin;
    }
    else if (inet_pton (AF_INET6, ip, &sin6->sin6_addr) == 1 &&
             !IN6_IS_ADDR_LINKLOCAL (&sin6->sin6_addr)) {   /* needs a scope */
      sin6->sin6_family = AF_INET6;
      sin6->sin6_port = htons ((uint16_t) port);
      direct.addr_len = sizeof *sin6;
    }
    else
      return "an address it cannot reach again";
  }
  return NULL;
}

/* Why a proxy, an HTTP version or cookies keep reads off the direct path, or
 * NULL.  Direct requests are HTTP/1.1 in origin form to the address
 * libcurl used (or its unix-socket-path=): through a proxy they would
 * need the absolute form and the proxy's credentials (reads through a
 * proxy cost the copy the direct path saves), and 1.0 or 2 must be
 * spoken as asked. */
static const char *
route_not_direct (const struct fetcher_config *cfg, bool tls)
{
  if (cfg->proxy[0] != '\0')
    return "through a proxy";
  /* The cookie engine chooses each request's cookies (domain, path,
   * expiry, secure) and takes new ones from every reply: only libcurl
   * does both. */
  if (cfg->flags & FETCHER_COOKIE_ENGINE)
    return "cookiefile= turns on libcurl's cookie engine";
  switch (cfg->http_version) {
  case FETCHER_HTTP_NONE: case FETCHER_HTTP_1_1: case FETCHER_HTTP_2TLS:
    /* Plain http: HTTP/1.1.  https: HTTP/2 if the server offers it, which
     * tls_chose_http2 finds out. */
    (void) tls;
    return NULL;
  default:
    return "http-version= asks for other than HTTP/1.1";
  }
}

/* ---- TLS ----
 *
 * An https read's connection is a libcurl handle of its own, made with
 * CURLOPT_CONNECT_ONLY from a copy of the open's handle: the same CA,
 * host name check, pinned key, client certificate, TLS versions and
 * ciphers, the same connection rules (fetcher_open_socket), so whatever
 * libcurl refuses for a libcurl read it refuses here.  It offers only
 * http/1.1 by ALPN.  Connecting runs in a multi handle of its own
 * (t->tls_multi), polled with the direct reads: not the reads' multi
 * handle, which allows only --connections connections; and not one
 * shared by the slots, since libcurl takes a connection in its cache
 * that has bytes to read for a dead one, and closes it when another
 * connects (seen: replies cut off at once).  Then requests
 * go out with curl_easy_send and replies come in with curl_easy_recv,
 * which decrypts into the buffer it is given: the header section into
 * the slot's header buffer, the body into its reads' places in the data
 * area.  libcurl's own receive buffer, and the copy out of it, are not
 * used.  With OpenSSL (Debian's libcurl), each connection reads ahead
 * DIRECT_TLS_READ_BUFFER bytes of records at a time; safe here, and not
 * for libcurl's own transfers (libcurl 7.88 would wait on the socket while
 * records sit read in OpenSSL's buffer), because curl_easy_recv is called
 * until it says CURLE_AGAIN before the socket is waited on. */

static bool
tls_read_ahead_possible (void)
{
  const char *v = curl_version_info (CURLVERSION_NOW)->ssl_version;

  /* The callback gets the TLS library's own context: only OpenSSL's is an
   * SSL_CTX (libcurl with OpenSSL names one TLS library, or several
   * separated by spaces when it can choose: then not this one). */
  return v != NULL && strncmp (v, "OpenSSL/", 8) == 0 && strchr (v, ' ') == NULL;
}

static CURLcode
tls_context (CURL *easy, void *ssl_ctx, void *arg)
{
  (void) easy;
  (void) arg;
  SSL_CTX_set_read_ahead ((SSL_CTX *) ssl_ctx, 1);
  SSL_CTX_set_default_read_buffer_len ((SSL_CTX *) ssl_ctx, DIRECT_TLS_READ_BUFFER);
  return CURLE_OK;
}


/* Start t's connection: a copy of the open's handle (every option it
 * had), made to connect only, with what points at a slot pointing at
 * t.  Returns 0, or -1 with errno set. */
static int
tls_connect (struct transfer *t)
{
  CURL *easy = curl_easy_duphandle (http.pool[0].easy);
  CURLM *multi = curl_multi_init ();
  bool ok;

  if (easy == NULL || multi == NULL) {
    curl_easy_cleanup (easy);
    curl_multi_cleanup (multi);
    errno = ENOMEM;
    return -1;
  }
  t->errbuf[0] = t->refused[0] = '\0';
  ok = curl_easy_setopt (easy, CURLOPT_CONNECT_ONLY, 1L) == CURLE_OK &&
    curl_easy_setopt (easy, CURLOPT_HTTP_VERSION, (long) CURL_HTTP_VERSION_1_1) == CURLE_OK &&
    curl_easy_setopt (easy, CURLOPT_PRIVATE, t) == CURLE_OK &&
    curl_easy_setopt (easy, CURLOPT_OPENSOCKETDATA, t) == CURLE_OK &&
    curl_easy_setopt (easy, CURLOPT_ERRORBUFFER, t->errbuf) == CURLE_OK &&
    curl_easy_setopt (easy, CURLOPT_HEADERDATA, t) == CURLE_OK &&
    curl_easy_setopt (easy, CURLOPT_WRITEDATA, t) == CURLE_OK &&
    /* The connect deadline is this file's (set_deadline). */
    curl_easy_setopt (easy, CURLOPT_TIMEOUT_MS, 0L) == CURLE_OK &&
    (!tls_read_ahead_possible () ||
     curl_easy_setopt (easy, CURLOPT_SSL_CTX_FUNCTION, tls_context) == CURLE_OK) &&
    curl_multi_add_handle (multi, easy) == CURLM_OK;
  if (!ok) {
    curl_easy_cleanup (easy);
    curl_multi_cleanup (multi);
    errno = ENOMEM;
    return -1;
  }
  t->tls = easy;
  t->tls_multi = multi;
  t->sock = -1;               /* polled through tls_multi until up */
  return 0;
}

/* Why t's connection failed to come up: libcurl's words, or the
 * connection rules' (fetcher-connect.c). */
static const char *
tls_problem (struct transfer *t, CURLcode rc)
{
  if (t->refused[0] != '\0')
    return t->refused;
  return certificate_problem (t, rc, t->errbuf[0] != '\0' ? t->errbuf
                                                          : curl_easy_strerror (rc));
}

/* https: libcurl speaks HTTP/2 to a server that offers it (ALPN), unless
 * http-version=1.1; then its reads multiplex one connection, and stay
 * libcurl's.  The open's reply says what the server chose. */
static const char *
tls_http2_chosen (struct transfer *opened)
{
  long version = 0;

  if (curl_easy_getinfo (opened->easy, CURLINFO_HTTP_VERSION, &version) != CURLE_OK)
    return "libcurl did not say which HTTP version the open spoke";
  return version == CURL_HTTP_VERSION_1_1 ? NULL
    : "the server speaks HTTP/2 (http-version=1.1 sends reads direct)";
}

void
direct_prepare (struct transfer *opened)
{
  const char *why;

  http.direct = false;
  direct.tls = strncasecmp (http.range_url, "https:", 6) == 0;
  why = !http.range_is_http ? "FTP" : route_not_direct (http.f->cfg, direct.tls);
  if (why == NULL && !direct.tls && (fetcher_pipe_fd < 0 || fetcher_pipe_read_max == 0))
    why = "no data pipe";
  if (why == NULL && direct.tls)
    why = tls_http2_chosen (opened);
  if (why == NULL && (why = build_request_head ()) == NULL && !direct.tls)
    why = take_address (opened);
  if (why != NULL) {
    debug ("export \"%s\": reads go through libcurl (%s)", http.f->export_name, why);
    return;
  }
  direct.prepared = true;
  http.direct = true;
  sizing_init ();
  if (direct.tls)
    debug ("export \"%s\": reads go direct over TLS, into the data area%s",
           http.f->export_name, tls_read_ahead_possible () ? " (OpenSSL read-ahead)" : "");
  else
    debug ("export \"%s\": reads of up to %" PRIu32 " bytes go direct, spliced "
           "into the data pipe", http.f->export_name, fetcher_pipe_read_max);
}

void
direct_headers_changed (void)
{
  const char *why;

  if (!http.direct)
    return;
  explicit_bzero (direct.request_head, strlen (direct.request_head));  /* tokens */
  free (direct.request_head);
  direct.request_head = NULL;
  why = build_request_head ();
  if (why != NULL) {
    http.direct = false;
    debug ("export \"%s\": reads go through libcurl from now on (%s)",
           http.f->export_name, why);
  }
}

/* ---- Connections ---- */

static void
close_connection (struct transfer *t)
{
  if (t->tls != NULL) {
    /* Taken out of its multi handle, a connect-only handle's connection
     * is closed at once. */
    (void) curl_multi_remove_handle (t->tls_multi, t->tls);
    curl_easy_cleanup (t->tls);
    curl_multi_cleanup (t->tls_multi);
    t->tls = NULL;
    t->tls_multi = NULL;
  }
  else if (t->sock >= 0)
    close (t->sock);
  t->sock = -1;
  t->sock_reused = false;
}

/* The next wait on the server may last this long, and never past the
 * read's --timeout. */
static void
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
static void
start_window (struct transfer *t)
{
  t->window_bytes = 0;
  /* Bytes already here arrived before this window. */
  t->window_here = t->dstate == DIRECT_QUEUED || t->dstate == DIRECT_BODY
    ? body_available (t) : 0;
  set_deadline (t, fetcher_stall_timeout (http.f->cfg));
}

/* A kept connection may be used again only if the server has neither
 * closed it nor sent anything unasked. */
static bool
connection_usable (struct transfer *t)
{
  char byte;
  ssize_t r;

  if (t->tls != NULL) {
    /* TLS records the server may send unasked (TLS 1.3 session tickets)
     * are taken here, inside OpenSSL; a byte of data, or the end, means
     * the connection cannot carry another reply. */
    size_t n = 0;
    return curl_easy_recv (t->tls, &byte, 1, &n) == CURLE_AGAIN;
  }
  r = recv (t->sock, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* Acknowledge what the server sent at once, not after the delayed-ACK
 * timer.  A body waits in its socket, unread, while another read owns the
 * data pipe; Linux then delays its ACKs (reading would open the window,
 * so it waits for that), the server's loss probe fires first and resends,
 * and the body comes on only after that round: 20 to 100 ms stalls of a
 * whole queue of reads (fio, 256 KiB sequential reads at QD16 against
 * nginx on loopback: p99 47-75 ms before, 12-14 ms with this; nbdkit curl
 * 19-26 ms in the same runs).  Quick-ACK mode lasts a few segments, so it
 * is set again each time the socket is used (TCP_QUICKACK(7)). */
static void
quick_ack (struct transfer *t)
{
  int one = 1;

  if (direct.addr.ss_family != AF_UNIX && !direct.tls)
    (void) setsockopt (t->sock, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}

/* What curl_easy_send and curl_easy_recv did, as send(2) and recv(2)
 * say it: -1 with errno EAGAIN when the connection must be waited on;
 * libcurl's failures are EIO, with its words in t->errbuf. */
static ssize_t
tls_result (struct transfer *t, CURLcode rc, size_t n)
{
  if (rc == CURLE_OK)
    return (ssize_t) n;
  if (rc == CURLE_AGAIN)
    errno = EAGAIN;
  else {
    if (t->errbuf[0] == '\0')
      snprintf (t->errbuf, sizeof t->errbuf, "%s", curl_easy_strerror (rc));
    errno = EIO;
  }
  return -1;
}

static ssize_t
conn_send (struct transfer *t, const void *buf, size_t len)
{
  size_t n = 0;
  CURLcode rc;

  if (!direct.tls)
    return send (t->sock, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
  rc = curl_easy_send (t->tls, buf, len, &n);
  /* libcurl 7.88 says "would block" as CURLE_OK with nothing sent. */
  if (rc == CURLE_OK && n == 0 && len > 0)
    rc = CURLE_AGAIN;
  return tls_result (t, rc, n);
}

static ssize_t
conn_recv (struct transfer *t, void *buf, size_t len)
{
  size_t n = 0;
  CURLcode rc;

  if (!direct.tls)
    return recv (t->sock, buf, len, MSG_DONTWAIT);
  rc = curl_easy_recv (t->tls, buf, len, &n);   /* before n is read */
  return tls_result (t, rc, n);
}

/* The words for a failed conn_send or conn_recv. */
static const char *
conn_error (const struct transfer *t, int e)
{
  return direct.tls && e == EIO && t->errbuf[0] != '\0' ? t->errbuf : strerror (e);
}

static int
open_connection (struct transfer *t)
{
  const struct fetcher_config *cfg = http.f->cfg;
  int one = 1;

  if (direct.tls) {
    t->sock_reused = false;
    if (tls_connect (t) == -1)
      return -1;
    t->dstate = DIRECT_CONNECTING;
    set_deadline (t, cfg->connect_timeout ? cfg->connect_timeout : DEFAULT_CONNECT_TIMEOUT);
    return 0;
  }
  t->sock = socket (direct.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (t->sock == -1)
    return -1;
  t->sock_reused = false;
  /* As libcurl's own connections (transfer_setup): no Nagle delay on the
   * request, and keep-alive probes on a connection kept idle. */
  if (!(http.f->cfg->flags & FETCHER_NO_NODELAY))
    (void) setsockopt (t->sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!(http.f->cfg->flags & FETCHER_NO_KEEPALIVE))
    (void) setsockopt (t->sock, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  if (connect (t->sock, (struct sockaddr *) &direct.addr, direct.addr_len) == -1 &&
      errno != EINPROGRESS) {
    int e = errno;
    close_connection (t);
    errno = e;
    return -1;
  }
  t->dstate = DIRECT_CONNECTING;
  set_deadline (t, cfg->connect_timeout ? cfg->connect_timeout : DEFAULT_CONNECT_TIMEOUT);
  return 0;
}

/* ---- Sizing to the link ----
 *
 * A distant server (a CDN, an object store) answers each request a round
 * trip late and often caps each TCP connection's rate: a few large
 * ranges on a few connections then leave the link mostly idle (issue 13:
 * with 20 ms and 50 MB/s per connection, 4 of 33 connections were
 * receiving).  The reads sized here are ones the client already asked for
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
 * A near server keeps ranges of up to COALESCE_MAX_BYTES, as measured best
 * on a LAN (README, Performance).
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

static void
sizing_init (void)
{
  direct.rtt_us = 0;
  direct.rtt_min_now = direct.rtt_min_last = UINT64_MAX;
  direct.rtt_samples = 0;
  direct.rate = 0;
  direct.rate_start_us = 0;
  direct.ahead = DIRECT_AHEAD_BYTES;
}

static void
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

/* A new rate window, when direct reads start after none ran: the time
 * between is not the link's. */
static void
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
static void
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
   * connection could take seconds (8 MiB at 2 MB/s), while a few more
   * requests on a LAN cost next to nothing. */
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
static void
hold_body (struct transfer *t)
{
  /* Twice the body: the kernel's room for a mark is an estimate of its
   * buffers' overhead, and a socket that cannot take all of a part it
   * waits for is left waiting (measured on loopback: a buffer made for
   * exactly 256 KiB closed its window at 254.5 KiB).  length <=
   * COALESCE_MAX_BYTES: no overflow. */
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

/* ---- Ending a read ---- */

static void
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

/* This attempt of the read failed: the bytes of the current part already
 * in the pipe are dropped (IPC_PIPE_DISCARD: the front-end throws them
 * away, so a retry sends the part whole), then either the read waits to
 * be tried again (retry_decide) or the parts left get EIO. */
static void
direct_fail_cause (struct transfer *t, enum retry_cause cause, const char *why)
{
  if (t->dstate == DIRECT_BODY && t->part_received > 0 && !t->to_area)
    fetcher_pipe_discard ((uint32_t) t->part_received);
  if ((t->dstate == DIRECT_QUEUED || t->dstate == DIRECT_BODY) && !t->to_area)
    owner_queue_remove (t);
  close_connection (t);
  /* 401, 403 with scripts: the read goes again with renewed values. */
  if (script_park_refused (t)) {
    release (t);
    return;
  }
  if (retry_decide (t, cause, why))
    return;                     /* it waits, holding its slot */
  fail_read (t, why);
  release (t);
}

PRINTF_LIKE (3, 4) static void
direct_failf (struct transfer *t, enum retry_cause cause, const char *fmt, ...)
{
  char why[PROBLEM_MAX];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (why, sizeof why, fmt, ap);
  va_end (ap);
  direct_fail_cause (t, cause, why);
}

/* May a failed system call on the server's connection pass?  Not when
 * the sandbox refused it (EACCES, EPERM: a port the URL did not name),
 * nor when this process is out of descriptors or memory. */
static enum retry_cause
errno_cause (int e)
{
  return e == EACCES || e == EPERM || e == EMFILE || e == ENFILE || e == ENOMEM
    ? RETRY_CAUSE_FINAL : RETRY_CAUSE_TRANSIENT;
}

/* The parts left go to libcurl.  So does every later read, unless only
 * this one read did not fit (just_this_read). */
static void
direct_to_libcurl (struct transfer *t, const char *why, bool just_this_read)
{
  if (just_this_read)
    debug ("export \"%s\": a read goes through libcurl: %s", http.f->export_name, why);
  else if (http.direct)
    debug ("export \"%s\": reads go through libcurl from now on: %s",
           http.f->export_name, why);
  if (!just_this_read)
    http.direct = false;
  if (t->dstate == DIRECT_BODY && t->part_received > 0 && !t->to_area)
    fetcher_pipe_discard ((uint32_t) t->part_received);
  if ((t->dstate == DIRECT_QUEUED || t->dstate == DIRECT_BODY) && !t->to_area)
    owner_queue_remove (t);
  close_connection (t);
  /* Keep the parts not answered; their bytes start where the answered
   * ones end. */
  trim_answered_parts (t);
  /* Only this read goes to libcurl: the parts after it go back to the
   * queue, in order, and on through the pipe.  (libcurl writes into the
   * data area; the fewer reads it takes, the less memory is touched.) */
  while (just_this_read && t->nparts > 1 && http.queue_len < QUEUE_SIZE) {
    unsigned last = t->nparts - 1;
    struct fetcher_request req = {
      .type = IPC_READ, .id = t->parts[last].id, .data = t->parts[last].data,
      .length = t->parts[last].length,
      .offset = t->offset + t->length - t->parts[last].length,
      .auth_retried = t->parts[last].auth_retried,
    };
    queue_push_front (&req);
    t->length -= t->parts[last].length;   /* the other parts remain */
    t->nparts--;
  }
  /* fetcher-http.c starts it, with a reply of its own to check. */
  t->dstate = DIRECT_HANDED;
}

/* This server's replies are not the plain case (see the top of the
 * file): this read and every later one go to libcurl. */
static void
direct_give_up (struct transfer *t, const char *why)
{
  direct_to_libcurl (t, why, false);
}

/* ---- The request ---- */

static void
start_request (struct transfer *t)
{
  char range[80];
  size_t head_len = strlen (direct.request_head);
  int n = snprintf (range, sizeof range, "Range: bytes=%" PRIu64 "-%" PRIu64 "\r\n\r\n",
                    t->offset, t->offset + t->length - 1);

  free (t->request);
  t->request = malloc (head_len + (size_t) n);
  if (t->request == NULL)
    fatal_errno ("malloc");
  memcpy (t->request, direct.request_head, head_len);
  memcpy (t->request + head_len, range, (size_t) n);
  t->request_len = head_len + (size_t) n;
  t->request_sent = 0;
  if (fetcher_tracing ())
    fetcher_trace_block ('>', t->request, t->request_len);
  t->head_len = t->body_pos = t->head_scanned = 0;
  t->conn_close = false;        /* of this reply, when it says so */
  reply_begin (t);              /* nothing of an earlier attempt counts */
}

void
direct_start (struct transfer *t)
{
  unsigned i;

  for (i = 0; i < http.f->cfg->connections; i++)
    if (http.pool[i].direct)
      break;
  if (i == http.f->cfg->connections)
    rate_open ();               /* none ran: the time since is not the link's */
  t->direct = true;
  /* The parts are all of one kind (start_read): the first says which. */
  t->to_area = direct.tls || t->parts[0].length > fetcher_pipe_read_max;
  if (t->head == NULL) {
    /* Grown when a reply needs more (step): most header sections
     * fit, and sixteen slots' worth of 16 KiB would be touched memory. */
    t->head_cap = HEADER_READ_STEP;
    t->head = malloc (t->head_cap);
    if (t->head == NULL)
      fatal_errno ("malloc");
  }
  start_request (t);
  if (t->sock >= 0 && connection_usable (t)) {
    t->sock_reused = true;
    t->dstate = DIRECT_SENDING;
    start_window (t);
    return;
  }
  close_connection (t);
  if (open_connection (t) == -1)
    direct_failf (t, errno_cause (errno), "cannot connect to the web server: %s",
                  strerror (errno));
}

/* ---- The reply's header section ---- */

static bool
is_token_char (char c)
{
  /* strchr finds the terminating NUL too: a NUL byte is no token. */
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
    (c != '\0' && strchr ("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Does a comma-separated header value hold this token? */
static bool
value_has_token (const char *v, size_t len, const char *token)
{
  size_t tlen = strlen (token), i = 0;

  while (i < len) {
    size_t start;
    while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
      i++;
    start = i;
    while (i < len && v[i] != ',' && v[i] != ' ' && v[i] != '\t')
      i++;
    if (i - start == tlen && strncasecmp (v + start, token, tlen) == 0)
      return true;
  }
  return false;
}

enum parse_result { PARSE_OK, PARSE_FAIL, PARSE_GIVE_UP };

/* One header section, exactly len bytes ending in the blank line, read
 * through the bounded reader, its lines handed to the reply checker
 * (t->reply), but for those that frame the body, which are this parser's:
 * *length is the Content-Length or UINT64_MAX.  A problem is in
 * t->reply.problem (FAIL), or in *why (GIVE_UP: let libcurl handle it). */
static enum parse_result
parse_header_section (struct transfer *t, const uint8_t *data, size_t len,
                      uint64_t *length, const char **why)
{
  struct reader r;
  const uint8_t *line;
  size_t line_len, raw_len;
  unsigned major, minor;
  bool first = true;

  *length = UINT64_MAX;
  reader_init (&r, data, len);
  /* Each pass consumes one line including its CRLF. */
  while (reader_remaining (&r) > 0) {
    const uint8_t *rest = r.data + r.pos;
    const uint8_t *lf = memchr (rest, '\n', reader_remaining (&r));
    const char *s;

    if (lf == NULL)
      break;                    /* cannot happen: the section ends in CRLF */
    line_len = (size_t) (lf - rest) + 1;
    if (reader_get_span (&r, &line, line_len) == -1)
      break;
    if (line_len < 2 || line[line_len - 2] != '\r') {
      *why = "a line of the reply ends in a bare LF";
      return PARSE_GIVE_UP;
    }
    raw_len = line_len;
    line_len -= 2;              /* the CRLF */
    s = (const char *) line;
    if (first) {
      /* "HTTP/" DIGIT "." DIGIT SP 3DIGIT [SP reason] */
      first = false;
      if (line_len < 12 || memcmp (s, "HTTP/", 5) != 0 ||
          s[5] < '0' || s[5] > '9' || s[6] != '.' || s[7] < '0' || s[7] > '9' ||
          s[8] != ' ' || s[9] < '0' || s[9] > '9' || s[10] < '0' || s[10] > '9' ||
          s[11] < '0' || s[11] > '9' || (line_len > 12 && s[12] != ' ')) {
        char shown[64];
        size_t i, n = line_len < sizeof shown - 1 ? line_len : sizeof shown - 1;
        for (i = 0; i < n; i++)
          shown[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
        shown[n] = '\0';
        web_reply_problem (&t->reply, "the reply does not start with an HTTP "
                           "status line: \"%s\"", shown);
        return PARSE_FAIL;
      }
      major = (unsigned) (s[5] - '0');
      minor = (unsigned) (s[7] - '0');
      if (major != 1) {
        web_reply_problem (&t->reply, "the server answered in HTTP/%u.%u", major, minor);
        return PARSE_FAIL;
      }
      /* HTTP/1.0 keeps no connection unless asked, and we do not ask. */
      t->conn_close = minor == 0;
      if (!web_reply_line (&t->reply, s, raw_len))  /* a response begins */
        return PARSE_FAIL;
      continue;
    }
    if (line_len == 0)
      break;                    /* the blank line: the end */
    if (s[0] == ' ' || s[0] == '\t') {
      *why = "the reply folds a header over lines";
      return PARSE_GIVE_UP;
    }
    {
      const char *colon = memchr (s, ':', line_len);
      size_t name_len, value_len, i;
      const char *value;

      if (colon == NULL || colon == s) {
        web_reply_problem (&t->reply, "the reply has a header line without a name");
        return PARSE_FAIL;
      }
      name_len = (size_t) (colon - s);
      for (i = 0; i < name_len; i++)
        if (!is_token_char (s[i])) {
          web_reply_problem (&t->reply, "the reply has a header name with a "
                             "forbidden byte");
          return PARSE_FAIL;
        }
      value = header_value (s, line_len, name_len, &value_len);
      if (name_len == 14 && strncasecmp (s, "Content-Length", 14) == 0) {
        uint64_t v;
        if (!parse_decimal (value, value_len, &v)) {
          *why = "the reply's Content-Length is not a number of 1 to 19 digits";
          return PARSE_GIVE_UP;
        }
        if (*length != UINT64_MAX && *length != v) {
          web_reply_problem (&t->reply, "the reply has two different "
                             "Content-Length headers");
          return PARSE_FAIL;
        }
        *length = v;
      }
      else if (name_len == 17 && strncasecmp (s, "Transfer-Encoding", 17) == 0) {
        *why = "the reply has a Transfer-Encoding";
        return PARSE_GIVE_UP;
      }
      else if (name_len == 10 && strncasecmp (s, "Connection", 10) == 0) {
        if (value_has_token (value, value_len, "close"))
          t->conn_close = true;
      }
      else if (!web_reply_line (&t->reply, s, raw_len))
        return PARSE_FAIL;
    }
  }
  return PARSE_OK;
}

/* Find the end of the header section in head[0..head_len): the offset
 * just past its empty line, or 0.  An empty line ending in a bare LF ends
 * it too, so that a server using them is told apart (the parser leaves
 * it to libcurl) instead of waited for. */
static size_t
header_section_end (struct transfer *t)
{
  size_t i;

  /* From where the last search stopped (less the two bytes an end can
   * span), so a server sending a byte at a time costs linear work. */
  for (i = t->head_scanned > 2 ? t->head_scanned - 2 : 1; i < t->head_len; i++)
    if (t->head[i] == '\n' &&
        (t->head[i - 1] == '\n' ||
         (i >= 2 && t->head[i - 1] == '\r' && t->head[i - 2] == '\n')))
      return i + 1;
  t->head_scanned = t->head_len;
  return 0;
}

static void
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

/* A complete header section is in head[0..end).  Returns true if the
 * read goes on (to the owner queue, or reading the next section). */
static bool
headers_done (struct transfer *t, size_t end)
{
  uint64_t length;
  const char *why = NULL;

  switch (parse_header_section (t, t->head, end, &length, &why)) {
  case PARSE_FAIL:
    direct_fail_cause (t, RETRY_CAUSE_REPLY, t->reply.problem);
    return false;
  case PARSE_GIVE_UP:
    direct_give_up (t, why);
    return false;
  case PARSE_OK:
    break;
  }
  if (web_reply_interim (&t->reply)) {
    /* The real reply follows (the checker counted this one). */
    memmove (t->head, t->head + end, t->head_len - end);   /* end <= head_len */
    t->head_len -= end;
    t->head_scanned = 0;
    return true;
  }
  if (!web_reply_check (&t->reply)) {
    direct_fail_cause (t, RETRY_CAUSE_REPLY, t->reply.problem);
    return false;
  }
  rtt_sample (clock_us () - t->sent_us);
  if (length == UINT64_MAX) {
    direct_give_up (t, "a 206 reply without Content-Length");
    return false;
  }
  if (length != t->length) {
    direct_failf (t, RETRY_CAUSE_FINAL, "Content-Length %" PRIu64 " for a range of %"
                  PRIu32 " bytes",
                  length, t->length);
    return false;
  }
  t->body_pos = end;
  if (t->head_len - end > t->length) {
    direct_failf (t, RETRY_CAUSE_FINAL, "the server sent more than the %" PRIu32
                  " bytes asked for",
                  t->length);
    return false;
  }
  if (t->to_area) {
    /* Received at once, into the data area: no pipe to wait for. */
    t->dstate = DIRECT_BODY;
    return true;
  }
  owner_queue_add (t);
  if (direct.owner != t)
    start_waiting (t);
  return true;
}

/* ---- Moving a read on ---- */

/* Could the failure of a reused connection be the server closing it as
 * the request went out?  Then the read is tried once on a new one, as
 * every HTTP client does for a GET. */
static bool
retry_on_new_connection (struct transfer *t)
{
  if (!t->sock_reused || t->head_len > 0)
    return false;
  close_connection (t);
  start_request (t);
  if (open_connection (t) == -1) {
    direct_failf (t, errno_cause (errno), "cannot connect to the web server: %s",
                  strerror (errno));
    return true;
  }
  return true;
}

/* Is the pipe full of nothing but the owner's own unannounced bytes?
 * Then it can never drain (see the top of the file). */
static bool
pipe_stuck (const struct transfer *t)
{
  int queued = 0;

  if (ioctl (fetcher_pipe_fd, FIONREAD, &queued) == -1)
    return false;
  return queued >= 0 && (size_t) queued <= t->part_received;
}

/* Body bytes of t's read that are here: with its headers, and in its
 * socket. */
static size_t
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

static bool
part_here (const struct transfer *t)
{
  return body_available (t) >= t->parts[t->next_part].length - t->part_received;
}

/* A read waiting in the owner queue is woken (its socket polled for
 * POLLIN) only once its next part has all arrived: the socket's low-water
 * mark says so, and Linux makes room for that many bytes.  Set when it
 * starts to wait, back to 1 when it owns the pipe (splice ignores it, but
 * the owner is polled for any data).  Returns false if the kernel capped
 * the mark below the part (a tiny tcp_rmem maximum): then it is not
 * polled, as if the part could not be here before its turn. */
static bool
set_wake_mark (struct transfer *t, size_t bytes)
{
  int v = (int) bytes, got = 0;
  socklen_t len = sizeof got;

  if (setsockopt (t->sock, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v) == -1 ||
      getsockopt (t->sock, SOL_SOCKET, SO_RCVLOWAT, &got, &len) == -1)
    return false;
  return got == v;
}

static void
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
 * queued now (1.02 on loopback), or twice the bytes while nothing is
 * (a NIC's buffers of 2 or 4 KiB for 1448-byte segments), with a
 * margin. */
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

    if (t->body_pos < t->head_len) {
      /* Body bytes that came with the headers: copied, a few KiB at most. */
      size_t have = t->head_len - t->body_pos;
      r = write (fetcher_pipe_fd, t->head + t->body_pos, have < need ? have : need);
      if (r > 0)
        t->body_pos += (size_t) r;
    }
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
    if (r == -1) {
      struct pollfd pfd = { .fd = fetcher_pipe_fd, .events = POLLOUT };
      if (errno == EINTR)
        continue;
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
        return;                 /* the server: its socket is polled */
      if (pipe_stuck (t)) {
        /* The pieces are the socket's, as the server's segments arrived:
         * now and then even a well-behaved server's fill the pipe before a
         * read is complete (measured with nginx on loopback: 4 reads of
         * the 49000 in six 2 GiB copies).  Those reads go to libcurl; a server that does it
         * often is not worth the detours. */
        direct_to_libcurl (t, "the server's data came in pieces too small for "
                           "the data pipe",
                           ++direct.pipe_overflows <= MAX_PIPE_OVERFLOWS);
        return;
      }
      direct.owner_wants_pipe = true;
      return;
    }
    t->received += (size_t) r;
    t->part_received += (size_t) r;
    t->window_bytes += (size_t) r;
    if (t->part_received == t->parts[t->next_part].length) {
      fetcher_reply_piped (t->parts[t->next_part].id);
      /* Now, not when this loop next waits: the front-end drains the pipe
       * only as far as it was told, and the pipe holds few parts. */
      fetcher_flush_replies ();
      rate_count (t->parts[t->next_part].length);
      t->next_part++;
      t->part_received = 0;
    }
  }
  /* Done: every part announced.  The connection stays for the next read
   * unless the server said it closes it. */
  owner_queue_remove (t);
  if (t->conn_close)
    close_connection (t);
  release (t);
}

/* An https read takes its body as it comes, straight into its parts'
 * places in the data area (the bytes that came with the headers first),
 * and answers each part as soon as all of it is there: its reply passed
 * every check, and Content-Length is the range's length, so no byte
 * past the last part is ever taken.  Returns when it must wait, or has
 * ended. */
static void
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
    t->received += (size_t) r;
    t->part_received += (size_t) r;
    t->window_bytes += (size_t) r;
    if (t->part_received == t->parts[p].length) {
      fetcher_reply (t->parts[p].id, 0);
      rate_count (t->parts[p].length);
      t->next_part++;
      t->part_received = 0;
    }
  }
  if (t->conn_close)
    close_connection (t);
  release (t);
}

/* Has t's connection come up (or failed to)?  Then its read sends its
 * request. */
static void
tls_connect_step (struct transfer *t)
{
  CURLMsg *msg;
  int running, left;

  if (curl_multi_perform (t->tls_multi, &running) != CURLM_OK)
    return;                     /* out of memory: tried again next round */
  /* One handle: one message at most. */
  while (t->tls != NULL && (msg = curl_multi_info_read (t->tls_multi, &left)) != NULL) {
    CURL *easy = msg->easy_handle;
    CURLcode rc = msg->data.result;
    curl_socket_t sock = CURL_SOCKET_BAD;

    if (msg->msg != CURLMSG_DONE)
      continue;
    if (easy != t->tls)
      fatal ("internal error: a TLS connection without its read");
    if (rc == CURLE_OK &&
        (curl_easy_getinfo (easy, CURLINFO_ACTIVESOCKET, &sock) != CURLE_OK ||
         sock == CURL_SOCKET_BAD))
      rc = CURLE_COULDNT_CONNECT;
    if (rc != CURLE_OK) {
      /* A connection the redirect rules refused stays refused. */
      direct_failf (t, t->refused[0] != '\0' ? RETRY_CAUSE_FINAL
                    : fetcher_curl_cause (t->tls, rc),
                    "cannot connect to the web server: %s", tls_problem (t, rc));
      return;
    }
    t->sock = sock;
    t->dstate = DIRECT_SENDING;
    start_window (t);
    step (t);
    return;
  }
}

static bool
tls_connecting_slot (const struct transfer *t)
{
  return t->direct && t->tls != NULL && t->dstate == DIRECT_CONNECTING;
}

static void
tls_connects (void)
{
  unsigned i;

  for (i = 0; direct.tls && i < http.f->cfg->connections; i++)
    if (tls_connecting_slot (&http.pool[i]))
      tls_connect_step (&http.pool[i]);
}

static bool
tls_connecting (void)
{
  unsigned i;

  for (i = 0; direct.tls && i < http.f->cfg->connections; i++)
    if (tls_connecting_slot (&http.pool[i]))
      return true;
  return false;
}

/* The descriptors of t's multi handle, up to max, and how long it may
 * wait. */
static unsigned
tls_connect_fds (struct transfer *t, struct curl_waitfd *fds, unsigned max,
                 long *timeout_ms)
{
  fd_set r, w, e;
  int maxfd = -1, fd;
  unsigned n = 0;
  long soon = -1;

  FD_ZERO (&r);
  FD_ZERO (&w);
  FD_ZERO (&e);
  if (curl_multi_fdset (t->tls_multi, &r, &w, &e, &maxfd) != CURLM_OK)
    maxfd = -1;
  for (fd = 0; fd <= maxfd; fd++) {
    short events = (short) ((FD_ISSET (fd, &r) ? CURL_WAIT_POLLIN : 0) |
                            (FD_ISSET (fd, &w) ? CURL_WAIT_POLLOUT : 0));
    if (events == 0)
      continue;
    if (n == max) {
      soon = 10;                /* no room to wait on it: look again soon */
      break;
    }
    fds[n++] = (struct curl_waitfd) { .fd = fd, .events = events };
  }
  (void) curl_multi_timeout (t->tls_multi, timeout_ms);
  /* Nothing to wait on yet (a name being resolved): libcurl's advice is
   * to look again in a while. */
  if (maxfd == -1 && (*timeout_ms < 0 || *timeout_ms > 100))
    *timeout_ms = 100;
  if (soon >= 0 && (*timeout_ms < 0 || *timeout_ms > soon))
    *timeout_ms = soon;
  return n;
}

/* Run one read's state machine as far as it goes without waiting. */
static void
step (struct transfer *t)
{
  for (;;) {
    ssize_t r;

    switch ((enum direct_state) t->dstate) {
    case DIRECT_CONNECTING: {
      int err = 0;
      socklen_t len = sizeof err;
      struct pollfd pfd = { .fd = t->sock, .events = POLLOUT };
      if (direct.tls)
        return;                 /* its multi handle runs it (tls_connects) */
      if (poll (&pfd, 1, 0) != 1)
        return;
      if (getsockopt (t->sock, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
        err = errno;
      if (err != 0) {
        direct_failf (t, errno_cause (err), "cannot connect to the web server: %s",
                      strerror (err));
        return;
      }
      t->dstate = DIRECT_SENDING;
      start_window (t);
      break;
    }
    case DIRECT_SENDING:
      r = conn_send (t, t->request + t->request_sent, t->request_len - t->request_sent);
      if (r == -1) {
        int e = errno;
        if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR)
          return;
        if (!retry_on_new_connection (t))
          direct_failf (t, errno_cause (e), "sending the request: %s", conn_error (t, e));
        return;
      }
      t->request_sent += (size_t) r;
      if (t->request_sent == t->request_len) {
        t->dstate = DIRECT_HEADERS;     /* in the same window */
        quick_ack (t);                  /* the body may wait unread */
        hold_body (t);
        t->sent_us = clock_us ();
      }
      break;
    case DIRECT_HEADERS: {
      size_t end = header_section_end (t);
      if (end > 0) {
        if (fetcher_tracing ())
          fetcher_trace_block ('<', (const char *) t->head, end);
        if (!headers_done (t, end))
          return;
        if (t->dstate == DIRECT_QUEUED)
          return;               /* the owner queue runs it */
        continue;               /* an interim reply: the next section */
      }
      if (t->head_len == MAX_RESPONSE_HEADER_BYTES) {
        char why[80];
        snprintf (why, sizeof why, "a reply's headers are longer than %u bytes",
                  MAX_RESPONSE_HEADER_BYTES);
        direct_give_up (t, why);
        return;
      }
      if (t->head_len == t->head_cap) {
        size_t cap = MIN (2 * t->head_cap, MAX_RESPONSE_HEADER_BYTES);
        uint8_t *bigger = realloc (t->head, cap);
        if (bigger == NULL)
          fatal_errno ("realloc");
        t->head = bigger;
        t->head_cap = cap;
      }
      /* A little at a time: a reply's headers are a few hundred bytes,
       * and every body byte taken here is copied (and touches memory)
       * where a splice would not. */
      r = conn_recv (t, t->head + t->head_len,
                     MIN (HEADER_READ_STEP, t->head_cap - t->head_len));
      if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
      if (r <= 0) {
        int e = r == 0 ? 0 : errno;
        if (!retry_on_new_connection (t))
          direct_failf (t, RETRY_CAUSE_TRANSIENT,
                        "the server %s before its reply was complete",
                        e == 0 ? "closed the connection" : conn_error (t, e));
        return;
      }
      t->head_len += (size_t) r;
      break;
    }
    case DIRECT_BODY:
      if (t->to_area)
        tls_receive_body (t);
      return;                   /* else the owner queue runs it */
    case DIRECT_QUEUED:
      return;                   /* the owner queue runs these */
    case DIRECT_HANDED:
      return;                   /* libcurl's now */
    }
  }
}

/* Let the pipe's owners work, one after the other, until one must wait. */
static void
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

/* ---- The event loop's side ---- */

struct transfer *
direct_take_handed (void)
{
  unsigned i;

  if (!direct.prepared)
    return NULL;
  for (i = 0; i < http.f->cfg->connections; i++) {
    struct transfer *t = &http.pool[i];
    if (t->direct && t->dstate == DIRECT_HANDED) {
      t->direct = false;
      return t;
    }
  }
  return NULL;
}

bool
direct_pipe_idle (void)
{
  return direct.owner == NULL;
}

bool
direct_piped (void)
{
  return http.direct && !direct.tls;
}

bool
direct_takes (const struct fetcher_request *req)
{
  if (!http.direct)
    return false;
  if (direct.tls)
    return true;                /* into the data area, any size */
  /* Plain http: through the pipe if it takes the read, else into the
   * data area (recv). */
  return !(req->flags & REQ_NOT_PIPED);
}

bool
direct_to_area (const struct fetcher_request *req)
{
  return direct.tls || req->length > fetcher_pipe_read_max;
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
  for (i = 0; i < http.f->cfg->connections; i++) {
    struct transfer *t = &http.pool[i];
    bool ready = false;

    if (tls_connecting_slot (t)) {
      if (now >= t->deadline_ms)
        (void) deadline_passed (t, now);
      continue;
    }
    if (!t->direct || t->sock < 0)
      continue;
    if (t->dstate == DIRECT_QUEUED) {
      /* Polled only with its part all here (start_waiting): it may
       * go before an owner whose server is slow. */
      for (j = 0; j < n; j++)
        if (fds[j].fd == t->sock && fds[j].revents != 0) {
          if (!part_here (t)) {
            /* Readable without its part: the server closed or reset
             * the connection.  Polled no more (it would be ready for
             * ever); its turn finds out. */
            (void) set_wake_mark (t, 1);
            t->wake_on_part = false;
          }
          else
            run_owners ();
        }
      continue;
    }
    if (now >= t->deadline_ms &&
        !(t->dstate == DIRECT_BODY && direct.owner_wants_pipe && !t->to_area) &&
        !deadline_passed (t, now))
      continue;
    for (j = 0; j < n; j++)
      if (fds[j].fd == t->sock && fds[j].revents != 0)
        ready = true;
    if (ready) {
      if (t->dstate == DIRECT_BODY && !t->to_area)
        run_owners ();
      else
        step (t);
    }
  }
  for (j = 0; j < n; j++)
    if (fds[j].fd == fetcher_pipe_fd && fds[j].revents != 0)
      run_owners ();
  run_owners ();
}
