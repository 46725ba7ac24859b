/*
 * fetcher-connect.c: where a network fetcher may connect.
 *
 * A web server an export's URL names can send its fetcher elsewhere with
 * a redirect, and the operator who wrote the URL did not choose where.
 * Two rules bound that, each checked on every connection libcurl opens
 * (CURLOPT_OPENSOCKETFUNCTION, so after name resolution and before the
 * connect, with the address the connection is really going to):
 *
 *   ports      the URL's own port, the default ports of http and https
 *              (80 and 443: an http URL that moved to https, a CDN), and
 *              --allow-port; with followlocation=false the URL's port
 *              only.  The fetcher's Landlock rules (fetcher.c) allow the
 *              same set, so a kernel that has Landlock's TCP layer refuses
 *              even a connection this check were to miss; this check
 *              gives the message that names the option.
 *   addresses  a URL whose host is not on this machine may not lead to a
 *              loopback, link-local or unspecified address (services on
 *              the host, cloud metadata at 169.254.169.254), unless
 *              --allow-local-redirects.  Checked on the address, not the
 *              name, so a name that resolves to 127.0.0.1 is caught too.
 *
 * FTP URLs connect to any port (passive data connections go where the
 * server says), so for them only the address rule applies.  A connection
 * to the proxy (proxy=) passes: the proxy makes the connections the
 * rules are about (and the fetcher's Landlock rules allow only its port);
 * hosts no_proxy exempts are reached directly, under the rules.  With
 * unix-socket-path= every connection is to that one socket.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "fetcher-http.h"
#include "fetcher-wire.h"
#include "limits-web.h"
#include "url.h"

/* The ports of one export, found once (fetcher_connect_ports). */
static struct {
  bool known;
  uint16_t ports[4 + MAX_ALLOWED_PORTS];
  size_t nports;                /* without DNS's 53 */
  bool any_port;
  /* The URL's host and port, to tell its own connections from those a
   * redirect leads to. */
  char *origin_host;
  long origin_port;
  /* Was a connection to the URL's own host to an address on this machine? */
  bool origin_local;
} connect_rules;

static bool
port_listed (const uint16_t *ports, size_t n, uint16_t port)
{
  size_t i;

  for (i = 0; i < n; i++)
    if (ports[i] == port)
      return true;
  return false;
}

static void
add_port (uint16_t *ports, size_t *n, size_t max, uint16_t port)
{
  if (port != 0 && *n < max && !port_listed (ports, *n, port))
    ports[(*n)++] = port;
}

/* Host and port of a URL, as libcurl reads it (default port filled in);
 * the host is malloc'd.  Returns 0, or -1 when it cannot be read. */
static int
host_and_port (const char *url, char **host, long *port, bool *is_ftp)
{
  CURLU *u = curl_url ();
  char *h = NULL, *p = NULL, *scheme = NULL;
  int r = -1;

  if (u != NULL &&
      curl_url_set (u, CURLUPART_URL, url, 0) == CURLUE_OK &&
      curl_url_get (u, CURLUPART_HOST, &h, 0) == CURLUE_OK &&
      curl_url_get (u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
      curl_url_get (u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) == CURLUE_OK) {
    *host = strdup (h);
    *port = strtol (p, NULL, 10);
    if (is_ftp)
      *is_ftp = strcasecmp (scheme, "ftp") == 0 || strcasecmp (scheme, "ftps") == 0;
    r = *host != NULL ? 0 : -1;
  }
  curl_free (h);
  curl_free (p);
  curl_free (scheme);
  curl_url_cleanup (u);
  return r;
}

int
fetcher_connect_ports (const struct fetcher_config *cfg, uint16_t *ports, size_t max,
                       bool *any_port)
{
  const size_t own = sizeof connect_rules.ports / sizeof connect_rules.ports[0];
  uint32_t schemes = cfg->flags & FETCHER_PROTO_ALL;
  uint16_t dns_port = 0;
  size_t i;
  int n;

  if (!connect_rules.known) {
    /* The URL's port, and DNS over TCP for a host name (url.c). */
    n = url_connect_ports (cfg->url, connect_rules.ports, 2, &connect_rules.any_port);
    if (n < 1)
      return -1;
    if (n == 2)
      dns_port = connect_rules.ports[1];
    connect_rules.nports = 1;
    if (!(cfg->flags & FETCHER_NO_REDIRECTS)) {
      if (schemes == 0 || (schemes & FETCHER_PROTO_HTTP))
        add_port (connect_rules.ports, &connect_rules.nports, own, 80);
      if (schemes == 0 || (schemes & FETCHER_PROTO_HTTPS))
        add_port (connect_rules.ports, &connect_rules.nports, own, 443);
      for (i = 0; i < MAX_ALLOWED_PORTS; i++)
        add_port (connect_rules.ports, &connect_rules.nports, own, cfg->allow_ports[i]);
    }
    if (host_and_port (cfg->url, &connect_rules.origin_host,
                       &connect_rules.origin_port, NULL) == -1)
      return -1;
    connect_rules.known = true;
  }
  *any_port = connect_rules.any_port;
  n = 0;
  for (i = 0; i < connect_rules.nports && (size_t) n < max; i++)
    ports[n++] = connect_rules.ports[i];
  if (dns_port != 0 && (size_t) n < max && !port_listed (ports, (size_t) n, dns_port))
    ports[n++] = dns_port;
  return n;
}

/* Loopback (127/8, ::1), link-local (169.254/16, fe80::/10) or
 * unspecified (0/8 and ::, which Linux connects to the host itself),
 * IPv4 addresses mapped into IPv6 included. */
static bool
address_is_local (const struct sockaddr *sa, char *text, size_t text_size)
{
  /* Copied out: libcurl's sockaddr is not aligned for the cast. */
  struct sockaddr_in sin;
  struct sockaddr_in6 sin6;
  const uint8_t *b;

  if (sa->sa_family == AF_INET) {
    memcpy (&sin, sa, sizeof sin);
    inet_ntop (AF_INET, &sin.sin_addr, text, (socklen_t) text_size);
    b = (const uint8_t *) &sin.sin_addr;
  }
  else if (sa->sa_family == AF_INET6) {
    memcpy (&sin6, sa, sizeof sin6);
    inet_ntop (AF_INET6, &sin6.sin6_addr, text, (socklen_t) text_size);
    if (IN6_IS_ADDR_LOOPBACK (&sin6.sin6_addr) ||
        IN6_IS_ADDR_LINKLOCAL (&sin6.sin6_addr) ||
        IN6_IS_ADDR_UNSPECIFIED (&sin6.sin6_addr))
      return true;
    if (!IN6_IS_ADDR_V4MAPPED (&sin6.sin6_addr))
      return false;
    b = (const uint8_t *) &sin6.sin6_addr + 12;
  }
  else {
    snprintf (text, text_size, "(family %d)", sa->sa_family);
    return true;        /* libcurl opens only IP sockets here: refuse others */
  }
  return b[0] == 127 || b[0] == 0 || (b[0] == 169 && b[1] == 254);
}

static uint16_t
address_port (const struct sockaddr *sa)
{
  struct sockaddr_in sin;
  struct sockaddr_in6 sin6;

  if (sa->sa_family == AF_INET) {
    memcpy (&sin, sa, sizeof sin);
    return ntohs (sin.sin_port);
  }
  if (sa->sa_family == AF_INET6) {
    memcpy (&sin6, sa, sizeof sin6);
    return ntohs (sin6.sin6_port);
  }
  return 0;
}

/* The list of allowed ports, for a message. */
static void
port_list_text (char *buf, size_t size)
{
  size_t i, len = 0;

  buf[0] = '\0';
  for (i = 0; i < connect_rules.nports && len < size; i++) {
    int w = snprintf (buf + len, size - len, "%s%u", i ? ", " : "",
                      connect_rules.ports[i]);
    if (w < 0)
      break;
    len += (size_t) w;
  }
}

curl_socket_t
fetcher_open_socket (void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
  struct transfer *t = clientp;
  const struct fetcher_config *cfg = http.f->cfg;
  const struct sockaddr *sa = &a->addr;
  char *url = NULL, *host = NULL, *shown = NULL, addr_text[INET6_ADDRSTRLEN + 16];
  char ports[8 * (4 + MAX_ALLOWED_PORTS)];
  long port = 0;
  bool is_ftp = false, own_host, local;
  uint16_t to_port = address_port (sa);
  curl_socket_t s;

  (void) purpose;
  t->refused[0] = '\0';
  if (cfg->unix_socket_path[0] != '\0' && a->family == AF_UNIX)
    return socket (AF_UNIX, a->socktype | SOCK_CLOEXEC, a->protocol);
  if (cfg->proxy[0] != '\0') {
    uint16_t proxy[2];
    if (url_proxy_connect_ports (cfg->proxy, proxy, 2) >= 1 && to_port == proxy[0])
      return socket (a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
  }
  if (!connect_rules.known) {
    uint16_t unused[4 + MAX_ALLOWED_PORTS];
    bool any;
    if (fetcher_connect_ports (cfg, unused, sizeof unused / sizeof unused[0], &any) < 0)
      goto refuse_unknown;
  }
  /* The handle this connection is for: the slot's own, or its direct
   * https read's (direct-tls.c), connecting now. */
  if (curl_easy_getinfo (t->direct && t->tls != NULL ? t->tls : t->easy,
                         CURLINFO_EFFECTIVE_URL, &url) != CURLE_OK ||
      url == NULL || host_and_port (url, &host, &port, &is_ftp) == -1)
    goto refuse_unknown;
  own_host = strcasecmp (host, connect_rules.origin_host) == 0 &&
             port == connect_rules.origin_port;
  local = address_is_local (sa, addr_text, sizeof addr_text);
  if (own_host)
    connect_rules.origin_local |= local;
  shown = url_for_log (url);

  if (!connect_rules.any_port && !is_ftp &&
      !port_listed (connect_rules.ports, connect_rules.nports, to_port)) {
    port_list_text (ports, sizeof ports);
    if (cfg->flags & FETCHER_NO_REDIRECTS)
      snprintf (t->refused, sizeof t->refused,
                "a connection to %s (port %u) was refused: followlocation=false "
                "allows only the URL's port %s", shown ? shown : "(URL)", to_port, ports);
    else
      snprintf (t->refused, sizeof t->refused,
                "a redirect to %s was refused: port %u is not one a redirect may "
                "lead to (%s); to allow it, add --allow-port %u",
                shown ? shown : "(URL)", to_port, ports, to_port);
    goto refuse;
  }
  if (local && !own_host && !connect_rules.origin_local &&
      !(cfg->flags & FETCHER_ALLOW_LOCAL_REDIRECTS)) {
    snprintf (t->refused, sizeof t->refused,
              "a redirect to %s was refused: it leads to %s, an address of this "
              "machine (loopback or link-local), from a URL on another host; to "
              "allow it, add --allow-local-redirects",
              shown ? shown : "(URL)", addr_text);
    goto refuse;
  }
  free (host);
  free (shown);
  s = socket (a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
  return s;

 refuse_unknown:
  snprintf (t->refused, sizeof t->refused,
            "a connection was refused: the URL it is for cannot be read");
 refuse:
  free (host);
  free (shown);
  errno = EACCES;
  return CURL_SOCKET_BAD;
}
