/*
 * fetcher-http.c: http, https, ftp and ftps exports, through libcurl.
 *
 * Open: a HEAD request (redirects followed), and when that does not settle
 * the size and range support, a probe "Range: bytes=0-0".  The final URL
 * of the redirects, the size and the object's validators (ETag,
 * Last-Modified) are pinned for the life of the connection.
 *
 * Serve: pipelined.  A curl multi handle runs up to cfg->connections
 * range transfers at once over kept-alive connections; the front-end's
 * socket is one more fd in curl_multi_poll, so new requests are read
 * while transfers run.  Requests beyond the pool wait in a queue; when
 * the queue is full the socket is not read, which pushes back on the
 * front-end.  Replies go back in completion order (ids identify them).
 *
 * The web server is untrusted.  A range reply is used only if it is a 206
 * whose Content-Range names exactly the requested bytes of an object of
 * the size seen at open, whose validators did not change, and whose body
 * is exactly as long as asked for.  The write callback refuses the first
 * byte of any other body (a 200 with the whole object is never
 * downloaded) and any byte past the requested length.  Anything else is
 * EIO for that request and a warning that says what was wrong.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "child-fds.h"
#include "clock.h"
#include "config-build.h"
#include "fetcher-http.h"
#include "fetcher-wire.h"
#include "ipc-messages.h"
#include "limits-reply.h"
#include "limits-transfer.h"
#include "limits-web.h"

static size_t
header_callback (char *buffer, size_t size, size_t nitems, void *opaque)
{
  struct transfer *t = opaque;
  size_t len;

  if (__builtin_mul_overflow (size, nitems, &len))
    return 0;
  /* FTP "headers" are the control connection's replies and libcurl's
   * made-up lines: nothing to check there.  A refused reply is not read
   * on (too many interim replies would hold the transfer). */
  if (t->parse_headers && !web_reply_line (&t->reply, buffer, len))
    return 0;
  return len;
}

/* The status of the final response: libcurl's reading for FTP (its
 * made-up codes are not checked), else the reply checker's. */
static long
response_status (struct transfer *t)
{
  long status = 0;

  if (t->parse_headers)
    return t->reply.status;
  if (curl_easy_getinfo (t->easy, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
    return 0;
  return status;
}

/* May the body be taken?  FTP has no headers to check: only the byte
 * count can be (finish_read). */
static bool
reply_ok (struct transfer *t)
{
  return !t->parse_headers || web_reply_check (&t->reply);
}

static size_t
write_callback (char *ptr, size_t size, size_t nmemb, void *opaque)
{
  struct transfer *t = opaque;
  size_t len, room;

  if (__builtin_mul_overflow (size, nmemb, &len))
    return 0;
  /* A HEAD has no body, but for FTP libcurl passes its made-up header
   * lines ("Content-Length: N") here too: nothing to keep. */
  if (t->mode == MODE_HEAD)
    return len;
  if (!reply_ok (t))
    return 0;                   /* abort: no byte of a wrong body is kept */
  room = t->length - t->received;           /* received <= length */
  if (len > room) {
    web_reply_problem (&t->reply, "the server sent more than the %" PRIu32
                       " bytes asked for", t->length);
    return 0;
  }
  t->received += len;
  if (t->nparts == 0) {
    if (len > 0)
      memcpy (t->data + t->received - len, ptr, len);
    if (t->prefetch != NULL)
      readahead_arrived (t->prefetch, t->received);
    return len;
  }
  /* Scatter over the parts; len <= room keeps it inside them.  Each pass
   * copies at least one byte or finishes a part. */
  {
    size_t left = len;
    while (left > 0) {
      unsigned p = t->next_part;          /* < nparts while bytes remain */
      size_t want = t->parts[p].length - t->part_received;
      size_t n = left < want ? left : want;
      memcpy (t->parts[p].data + t->part_received, ptr, n);
      ptr += n;
      left -= n;
      t->part_received += n;
      if (t->part_received == t->parts[p].length && p + 1 < t->nparts) {
        /* Complete and from a checked response: answer it now.  The last
         * part waits for the end of the transfer (finish_read), which
         * proves the body was exactly as long as asked. */
        fetcher_reply (t->parts[p].id, 0);
        t->next_part++;
        t->part_received = 0;
      }
    }
  }
  return len;
}

static void
transfer_reset (struct transfer *t, enum transfer_mode mode)
{
  t->mode = mode;
  t->id = 0;
  t->offset = 0;
  t->length = 0;
  t->data = NULL;
  t->nparts = t->next_part = 0;
  t->part_received = 0;
  t->received = 0;
  reply_begin (t);
  /* A direct read's connection (t->sock) stays for the next. */
  t->direct = false;
  t->request_len = t->request_sent = 0;
  t->head_len = t->body_pos = t->head_scanned = 0;
  t->conn_close = false;
  t->deadline_ms = 0;
  t->next_owner = NULL;
  t->prefetch = NULL;
  t->window_bytes = 0;
  t->limit_ms = UINT64_MAX;
  t->retries = 0;
  t->retry_at_ms = 0;
  t->retry_direct = false;
  t->errbuf[0] = '\0';
}

/* OpenSSL's words (in libcurl's "SSL certificate problem: ...") for a
 * chain that leads to no CA we trust: the CA is what is missing. */
static bool
issuer_unknown (const char *what)
{
  static const char *const words[] = {
    "unable to get local issuer certificate", "unable to get issuer certificate",
    "self-signed certificate", "self signed certificate", "unable to verify the first certificate",
  };
  size_t i;

  for (i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strstr (what, words[i]) != NULL)
      return true;
  return false;
}

const char *
certificate_problem (struct transfer *t, CURLcode rc, const char *what)
{
  if (rc != CURLE_PEER_FAILED_VERIFICATION || !issuer_unknown (what))
    return what;
  snprintf (t->message, sizeof t->message, "%s (give the CA that signed the server's "
            "certificate with --cainfo FILE or --capath DIR)", what);
  return t->message;
}

/* libcurl's own words about a failed transfer, and the system's error
 * when there was one: "Permission denied" on a connect is the sandbox
 * (Landlock) refusing a port the URL did not name, e.g. after a redirect. */
static const char *
curl_message (struct transfer *t, CURLcode rc)
{
  const char *what = t->errbuf[0] != '\0' ? t->errbuf : curl_easy_strerror (rc);
  long os_errno = 0;

  /* The redirect rules said no (fetcher-connect.c): their words, which
   * name the option that would allow it. */
  if (t->refused[0] != '\0')
    return t->refused;

  /* Nothing here passes libcurl a bad argument during a transfer: this
   * is its header store refusing a line of the reply, without a word. */
  if (rc == CURLE_BAD_FUNCTION_ARGUMENT && t->errbuf[0] == '\0')
    what = "the reply has a header line libcurl cannot take (folded onto "
           "nothing, or without a colon)";
  if (rc == CURLE_PEER_FAILED_VERIFICATION)
    return certificate_problem (t, rc, what);

  if (curl_easy_getinfo (t->easy, CURLINFO_OS_ERRNO, &os_errno) != CURLE_OK ||
      os_errno <= 0 || strstr (what, strerror ((int) os_errno)) != NULL)
    return what;
  snprintf (t->message, sizeof t->message, "%s (%s%s)", what, strerror ((int) os_errno),
            os_errno != EACCES ? ""
            : http.f->cfg->unix_socket_path[0] != '\0'
            ? ": the fetcher's user may not write to the socket file"
            : ": refused by the sandbox");
  return t->message;
}

#define SETOPT(easy, opt, val)                                          \
  do {                                                                  \
    CURLcode setopt_rc = curl_easy_setopt ((easy), (opt), (val));       \
    if (setopt_rc != CURLE_OK) {                                        \
      warn ("libcurl: setting " #opt ": %s", curl_easy_strerror (setopt_rc)); \
      return -1;                                                        \
    }                                                                   \
  } while (0)

/* The schemes libcurl may use, redirects included: protocols= narrows
 * nbdcurld's own four. */
static const char *
allowed_protocols (void)
{
  static char list[sizeof URL_NETWORK_PROTOCOLS + 1];      /* and a last comma */
  const struct fetcher_config *cfg = http.f->cfg;
  uint32_t p = cfg->flags & FETCHER_PROTO_ALL;

  /* A proxy or a Unix socket carries HTTP only (the supervisor's exports.c refuses
   * FTP URLs with them): no redirect to FTP either. */
  if (cfg->proxy[0] != '\0' || cfg->unix_socket_path[0] != '\0')
    p = (p == 0 ? FETCHER_PROTO_ALL : p) & (FETCHER_PROTO_HTTP | FETCHER_PROTO_HTTPS);
  if (p == 0)
    return URL_NETWORK_PROTOCOLS;
  snprintf (list, sizeof list, "%s%s%s%s",
            (p & FETCHER_PROTO_HTTP) ? "http," : "", (p & FETCHER_PROTO_HTTPS) ? "https," : "",
            (p & FETCHER_PROTO_FTP) ? "ftp," : "", (p & FETCHER_PROTO_FTPS) ? "ftps," : "");
  list[strlen (list) - 1] = '\0';      /* the last comma: p != 0 */
  return list;
}

/* http-version= as libcurl's CURL_HTTP_VERSION_* (the same order). */
static long
curl_http_version (uint32_t v)
{
  static const long version[] = {
    [FETCHER_HTTP_NONE] = CURL_HTTP_VERSION_NONE,
    [FETCHER_HTTP_1_0] = CURL_HTTP_VERSION_1_0,
    [FETCHER_HTTP_1_1] = CURL_HTTP_VERSION_1_1,
    [FETCHER_HTTP_2_0] = CURL_HTTP_VERSION_2_0,
    [FETCHER_HTTP_2TLS] = CURL_HTTP_VERSION_2TLS,
    [FETCHER_HTTP_2_PRIOR_KNOWLEDGE] = CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE,
    [FETCHER_HTTP_3] = CURL_HTTP_VERSION_3,
    [FETCHER_HTTP_3ONLY] = CURL_HTTP_VERSION_3ONLY,
  };
  return version[v];         /* config.c checked v <= FETCHER_HTTP_3ONLY */
}

/* libcurl before 8.0.0 (Debian 12 has 7.88.1) breaks a plain-http HTTP/2
 * connection it reuses, with prior knowledge: the next request on it
 * fails with "Error in the HTTP2 framing layer" (curl/curl#10634).  Then
 * each transfer gets a connection of its own, and none is shared
 * (http_open): slower, but every read works. */
static bool
h2c_reuse_broken (void)
{
  return http.f->cfg->http_version == FETCHER_HTTP_2_PRIOR_KNOWLEDGE &&
    http.f->kind == URL_HTTP &&
    curl_version_info (CURLVERSION_NOW)->version_num < 0x080000;
}

/* proxy=, proxy-user=, proxy-password=, unix-socket-path=, http-version=. */
static int
transfer_setup_route (CURL *easy)
{
  const struct fetcher_config *cfg = http.f->cfg;

  /* "" is no proxy, whatever the environment says (the supervisor gives
   * children none of its variables anyway): only the one the supervisor
   * chose, from proxy= or with --proxy-from-env, is used. */
  SETOPT (easy, CURLOPT_PROXY, cfg->proxy);
  if (cfg->proxy[0] != '\0') {
    /* The port the sandbox allows (fetcher.c): libcurl's default for a
     * proxy URL without one, made explicit. */
    SETOPT (easy, CURLOPT_PROXYPORT, (long) url_proxy_port (cfg->proxy));
    if (cfg->proxy_user[0] != '\0')
      SETOPT (easy, CURLOPT_PROXYUSERNAME, cfg->proxy_user);
    if (cfg->proxy_password[0] != '\0')
      SETOPT (easy, CURLOPT_PROXYPASSWORD, cfg->proxy_password);
    if (cfg->noproxy[0] != '\0')
      SETOPT (easy, CURLOPT_NOPROXY, cfg->noproxy);
    /* An https:// proxy is checked with the same CA certificates and
     * sslverify= as the web server. */
    if (fetcher_ca_bundle_len > 0) {
      struct curl_blob ca = { (void *) fetcher_ca_bundle, fetcher_ca_bundle_len,
                              CURL_BLOB_NOCOPY };
      SETOPT (easy, CURLOPT_PROXY_CAINFO_BLOB, &ca);
    }
    if (cfg->flags & FETCHER_INSECURE) {
      SETOPT (easy, CURLOPT_PROXY_SSL_VERIFYPEER, 0L);
      SETOPT (easy, CURLOPT_PROXY_SSL_VERIFYHOST, 0L);
    }
  }
  if (cfg->unix_socket_path[0] != '\0')
    SETOPT (easy, CURLOPT_UNIX_SOCKET_PATH, cfg->unix_socket_path);
  SETOPT (easy, CURLOPT_HTTP_VERSION, curl_http_version (cfg->http_version));
  if (h2c_reuse_broken ())
    SETOPT (easy, CURLOPT_FORBID_REUSE, 1L);
  return 0;
}

/* cookiefile=: every handle uses the one cookie store, so that a cookie
 * the server sets on the open (or on a redirect) goes with the reads,
 * whichever handle makes them.  "" turns the engine on without a file:
 * the supervisor read the file (fetchers may not), and http_open loads
 * its lines.  libcurl decides which cookies each request carries, by
 * domain, path and the secure flag; the direct reads, which would not,
 * are off (fetcher-direct.c). */
static int
transfer_setup_cookies (CURL *easy)
{
  if (http.cookies == NULL)
    return 0;
  SETOPT (easy, CURLOPT_SHARE, http.cookies);
  SETOPT (easy, CURLOPT_COOKIEFILE, "");
  return 0;
}

/* The cookie store, and the supervisor's lines loaded into it, one cookie
 * a line (config.c: each ends "\n"); never logged: a session cookie is a
 * credential.  A line libcurl cannot take is skipped, by libcurl too. */
static int
load_cookies (CURL *easy)
{
  const char *p = http.f->cfg->cookie_file, *end;
  unsigned n = 0;

  http.cookies = curl_share_init ();
  if (http.cookies == NULL ||
      curl_share_setopt (http.cookies, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE) != CURLSHE_OK)
    fatal ("libcurl: cannot make a cookie store");
  if (transfer_setup_cookies (easy) == -1)
    return -1;
  for (; (end = strchr (p, '\n')) != NULL; p = end + 1) {
    char *line = strndup (p, (size_t) (end - p));
    if (line == NULL)
      fatal_errno ("strndup");
    if (curl_easy_setopt (easy, CURLOPT_COOKIELIST, line) != CURLE_OK)
      fatal ("libcurl: cannot load a cookie");
    explicit_bzero (line, strlen (line));
    free (line);
    n++;
  }
  explicit_bzero (http.f->cfg->cookie_file, strlen (http.f->cfg->cookie_file));
  debug ("export \"%s\": cookie engine on, %u cookie lines loaded", http.f->export_name, n);
  return 0;
}

/* Options every transfer has, set once per easy handle. */
static int
transfer_setup (struct transfer *t)
{
  const struct fetcher_config *cfg = http.f->cfg;
  CURL *easy = t->easy;

  SETOPT (easy, CURLOPT_PRIVATE, t);
  /* Never file: or anything else, neither directly nor by redirect. */
  SETOPT (easy, CURLOPT_PROTOCOLS_STR, allowed_protocols ());
  SETOPT (easy, CURLOPT_REDIR_PROTOCOLS_STR, allowed_protocols ());
  SETOPT (easy, CURLOPT_FOLLOWLOCATION, 0L);
  SETOPT (easy, CURLOPT_MAXREDIRS, (long) MAX_REDIRECTS);
  SETOPT (easy, CURLOPT_NOSIGNAL, 1L);
  if (fetcher_tracing ()) {
    SETOPT (easy, CURLOPT_DEBUGFUNCTION, fetcher_curl_trace);
    SETOPT (easy, CURLOPT_VERBOSE, 1L);
  }
  /* Every connection passes the redirect rules (fetcher-connect.c). */
  SETOPT (easy, CURLOPT_OPENSOCKETFUNCTION, fetcher_open_socket);
  SETOPT (easy, CURLOPT_OPENSOCKETDATA, t);
  SETOPT (easy, CURLOPT_CONNECTTIMEOUT,
          (long) (cfg->connect_timeout ? cfg->connect_timeout : DEFAULT_CONNECT_TIMEOUT));
  if (cfg->timeout != 0)
    SETOPT (easy, CURLOPT_TIMEOUT, (long) cfg->timeout);
  /* A transfer slower than this has stalled (the direct reads apply the
   * same rule: fetcher-direct.c). */
  SETOPT (easy, CURLOPT_LOW_SPEED_LIMIT, (long) MIN_TRANSFER_RATE);
  SETOPT (easy, CURLOPT_LOW_SPEED_TIME, (long) fetcher_stall_timeout (cfg));
  /* --cainfo and --capath's certificates, which the supervisor read
   * (fetcher.c, take_ca_bundle): in place of libcurl's default CA file;
   * its default CA directory stays, as with a CURLOPT_CAINFO path.  A
   * copy of this handle (the direct https reads' CONNECT_ONLY handles,
   * fetcher-direct.c) points at the same bytes. */
  if (fetcher_ca_bundle_len > 0) {
    struct curl_blob ca = { (void *) fetcher_ca_bundle, fetcher_ca_bundle_len,
                            CURL_BLOB_NOCOPY };
    SETOPT (easy, CURLOPT_CAINFO_BLOB, &ca);
  }
  /* --auth-user and --auth-password: libcurl sends them to the URL's host
   * only, never to one a redirect leads to (no CURLOPT_UNRESTRICTED_AUTH);
   * reads check the pinned URL the same way (transfer_setup_reads). */
  if (cfg->auth_user[0] != '\0')
    SETOPT (easy, CURLOPT_USERNAME, cfg->auth_user);
  if (cfg->auth_password[0] != '\0')
    SETOPT (easy, CURLOPT_PASSWORD, cfg->auth_password);
  /* ssl-version=, ssl-cipher-list=, tls13-ciphers=: for servers that
   * need old or particular TLS (VMware hosts, appliances). */
  if (cfg->tls_min != 0)
    SETOPT (easy, CURLOPT_SSLVERSION,
            cfg->tls_min == 10 ? CURL_SSLVERSION_TLSv1_0 :
            cfg->tls_min == 11 ? CURL_SSLVERSION_TLSv1_1 :
            cfg->tls_min == 12 ? CURL_SSLVERSION_TLSv1_2 : CURL_SSLVERSION_TLSv1_3);
  if (cfg->ciphers[0] != '\0')
    SETOPT (easy, CURLOPT_SSL_CIPHER_LIST, cfg->ciphers);
  if (cfg->tls13_ciphers[0] != '\0')
    SETOPT (easy, CURLOPT_TLS13_CIPHERS, cfg->tls13_ciphers);
  if (cfg->flags & FETCHER_INSECURE) {
    SETOPT (easy, CURLOPT_SSL_VERIFYPEER, 0L);
    SETOPT (easy, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  SETOPT (easy, CURLOPT_USERAGENT,
          cfg->user_agent[0] != '\0' ? cfg->user_agent : "nbdcurld/" PACKAGE_VERSION);
  SETOPT (easy, CURLOPT_HTTPHEADER, http.open_headers);
  if (transfer_setup_cookies (easy) == -1)
    return -1;
  /* resolve= and ipresolve=: the direct reads go to the address
   * libcurl's connection for the open went to, so they follow too. */
  if (http.resolve)
    SETOPT (easy, CURLOPT_RESOLVE, http.resolve);
  SETOPT (easy, CURLOPT_IPRESOLVE,
          cfg->ip_version == 4 ? CURL_IPRESOLVE_V4 :
          cfg->ip_version == 6 ? CURL_IPRESOLVE_V6 : CURL_IPRESOLVE_WHATEVER);
  /* No CURLOPT_ACCEPT_ENCODING: identity only, or byte ranges would be
   * ranges of the compressed body. */
  SETOPT (easy, CURLOPT_FAILONERROR, 0L);    /* statuses are checked here */
  SETOPT (easy, CURLOPT_ERRORBUFFER, t->errbuf);
  /* On unless tcp-nodelay= or tcp-keepalive= say otherwise: replies
   * to small reads go out at once, and a connection whose peer vanished
   * is found out. */
  SETOPT (easy, CURLOPT_TCP_NODELAY, (cfg->flags & FETCHER_NO_NODELAY) ? 0L : 1L);
  SETOPT (easy, CURLOPT_TCP_KEEPALIVE, (cfg->flags & FETCHER_NO_KEEPALIVE) ? 0L : 1L);
  SETOPT (easy, CURLOPT_BUFFERSIZE, CURL_RECEIVE_BUFFER);
  SETOPT (easy, CURLOPT_HEADERFUNCTION, header_callback);
  SETOPT (easy, CURLOPT_HEADERDATA, t);
  SETOPT (easy, CURLOPT_WRITEFUNCTION, write_callback);
  SETOPT (easy, CURLOPT_WRITEDATA, t);
  return transfer_setup_route (easy);
}

/* Switch a handle from opening to range reads of the pinned URL. */
static int
transfer_setup_reads (struct transfer *t)
{
  SETOPT (t->easy, CURLOPT_URL, http.range_url);
  SETOPT (t->easy, CURLOPT_FOLLOWLOCATION, 0L);
  /* Redirected elsewhere: the credentials were for the first host. */
  if (!http.range_same_origin) {
    SETOPT (t->easy, CURLOPT_USERNAME, (char *) NULL);
    SETOPT (t->easy, CURLOPT_PASSWORD, (char *) NULL);
  }
  SETOPT (t->easy, CURLOPT_NOBODY, 0L);
  if (http.range_is_http) {
    SETOPT (t->easy, CURLOPT_HTTPGET, 1L);
    SETOPT (t->easy, CURLOPT_HTTPHEADER, http.preconditions);
  }
  return 0;
}

/* Every transfer runs on a libcurl handle that has run none before: a
 * copy of the last one (curl_easy_duphandle copies the options, not the
 * state).  libcurl 7.88, as Debian 12 ships it, keeps a pointer to the
 * last header it stored across transfers of one handle, after freeing
 * that header; a reply whose first header line is folded (starts with a
 * space or tab) then makes it read and reallocate freed memory (fixed in
 * curl 8.1.0, curl/curl#11101).  A web server could use that against a
 * fetcher.  A handle that has stored no header refuses such a line, and
 * connections stay in the multi handle's cache, so nothing is lost.
 * Returns 0, or -1 (out of memory) with the old handle kept. */
static int
renew_easy (struct transfer *t)
{
  CURL *copy;

  if (t->easy_used) {
    copy = curl_easy_duphandle (t->easy);
    if (copy == NULL)
      return -1;
    curl_easy_cleanup (t->easy);
    t->easy = copy;
    /* A copy gets an empty cookie store of its own: back to the one. */
    if (transfer_setup_cookies (copy) == -1)
      return -1;
  }
  t->easy_used = true;
  return 0;
}

/* Run one transfer to its end (while opening: nothing else runs).  The
 * loop ends because every transfer ends: the connect timeout, the stall
 * limit and --timeout bound it. */
static CURLcode
perform (struct transfer *t)
{
  CURLcode rc = CURLE_OK;
  CURLMcode mc;
  bool done = false;

  mc = renew_easy (t) == -1 ? CURLM_OUT_OF_MEMORY
                            : curl_multi_add_handle (http.multi, t->easy);
  if (mc != CURLM_OK) {
    snprintf (t->errbuf, sizeof t->errbuf, "%s", curl_multi_strerror (mc));
    return CURLE_FAILED_INIT;
  }
  while (!done) {
    CURLMsg *msg;
    int running, left;

    mc = curl_multi_perform (http.multi, &running);
    if (mc != CURLM_OK)
      fatal ("libcurl: curl_multi_perform: %s", curl_multi_strerror (mc));
    while ((msg = curl_multi_info_read (http.multi, &left)) != NULL) {
      if (msg->msg == CURLMSG_DONE && msg->easy_handle == t->easy) {
        rc = msg->data.result;
        done = true;
      }
    }
    if (done)
      break;
    mc = curl_multi_poll (http.multi, NULL, 0, 1000, NULL);
    if (mc != CURLM_OK)
      fatal ("libcurl: curl_multi_poll: %s", curl_multi_strerror (mc));
  }
  curl_multi_remove_handle (http.multi, t->easy);
  return rc;
}

PRINTF_LIKE (2, 3) static int
open_failed (int error, const char *fmt, ...)
{
  char why[PROBLEM_MAX];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (why, sizeof why, fmt, ap);
  va_end (ap);
  /* The front-end logs it (once per cause, not once per client) and
   * tells the client; the supervisor says it at start. */
  debug ("export \"%s\": cannot open %s: %s", http.f->export_name, http.f->log_url, why);
  snprintf (http.f->open_failure, sizeof http.f->open_failure, "%s", why);
  return error;
}

#define NO_RANGES_MESSAGE \
  "the web server does not support byte ranges (Range requests); nbdcurld needs them"

/* The errno and words for an HTTP status that refuses the object. */
static int
status_failed (long status)
{
  switch (status) {
  case 404: case 410:
    return open_failed (ENOENT, "not found (HTTP %ld)", status);
  case 401: case 403:
    return open_failed (EACCES, "access denied (HTTP %ld)", status);
  case 200:
    return open_failed (EIO, NO_RANGES_MESSAGE);
  default:
    return open_failed (EIO, "the server answered HTTP %ld", status);
  }
}

static int
curl_failed (struct transfer *t, CURLcode rc)
{
  switch (rc) {
  case CURLE_UNSUPPORTED_PROTOCOL:
    return open_failed (EIO, "%s (redirects may lead only to http, https, ftp "
                        "and ftps URLs)", curl_message (t, rc));
  case CURLE_REMOTE_FILE_NOT_FOUND:
    return open_failed (ENOENT, "not found: %s", curl_message (t, rc));
  case CURLE_LOGIN_DENIED: case CURLE_REMOTE_ACCESS_DENIED:
    return open_failed (EACCES, "access denied: %s", curl_message (t, rc));
  default:
    return open_failed (EIO, "%s", curl_message (t, rc));
  }
}

/* Pin the URL a transfer ended at (after redirects).  Returns its kind
 * through *is_http. */
static int
pin_effective_url (struct transfer *t, bool *is_http)
{
  char *effective = NULL, *path = NULL;
  enum url_kind kind;
  char err[256];

  if (curl_easy_getinfo (t->easy, CURLINFO_EFFECTIVE_URL, &effective) != CURLE_OK ||
      effective == NULL)
    return open_failed (EIO, "libcurl did not report the final URL");
  if (url_parse (effective, &kind, &path, err, sizeof err) == -1)
    return open_failed (EIO, "unusable URL after redirects: %s", err);
  free (path);
  /* Cannot happen: CURLOPT_REDIR_PROTOCOLS_STR excludes file:. */
  if (kind == URL_FILE)
    return open_failed (EIO, "a redirect led to a file: URL");
  free (http.range_url);
  http.range_url = strdup (effective);
  if (http.range_url == NULL)
    fatal_errno ("malloc");
  *is_http = kind == URL_HTTP || kind == URL_HTTPS;
  http.range_same_origin = url_same_origin (effective, http.f->cfg->url);
  if (strcmp (effective, http.f->cfg->url) != 0 && log_verbose ()) {
    char *shown = url_for_log (effective);
    debug ("export \"%s\": redirected to %s; range requests go there",
           http.f->export_name, shown ? shown : "(URL)");
    free (shown);
  }
  return 0;
}

/* FTP(S), reached directly or by a redirect: the size is the SIZE
 * command's answer, which libcurl gives as the content length. */
static int
open_ftp_result (struct transfer *t)
{
  curl_off_t length = -1;

  if (curl_easy_getinfo (t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) != CURLE_OK ||
      length < 0)
    return open_failed (EIO, "the FTP server did not tell the file's size (SIZE command)");
  http.f->size = (uint64_t) length;
  http.range_is_http = false;
  return 0;
}

/* followlocation=false: the open follows no redirect. */
static long
follow_redirects (void)
{
  return (http.f->cfg->flags & FETCHER_NO_REDIRECTS) ? 0L : 1L;
}

/* GET bytes=0-0: the size is the total of its Content-Range. */
static int
open_probe (struct transfer *t)
{
  static uint8_t probe_byte;
  const struct fetcher_config *cfg = http.f->cfg;
  bool is_http = true, empty_200;
  curl_off_t length = -1;
  CURLcode rc;
  int error;

  transfer_reset (t, MODE_PROBE);
  t->parse_headers = true;
  t->data = &probe_byte;
  t->length = 1;
  if (curl_easy_setopt (t->easy, CURLOPT_URL, cfg->url) != CURLE_OK ||
      curl_easy_setopt (t->easy, CURLOPT_FOLLOWLOCATION, follow_redirects ()) != CURLE_OK ||
      curl_easy_setopt (t->easy, CURLOPT_NOBODY, 0L) != CURLE_OK ||
      curl_easy_setopt (t->easy, CURLOPT_HTTPGET, 1L) != CURLE_OK ||
      curl_easy_setopt (t->easy, CURLOPT_RANGE, "0-0") != CURLE_OK)
    return open_failed (EIO, "libcurl refused the options of a range request");
  rc = perform (t);
  if (curl_easy_setopt (t->easy, CURLOPT_RANGE, NULL) != CURLE_OK)
    return open_failed (EIO, "libcurl refused to clear the range");
  if (t->reply.problem[0] != '\0')
    return open_failed (EIO, "%s", t->reply.problem);
  /* CURLE_WRITE_ERROR is the write callback refusing a body that did not
   * come with a 206; the status says why below. */
  if (rc != CURLE_OK && rc != CURLE_WRITE_ERROR)
    return curl_failed (t, rc);
  error = pin_effective_url (t, &is_http);
  if (error != 0)
    return error;
  if (!is_http)
    return open_failed (EIO, "the range request was redirected to an FTP URL "
                        "(the HEAD request was not): redirects differ between requests");
  empty_200 = rc == CURLE_OK && t->received == 0 &&
    curl_easy_getinfo (t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK &&
    length == 0;
  switch (web_reply_probe (&t->reply, t->received, empty_200, &http.f->size)) {
  case WEB_PROBE_SIZE:
    break;
  case WEB_PROBE_STATUS:
    return status_failed (t->reply.status);
  case WEB_PROBE_BAD:
    return open_failed (EIO, "%s", t->reply.problem);
  }
  /* Pin this response's validators: range reads are GETs like this one. */
  web_reply_take_validators (&t->reply, &http.etag, &http.last_modified);
  http.range_is_http = true;
  return 0;
}

/* HEAD (or FTP SIZE), redirects followed; then a probe if needed. */
static int
open_head (struct transfer *t)
{
  const struct fetcher_config *cfg = http.f->cfg;
  bool start_http = http.f->kind == URL_HTTP || http.f->kind == URL_HTTPS;
  bool is_http = start_http;
  curl_off_t length = -1, sent_at = 0;
  CURLcode rc;
  long status;
  int error;

  transfer_reset (t, MODE_HEAD);
  t->parse_headers = start_http;
  if (curl_easy_setopt (t->easy, CURLOPT_URL, cfg->url) != CURLE_OK ||
      curl_easy_setopt (t->easy, CURLOPT_FOLLOWLOCATION, follow_redirects ()) != CURLE_OK ||
      curl_easy_setopt (t->easy, CURLOPT_NOBODY, 1L) != CURLE_OK)
    return open_failed (EIO, "libcurl refused the options of a HEAD request");
  rc = perform (t);
  if (t->reply.problem[0] != '\0')
    return open_failed (EIO, "%s", t->reply.problem);
  if (rc == CURLE_OPERATION_TIMEDOUT && start_http && response_status (t) == 0 &&
      curl_easy_getinfo (t->easy, CURLINFO_PRETRANSFER_TIME_T, &sent_at) == CURLE_OK &&
      sent_at > 0) {
    /* The server took the connection and the HEAD request, and never
     * answered: some mishandle HEAD, so a GET gets its chance. */
    debug ("export \"%s\": HEAD timed out unanswered; trying a range request",
           http.f->export_name);
    return open_probe (t);
  }
  if (rc != CURLE_OK)
    return curl_failed (t, rc);
  error = pin_effective_url (t, &is_http);
  if (error != 0)
    return error;
  if (!is_http)
    return open_ftp_result (t);

  status = response_status (t);
  if (status >= 300 && status <= 399 && follow_redirects () == 0)
    return open_failed (EIO, "the server redirects (HTTP %ld), and followlocation=false "
                        "forbids following it", status);
  if (status == 404 || status == 410 || status == 401)
    return status_failed (status);
  if (status < 200 || status > 299) {
    /* Some servers refuse HEAD (405), or allow only GET (presigned URLs
     * answer 403): the probe is a GET and gives the final answer. */
    debug ("export \"%s\": HEAD answered HTTP %ld; trying a range request",
           http.f->export_name, status);
    return open_probe (t);
  }
  if (curl_easy_getinfo (t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) != CURLE_OK)
    length = -1;
  switch (web_reply_head (&t->reply, length)) {
  case WEB_HEAD_SETTLED:
    break;
  case WEB_HEAD_NO_RANGES:
    return open_failed (EIO, NO_RANGES_MESSAGE " (Accept-Ranges: none)");
  case WEB_HEAD_PROBE:
    debug ("export \"%s\": HEAD did not settle the size and range support; "
           "trying a range request", http.f->export_name);
    return open_probe (t);
  }
  http.f->size = (uint64_t) length;
  web_reply_take_validators (&t->reply, &http.etag, &http.last_modified);
  http.range_is_http = true;
  return 0;
}

/* Conditional headers for range reads, so that a server that knows the
 * object changed says so (412) instead of sending other bytes. */
static void
build_preconditions (void)
{
  char *line = NULL;
  struct curl_slist *list;

  /* If-Match needs a strong ETag (RFC 9110 13.1.1). */
  if (http.etag != NULL && strncmp (http.etag, "W/", 2) != 0) {
    if (asprintf (&line, "If-Match: %s", http.etag) == -1)
      fatal_errno ("malloc");
  }
  else if (http.last_modified != NULL) {
    if (asprintf (&line, "If-Unmodified-Since: %s", http.last_modified) == -1)
      fatal_errno ("malloc");
  }
  if (line == NULL)
    return;
  list = curl_slist_append (http.preconditions, line);
  if (list == NULL)
    fatal ("libcurl: out of memory");
  http.preconditions = list;
  http.precondition = line;
}

/* Each "Name: value\r\n" line of block onto a libcurl header list. */
static struct curl_slist *
append_lines (struct curl_slist *list, const char *block)
{
  const char *p = block, *end;

  while ((end = strstr (p, "\r\n")) != NULL) {
    char *line = strndup (p, (size_t) (end - p));
    if (line == NULL)
      fatal_errno ("strndup");
    list = curl_slist_append (list, line);
    explicit_bzero (line, strlen (line));     /* a cookie, a token */
    free (line);
    if (list == NULL)
      fatal ("libcurl: out of memory");
    p = end + 2;
  }
  return list;
}

/* The header= lines and the cookie (as a Cookie header) as one block of
 * "Name: value\r\n" lines; without credentials, no Authorization or
 * Cookie line.  The caller frees it. */
static char *
header_block (bool credentials)
{
  const struct fetcher_config *cfg = http.f->cfg;
  /* The scripts' values, when header-script= or cookie-script= give them. */
  const char *headers = script_headers (cfg), *cookie = script_cookie (cfg);
  size_t cap = strlen (headers) + strlen (cookie) + sizeof "Cookie: \r\n";
  char *block = malloc (cap), *out = block;
  const char *p = headers;

  if (block == NULL)
    fatal_errno ("malloc");
  while (*p) {
    const char *end = strstr (p, "\r\n");
    size_t len = end ? (size_t) (end - p) + 2 : strlen (p);
    if (credentials || (strncasecmp (p, "authorization:", 14) != 0 &&
                        strncasecmp (p, "cookie:", 7) != 0)) {
      memcpy (out, p, len);
      out += len;
    }
    p += len;
  }
  if (cookie[0] != '\0' && credentials)
    out += sprintf (out, "Cookie: %s\r\n", cookie);
  *out = '\0';
  return block;
}

/* The open (HEAD or probe) sends them all: libcurl itself keeps
 * Authorization and Cookie headers from another origin a redirect leads
 * to.  Range reads send them as the open did, except that after a
 * redirect to another origin no Authorization or Cookie header goes (as
 * with --auth-user); the direct reads put the block into their requests
 * as it is. */
static void
build_open_headers (void)
{
  char *block = header_block (true);
  http.open_headers = append_lines (NULL, block);
  explicit_bzero (block, strlen (block));
  free (block);
}

static void
build_read_headers (void)
{
  http.read_headers = header_block (http.range_same_origin);
  http.preconditions = append_lines (http.preconditions, http.read_headers);
}

/* New values from the scripts, taken while no transfer runs (libcurl
 * holds pointers to the lists of its transfers): every list and the
 * direct reads' request are made again from them. */
static void
rebuild_headers (void)
{
  char *old_read = http.read_headers;

  /* FTP reads send no header (and the handles still point at the open's
   * list): nothing to make again. */
  if (!http.range_is_http)
    return;
  curl_slist_free_all (http.open_headers);
  build_open_headers ();
  {
    curl_slist_free_all (http.preconditions);
    http.preconditions = NULL;
    free (http.precondition);
    http.precondition = NULL;
    build_preconditions ();
    build_read_headers ();
    if (old_read) {
      explicit_bzero (old_read, strlen (old_read));
      free (old_read);
    }
    direct_headers_changed ();
  }
}

static void
http_init (struct fetcher *f)
{
  CURLcode rc;

  (void) f;
  /* Before the sandbox: TLS libraries read their configuration here. */
  rc = curl_global_init (CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK)
    fatal ("libcurl: curl_global_init: %s", curl_easy_strerror (rc));
}

static int
http_open (struct fetcher *f)
{
  const uint32_t n = f->cfg->connections;   /* 1 .. MAX_CONNECTIONS */
  uint32_t i;
  int error;

  http.f = f;
  http.multi = curl_multi_init ();
  if (http.multi == NULL)
    fatal ("libcurl: curl_multi_init failed");
  /* Never more than n connections, all kept for reuse. */
  if (curl_multi_setopt (http.multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long) n) != CURLM_OK ||
      curl_multi_setopt (http.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long) n) != CURLM_OK ||
      curl_multi_setopt (http.multi, CURLMOPT_MAXCONNECTS, (long) n) != CURLM_OK)
    fatal ("libcurl: cannot limit connections");
  if (h2c_reuse_broken ()) {
    debug ("export \"%s\": libcurl %s cannot reuse HTTP/2 connections made with "
           "prior knowledge: one connection per transfer", f->export_name,
           curl_version_info (CURLVERSION_NOW)->version);
    if (curl_multi_setopt (http.multi, CURLMOPT_PIPELINING, (long) CURLPIPE_NOTHING) != CURLM_OK)
      fatal ("libcurl: cannot turn multiplexing off");
  }

  http.pool = calloc (n, sizeof *http.pool);
  if (http.pool == NULL)
    fatal_errno ("calloc");
  for (i = 0; i < n; i++)
    http.pool[i].sock = -1;
  /* header-script=, cookie-script=: their first values, before any
   * request goes out. */
  script_init (f->cfg);
  error = script_wait_first (f);
  if (error != 0)
    return error;
  /* Only the first slot gets its libcurl handle now; the others when a
   * read first goes through libcurl (ensure_easy).  Direct reads need
   * none, and each handle costs about 12 KiB of touched heap. */
  build_open_headers ();
  {
    char *block;
    if (asprintf (&block, "%s", f->cfg->resolve) == -1)
      fatal_errno ("asprintf");
    /* One entry a line, as options.c wrote them. */
    for (char *line = strtok (block, "\n"); line; line = strtok (NULL, "\n")) {
      http.resolve = curl_slist_append (http.resolve, line);
      if (http.resolve == NULL)
        fatal ("libcurl: out of memory");
    }
    free (block);
  }
  http.pool[0].easy = curl_easy_init ();
  if (http.pool[0].easy == NULL)
    fatal ("libcurl: curl_easy_init failed");
  if ((f->cfg->flags & FETCHER_COOKIE_ENGINE) && load_cookies (http.pool[0].easy) == -1)
    return open_failed (EIO, "libcurl refused an option (see above)");
  if (transfer_setup (&http.pool[0]) == -1)
    return open_failed (EIO, "libcurl refused an option (see above)");

  /* The first handle opens; its connection stays for the reads. */
  error = open_head (&http.pool[0]);
  if (error == EACCES && script_renew_blocking ()) {
    /* Refused (401, 403): once more with the scripts' renewed values. */
    curl_slist_free_all (http.open_headers);
    build_open_headers ();
    if (curl_easy_setopt (http.pool[0].easy, CURLOPT_HTTPHEADER, http.open_headers) != CURLE_OK)
      return open_failed (EIO, "libcurl refused an option (see above)");
    error = open_head (&http.pool[0]);
  }
  transfer_reset (&http.pool[0], MODE_READ);
  if (error != 0)
    return error;

  if (http.range_is_http) {
    build_preconditions ();
    build_read_headers ();
  }
  direct_prepare (&http.pool[0]);
  if (transfer_setup_reads (&http.pool[0]) == -1)
    return open_failed (EIO, "libcurl refused an option (see above)");
  for (i = 0; i < n; i++) {
    http.pool[i].parse_headers = http.range_is_http;
    http.pool[i].next_free = http.free_list;
    http.free_list = &http.pool[i];
  }
  debug ("export \"%s\": %" PRIu64 " bytes, ETag %s, Last-Modified %s, "
         "%" PRIu32 " connections", f->export_name, f->size,
         http.etag ? http.etag : "(none)",
         http.last_modified ? http.last_modified : "(none)", n);
  /* Readahead over HTTP(S) only: FTP reads run one at a time. */
  readahead_init (http.range_is_http ? f->cfg->readahead : 0);
  f->can = 0;                   /* read-only: no write, flush or FUA */
  f->piped_read_max = direct_piped () ? fetcher_pipe_read_max : 0;
  return 0;
}

/* ---- Serving ---- */

/* A slot's libcurl handle, made at its first read through libcurl, set
 * up as the open handle was (the options can only fail for lack of
 * memory).  Returns 0, or -1 with the slot left without one. */
static int
ensure_easy (struct transfer *t)
{
  if (t->easy != NULL)
    return 0;
  t->easy = curl_easy_init ();
  if (t->easy == NULL)
    return -1;
  if (transfer_setup (t) == -1 || transfer_setup_reads (t) == -1) {
    curl_easy_cleanup (t->easy);
    t->easy = NULL;
    return -1;
  }
  return 0;
}

/* --timeout bounds the read, its retries and a hand-over from the direct
 * path included: what is left of it for this attempt, at least 1 ms
 * (libcurl takes 0 for "no limit"). */
static long
read_time_left (const struct transfer *t)
{
  uint64_t now = monotonic_ms ();

  if (t->limit_ms == UINT64_MAX)
    return 0;
  return t->limit_ms > now ? (long) (t->limit_ms - now) : 1;
}

/* Start t's range (t->offset, t->length, t->parts set) through libcurl. */
static void
start_curl_read (struct transfer *t)
{
  char range[64];
  CURLMcode mc;

  t->direct = false;
  /* A new request, whatever went before it (a direct attempt that handed
   * the read over may have passed its checks): its own reply is checked. */
  reply_begin (t);
  /* Inclusive range; length >= 1. */
  snprintf (range, sizeof range, "%" PRIu64 "-%" PRIu64,
            t->offset, t->offset + t->length - 1);
  if (ensure_easy (t) == -1 || renew_easy (t) == -1)
    mc = CURLM_OUT_OF_MEMORY;
  /* The lists of now: the scripts' values may have changed them. */
  else if (http.range_is_http &&
           curl_easy_setopt (t->easy, CURLOPT_HTTPHEADER, http.preconditions) != CURLE_OK)
    mc = CURLM_OUT_OF_MEMORY;
  else if (curl_easy_setopt (t->easy, CURLOPT_RANGE, range) != CURLE_OK)
    mc = CURLM_OUT_OF_MEMORY;   /* copying the string is all it does */
  else if (http.f->cfg->timeout != 0 &&
           curl_easy_setopt (t->easy, CURLOPT_TIMEOUT_MS, read_time_left (t)) != CURLE_OK)
    mc = CURLM_OUT_OF_MEMORY;
  else
    mc = curl_multi_add_handle (http.multi, t->easy);
  if (mc != CURLM_OK) {
    char why[PROBLEM_MAX];
    snprintf (why, sizeof why, "libcurl could not start it: %s", curl_multi_strerror (mc));
    if (t->prefetch != NULL)
      readahead_finished (t->prefetch, why);
    else
      fail_read (t, why);
    release (t);
  }
}

/* Reads that the direct path handed over go on through libcurl. */
static void
start_handed_reads (void)
{
  struct transfer *t;

  /* Each pass takes one transfer of the pool off the direct path. */
  while ((t = direct_take_handed ()) != NULL)
    start_curl_read (t);
}

void
start_prefetch (struct ra_segment *s, uint64_t offset, uint32_t length, uint8_t *buf)
{
  struct transfer *t = http.free_list;

  http.free_list = t->next_free;
  http.active++;
  transfer_reset (t, MODE_READ);
  t->offset = offset;
  t->length = length;
  t->data = buf;                /* no parts: the body goes to buf */
  t->prefetch = s;
  start_curl_read (t);
}

static void
start_read (const struct fetcher_request *req)
{
  struct transfer *t = http.free_list;
  /* Without libcurl if the direct path takes it (fetcher-direct.c). */
  bool direct = direct_takes (req);

  http.free_list = t->next_free;
  http.active++;
  transfer_reset (t, MODE_READ);
  /* --timeout: for the read, however many attempts it takes. */
  if (http.f->cfg->timeout != 0)
    t->limit_ms = monotonic_ms () + (uint64_t) http.f->cfg->timeout * 1000;
  t->offset = req->offset;
  t->length = req->length;
  /* The body goes straight into each request's place in the data area
   * (lengths checked: 1 .. NBD_MAX_REQUEST_SIZE, inside the area), or
   * into the data pipe. */
  t->parts[0].id = req->id;
  t->parts[0].data = req->data;
  t->parts[0].length = req->length;
  t->parts[0].auth_retried = req->auth_retried;
  t->nparts = 1;
  /* Queued reads that continue this one join it (see COALESCE_MAX_*),
   * if they go the same way.  Reads are inside the export, so offset +
   * length < 2^63 throughout. */
  uint32_t max_bytes = direct ? direct_piece_max () : COALESCE_MAX_BYTES;
  while (http.queue_len > 0 && t->nparts < COALESCE_MAX_PARTS) {
    const struct fetcher_request *next = &http.queue[http.queue_head];
    if (next->offset != t->offset + t->length ||
        t->length >= max_bytes || next->length > max_bytes - t->length ||
        (direct && (!direct_takes (next) || direct_to_area (next) != direct_to_area (req))))
      break;
    t->parts[t->nparts].id = next->id;
    t->parts[t->nparts].data = next->data;
    t->parts[t->nparts].length = next->length;
    t->parts[t->nparts].auth_retried = next->auth_retried;
    t->nparts++;
    t->length += next->length;
    (void) queue_pop ();
  }
  if (direct) {
    direct_start (t);
    start_handed_reads ();
  }
  else
    start_curl_read (t);
}

/* Could libcurl's failure pass if the read were tried again?  Failures
 * of the connection and timeouts could; anything else (a bad option, a
 * TLS certificate refused, the write callback refusing a body) could
 * not.  A connection the sandbox refused (EACCES) stays refused. */
enum retry_cause
fetcher_curl_cause (CURL *easy, CURLcode rc)
{
  long os_errno = 0;

  switch (rc) {
  case CURLE_COULDNT_CONNECT:
    if (curl_easy_getinfo (easy, CURLINFO_OS_ERRNO, &os_errno) == CURLE_OK &&
        (os_errno == EACCES || os_errno == EPERM))
      return RETRY_CAUSE_FINAL;
    return RETRY_CAUSE_TRANSIENT;
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_OPERATION_TIMEDOUT:      /* a stall; --timeout: retry_decide */
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_PARTIAL_FILE:
  case CURLE_SSL_CONNECT_ERROR:       /* a handshake cut off */
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
    return RETRY_CAUSE_TRANSIENT;
  default:
    return RETRY_CAUSE_FINAL;
  }
}

/* A finished attempt of a read: the parts not answered yet (at least the
 * last) are tried again or get EIO unless everything checks out; then the
 * last part is answered here. */
static void
finish_read (struct transfer *t, CURLcode rc)
{
  const char *why = NULL;
  char short_body[PROBLEM_MAX];
  enum retry_cause cause = RETRY_CAUSE_FINAL;

  if (t->reply.problem[0] != '\0') {
    why = t->reply.problem;
    cause = RETRY_CAUSE_REPLY;
  }
  else if (rc == CURLE_PARTIAL_FILE) {
    /* The server closed the connection before the body was complete. */
    snprintf (short_body, sizeof short_body, "short body: %zu of %" PRIu32
              " bytes (%s)", t->received, t->length, curl_message (t, rc));
    why = short_body;
    cause = RETRY_CAUSE_TRANSIENT;
  }
  else if (rc != CURLE_OK) {
    why = curl_message (t, rc);
    cause = fetcher_curl_cause (t->easy, rc);
  }
  else if (!reply_ok (t)) {
    why = t->reply.problem;     /* no body came: check the headers now */
    cause = RETRY_CAUSE_REPLY;
  }
  else if (t->received != t->length) {
    snprintf (short_body, sizeof short_body, "short body: %zu of %" PRIu32 " bytes",
              t->received, t->length);
    why = short_body;
    cause = RETRY_CAUSE_TRANSIENT;
  }

  if (t->prefetch != NULL)
    readahead_finished (t->prefetch, why);   /* its own buffer, no parts */
  else if (why != NULL) {
    /* 401, 403 with scripts: the read goes again with renewed values. */
    if (script_park_refused (t))
      ;
    else if (retry_decide (t, cause, why))
      return;                   /* it waits, holding its slot */
    else
      fail_read (t, why);
  }
  else if (t->next_part + 1 != t->nparts)
    fatal ("internal error: a complete read left %u parts unanswered",
           t->nparts - t->next_part);
  else
    fetcher_reply (t->parts[t->next_part].id, 0);
  release (t);
}

/* Reads whose retry is due start again, the way they went (direct, if
 * reads still go direct), each with a reply of its own to check. */
static void
start_due_retries (void)
{
  struct transfer *t;

  /* Each pass takes one waiting transfer of the pool. */
  while ((t = retry_take_due ()) != NULL) {
    if (t->retry_direct && http.direct)
      direct_start (t);
    else
      start_curl_read (t);
  }
  start_handed_reads ();
}

static void
finish_done_transfers (void)
{
  CURLMsg *msg;
  int left;

  /* Each message is one finished transfer, at most the pool's size. */
  while ((msg = curl_multi_info_read (http.multi, &left)) != NULL) {
    struct transfer *t = NULL;
    CURL *easy = msg->easy_handle;
    CURLcode rc = msg->data.result;

    if (msg->msg != CURLMSG_DONE)
      continue;
    if (curl_easy_getinfo (easy, CURLINFO_PRIVATE, (char **) &t) != CURLE_OK || t == NULL)
      fatal ("internal error: a transfer without its state");
    curl_multi_remove_handle (http.multi, easy);
    finish_read (t, rc);
  }
}

static void
http_serve (struct fetcher *f)
{
  bool input_open = true;
  bool input_ready = true;      /* try a read first: requests may be there */

  /* Runs until the front-end closes its end and every read is answered. */
  for (;;) {
    const struct curl_waitfd peer = { .fd = CHILD_FD_PEER, .events = CURL_WAIT_POLLIN };
    struct curl_waitfd wait[1 + MAX_CONNECTIONS + 1 + 1];
    unsigned nwait, ndirect;
    long direct_timeout, timeout, retry_timeout;
    bool want_input;
    CURLMcode mc;
    int running;

    /* Take what the front-end sent, while the queue has room.  Each pass
     * queues one request, so at most QUEUE_SIZE passes. */
    while (input_open && http.queue_len < QUEUE_SIZE &&
           (input_ready || fetcher_input_buffered ())) {
      struct fetcher_request req;
      int r = fetcher_next_request (f, &req);
      if (r == -1) {
        fetcher_flush_replies ();
        /* Gone: nobody will read the replies of the reads in flight. */
        if (fetcher_front_end_gone ()) {
          retry_summary ();
          return;
        }
        /* A half-close: it still reads replies, so finish what it asked. */
        if (http.active + http.queue_len > 0)
          debug ("the front-end closed its end; finishing %u reads",
                 http.active + http.queue_len);
        input_open = false;
        break;
      }
      if (r == 0)
        break;
      /* The export is read-only, so the reader refused writes and
       * flushes (f->can == 0). */
      if (req.type != IPC_READ && req.type != IPC_CACHE)
        fatal ("internal error: request type %u on a read-only export", req.type);
      queue_push (&req);
    }
    input_ready = false;

    /* Reads and CACHEs waiting for prefetches that ended. */
    readahead_progress ();
    /* FTP reads run one at a time: with several in one libcurl 7.88
     * multi handle, a control connection now and then took a reply for
     * the wrong command ("Couldn't use REST"; against pyftpdlib, 15 reads
     * of 475 failed with 16 at a time, 1 of 380 with 2, none of 475 one
     * at a time), and a failed read is an error the client sees.  Queued
     * sequential reads are still fetched together (start_read). */
    /* The scripts' new values are taken once no transfer runs; reads
     * wait meanwhile, and those refused for the old ones go again. */
    if (script_values_waiting () && http.active == 0) {
      script_take_values ();
      rebuild_headers ();
    }
    script_requeue ();
    while (http.free_list != NULL && http.queue_len > 0 && !script_hold_reads () &&
           (http.range_is_http || http.active == 0) &&
           (!direct_takes (&http.queue[http.queue_head]) || direct_may_start ())) {
      struct fetcher_request req = queue_pop ();
      if (!readahead_take (&req))
        start_read (&req);
    }
    fetcher_flush_replies ();   /* before waiting: nothing is held back */
    if (!input_open && http.active == 0 && http.queue_len == 0 && script_parked () == 0 &&
        readahead_idle ()) {
      retry_summary ();
      return;
    }

    want_input = input_open && http.queue_len < QUEUE_SIZE;
    nwait = 0;
    if (want_input)
      wait[nwait++] = peer;
    /* Direct reads' sockets and the data pipe wait in the same poll;
     * libcurl's own timeout (0 after a handle was added) and the direct
     * reads' deadlines bound it. */
    ndirect = direct_wait_fds (wait + nwait, MAX_CONNECTIONS + 1, &direct_timeout);
    nwait += ndirect;
    if (script_fd () >= 0)
      wait[nwait++] = (struct curl_waitfd) { .fd = script_fd (), .events = CURL_WAIT_POLLIN };
    /* Reads waiting to be retried wait here too, not in a sleep: the
     * other reads of the client go on meanwhile. */
    retry_timeout = retry_wait_ms ();
    timeout = 1000;
    if (direct_timeout >= 0 && direct_timeout < timeout)
      timeout = direct_timeout;
    if (retry_timeout >= 0 && retry_timeout < timeout)
      timeout = retry_timeout;
    mc = curl_multi_poll (http.multi, nwait ? wait : NULL, nwait, (int) timeout, NULL);
    if (mc != CURLM_OK)
      fatal ("libcurl: curl_multi_poll: %s", curl_multi_strerror (mc));
    if (want_input && wait[0].revents != 0)
      input_ready = true;
    direct_progress (want_input ? wait + 1 : wait, ndirect);
    if (script_fd () >= 0 && wait[nwait - 1].revents != 0)
      script_input ();
    start_handed_reads ();
    start_due_retries ();
    mc = curl_multi_perform (http.multi, &running);
    if (mc != CURLM_OK)
      fatal ("libcurl: curl_multi_perform: %s", curl_multi_strerror (mc));
    finish_done_transfers ();
  }
}

const struct fetcher_backend fetcher_http_backend = {
  .name = "http",
  .open_reads_untrusted = true,
  .init = http_init,
  .open = http_open,
  .serve = http_serve,
};
