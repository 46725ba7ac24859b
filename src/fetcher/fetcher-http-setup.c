/*
 * fetcher-http-setup.c: a transfer slot's libcurl handle.  Its options
 * follow from the export's configuration (the curl keys, curl-keys.h):
 * the schemes it may use, timeouts, TLS, credentials, the route (proxy,
 * Unix socket, HTTP version), the cookie store, the header lists, the
 * callbacks (fetcher-http-receive.c); the open's options are switched to
 * those of range reads of the pinned URL once it is open; and before each
 * transfer the handle is renewed (renew_easy says why).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "config-build.h"
#include "fetcher-curl.h"
#include "fetcher-wire.h"
#include "limits-reply.h"
#include "limits-transfer.h"

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
bool
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
int
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

/* The server's certificate, and the TLS it is spoken with. */
static int
transfer_setup_tls (CURL *easy)
{
  const struct fetcher_config *cfg = http.f->cfg;

  /* --cainfo and --capath's certificates, which the supervisor read
   * (fetcher.c, take_ca_bundle): in place of libcurl's default CA file;
   * its default CA directory stays, as with a CURLOPT_CAINFO path.  A
   * copy of this handle (the direct https reads' CONNECT_ONLY handles,
   * direct-tls.c) points at the same bytes. */
  if (fetcher_ca_bundle_len > 0) {
    struct curl_blob ca = { (void *) fetcher_ca_bundle, fetcher_ca_bundle_len,
                            CURL_BLOB_NOCOPY };
    SETOPT (easy, CURLOPT_CAINFO_BLOB, &ca);
  }
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
  return 0;
}

/* Options every transfer has, set once per easy handle. */
int
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
   * same rule: direct-wait.c). */
  SETOPT (easy, CURLOPT_LOW_SPEED_LIMIT, (long) MIN_TRANSFER_RATE);
  SETOPT (easy, CURLOPT_LOW_SPEED_TIME, (long) fetcher_stall_timeout (cfg));
  if (transfer_setup_tls (easy) == -1)
    return -1;
  /* --auth-user and --auth-password: libcurl sends them to the URL's host
   * only, never to one a redirect leads to (no CURLOPT_UNRESTRICTED_AUTH);
   * reads check the pinned URL the same way (transfer_setup_reads). */
  if (cfg->auth_user[0] != '\0')
    SETOPT (easy, CURLOPT_USERNAME, cfg->auth_user);
  if (cfg->auth_password[0] != '\0')
    SETOPT (easy, CURLOPT_PASSWORD, cfg->auth_password);
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
int
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
int
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

/* A slot's libcurl handle, made at its first read through libcurl, set
 * up as the open handle was (the options can only fail for lack of
 * memory).  Returns 0, or -1 with the slot left without one. */
int
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
