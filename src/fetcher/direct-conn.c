/*
 * direct-conn.c: each slot's own connection to the web server, kept
 * across reads: opened (plain TCP or a Unix socket here, https through
 * direct-tls.c), reused while the server neither closed it nor sent
 * anything unasked, sent on and received from as send(2) and recv(2)
 * say it whichever it is, and closed.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "direct.h"
#include "fetcher-wire.h"
#include "limits-transfer.h"

void
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

/* A kept connection may be used again only if the server has neither
 * closed it nor sent anything unasked. */
bool
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
 * and the body comes on only after that round: a stall of tens of
 * milliseconds for the whole queue of reads behind it, the tail latency
 * of a deep queue of sequential reads.  Quick-ACK mode lasts a few
 * segments, so it is set again each time the socket is used
 * (TCP_QUICKACK(7)). */
void
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

ssize_t
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

ssize_t
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
const char *
conn_error (const struct transfer *t, int e)
{
  return direct.tls && e == EIO && t->errbuf[0] != '\0' ? t->errbuf : strerror (e);
}

int
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

/* Could the failure of a reused connection be the server closing it as
 * the request went out?  Then the read is tried once on a new one, as
 * every HTTP client does for a GET. */
bool
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
