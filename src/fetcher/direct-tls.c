/*
 * direct-tls.c: the connections of direct reads over https, made by
 * libcurl (see below), and how the event loop waits for them to come up.
 */
#include <errno.h>
#include <string.h>
#include <sys/select.h>

#include <openssl/ssl.h>

#include "direct.h"
#include "limits-direct.h"

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

bool
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
int
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
    /* The connect deadline is the direct path's (set_deadline). */
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

bool
tls_connecting_slot (const struct transfer *t)
{
  return t->direct && t->tls != NULL && t->dstate == DIRECT_CONNECTING;
}

void
tls_connects (void)
{
  unsigned i;

  for (i = 0; direct.tls && i < http.f->cfg->connections; i++)
    if (tls_connecting_slot (&http.pool[i]))
      tls_connect_step (&http.pool[i]);
}

bool
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
unsigned
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
