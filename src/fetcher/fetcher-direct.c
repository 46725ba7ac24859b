/*
 * fetcher-direct.c: range reads of http and https URLs without libcurl's
 * transfers: plain-http bodies spliced from the server's socket into the
 * data pipe (larger ones received into the data area), https bodies
 * decrypted into the data area.
 *
 * Why: libcurl reads every body into its own buffer, and the data area
 * path then copies it again; for a sequential copy those copies are a
 * large share of all the CPU time.
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
 * line by line (direct-head-parse.c); the checker of libcurl's replies decides whether it is
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
 * wait in their sockets, made big enough for them: see direct-sizing.c); each
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
 * https URLs go direct too (see direct-tls.c): each slot's connection is
 * made by libcurl (CURLOPT_CONNECT_ONLY), with every option the open
 * had, so certificate, host name, pinning and client-key checks are
 * libcurl's own; the requests and replies above then go over it
 * (curl_easy_send and curl_easy_recv), and each body is decrypted
 * straight into its reads' places in the data area, with no pipe and
 * no owner queue: every connection receives at once.
 *
 * This file is a read's start and its state machine (step), and what
 * fetcher-http.c asks of the path; each other concern is a direct-*.c
 * file beside it, all named in direct.h ("Sizing" is direct-sizing.c,
 * "TLS" direct-tls.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "direct-head-parse.h"
#include "direct.h"
#include "limits-reply.h"

/* Bytes asked for by each read of a reply's header section. */
#define HEADER_READ_STEP 1024

struct direct_path direct;

/* ---- A read's start ---- */

void
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
  fetcher_stats.web_requests++;
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
  /* The parts are all of one kind (start_read): the first says which.
   * A prefetch's one part is its segment of the store. */
  t->to_area = direct.tls || t->prefetch != NULL ||
    t->parts[0].length > fetcher_pipe_read_max;
  if (t->head == NULL) {
    /* Grown when a reply needs more (receive_headers): most header
     * sections fit, and sixteen slots' worth of 16 KiB would be touched
     * memory. */
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

/* ---- The state machine ---- */

/* A complete header section is in head[0..end).  Returns true if the
 * read goes on (to the owner queue, or reading the next section). */
static bool
headers_done (struct transfer *t, size_t end)
{
  struct reply_framing framing;
  uint64_t length;
  const char *why = NULL;
  enum head_parse parsed = parse_header_section (&t->reply, t->head, end, &framing, &why);

  t->conn_close = framing.conn_close;
  length = framing.length;
  switch (parsed) {
  case HEAD_PARSE_FAIL:
    direct_fail_cause (t, RETRY_CAUSE_REPLY, t->reply.problem);
    return false;
  case HEAD_PARSE_GIVE_UP:
    direct_give_up (t, why);
    return false;
  case HEAD_PARSE_OK:
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

/* DIRECT_CONNECTING, plain http: has the connection come up (or
 * failed to)?  Returns true if the read goes on, to send its request. */
static bool
connect_done (struct transfer *t)
{
  int err = 0;
  socklen_t len = sizeof err;
  struct pollfd pfd = { .fd = t->sock, .events = POLLOUT };

  if (direct.tls)
    return false;               /* its multi handle runs it (tls_connects) */
  if (poll (&pfd, 1, 0) != 1)
    return false;
  if (getsockopt (t->sock, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
    err = errno;
  if (err != 0) {
    direct_failf (t, errno_cause (err), "cannot connect to the web server: %s",
                  strerror (err));
    return false;
  }
  t->dstate = DIRECT_SENDING;
  start_window (t);
  return true;
}

/* DIRECT_SENDING: more of the request goes out.  Returns true if the
 * read goes on (more to send, or all sent: its reply is awaited). */
static bool
send_request (struct transfer *t)
{
  ssize_t r = conn_send (t, t->request + t->request_sent, t->request_len - t->request_sent);

  if (r == -1) {
    int e = errno;
    if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR)
      return false;
    if (!retry_on_new_connection (t))
      direct_failf (t, errno_cause (e), "sending the request: %s", conn_error (t, e));
    return false;
  }
  t->request_sent += (size_t) r;
  if (t->request_sent == t->request_len) {
    t->dstate = DIRECT_HEADERS;     /* in the same window */
    quick_ack (t);                  /* the body may wait unread */
    hold_body (t);
    t->sent_us = clock_us ();
  }
  return true;
}

/* DIRECT_HEADERS, the section not complete: more of it into head, grown
 * as needed up to MAX_RESPONSE_HEADER_BYTES.  Returns true if bytes
 * came. */
static bool
receive_headers (struct transfer *t)
{
  ssize_t r;

  if (t->head_len == MAX_RESPONSE_HEADER_BYTES) {
    char why[80];
    snprintf (why, sizeof why, "a reply's headers are longer than %u bytes",
              MAX_RESPONSE_HEADER_BYTES);
    direct_give_up (t, why);
    return false;
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
    return false;
  if (r <= 0) {
    int e = r == 0 ? 0 : errno;
    if (!retry_on_new_connection (t))
      direct_failf (t, RETRY_CAUSE_TRANSIENT,
                    "the server %s before its reply was complete",
                    e == 0 ? "closed the connection" : conn_error (t, e));
    return false;
  }
  t->head_len += (size_t) r;
  return true;
}

/* DIRECT_HEADERS: a complete header section is taken, or more of one
 * read.  Returns true if the read goes on here: to the next section
 * (after an interim reply), or to its body into the data area; false
 * when it must wait, has ended, or waits in the owner queue (which runs
 * it). */
static bool
read_headers (struct transfer *t)
{
  size_t end = header_section_end (t->head, t->head_len, &t->head_scanned);

  if (end == 0)
    return receive_headers (t);
  if (fetcher_tracing ())
    fetcher_trace_block ('<', (const char *) t->head, end);
  return headers_done (t, end) && t->dstate != DIRECT_QUEUED;
}

/* Run one read's state machine as far as it goes without waiting. */
void
step (struct transfer *t)
{
  for (;;) {
    bool more = false;

    switch ((enum direct_state) t->dstate) {
    case DIRECT_CONNECTING:
      more = connect_done (t);
      break;
    case DIRECT_SENDING:
      more = send_request (t);
      break;
    case DIRECT_HEADERS:
      more = read_headers (t);
      break;
    case DIRECT_BODY:
      if (t->to_area)
        tls_receive_body (t);
      return;                   /* else the owner queue runs it */
    case DIRECT_QUEUED:
      return;                   /* the owner queue runs these */
    case DIRECT_HANDED:
      return;                   /* libcurl's now */
    }
    if (!more)
      return;
  }
}

/* ---- What fetcher-http.c asks ---- */

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
