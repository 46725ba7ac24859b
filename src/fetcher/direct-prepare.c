/*
 * direct-prepare.c: may an export's reads go direct?  Decided once its
 * open succeeded (direct_prepare), from the URL libcurl pinned, the
 * route and the HTTP version, and again when the header lines change
 * (direct_headers_changed); and the request head every direct read
 * sends, but for its Range.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "config-build.h"
#include "direct.h"
#include "fetcher-cache.h"
#include "fetcher-wire.h"
#include "limits-strings.h"

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
  /* With a cache there is no pipe: every read goes into the data area. */
  if (why == NULL && !direct.tls && (fetcher_pipe_fd < 0 || fetcher_pipe_read_max == 0) &&
      !fetcher_cache_on ())
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
