/*
 * fetcher-http.c: http, https, ftp and ftps exports, through libcurl: the
 * backend, and its loop that serves the reads.
 *
 * Open (fetcher-http-open.c): a HEAD request (redirects followed), and
 * when that does not settle the size and range support, a probe "Range:
 * bytes=0-0".  The final URL of the redirects, the size and the object's
 * validators (ETag, Last-Modified) are pinned for the life of the
 * connection.
 *
 * Serve (here): pipelined.  A curl multi handle runs up to
 * cfg->connections range transfers at once over kept-alive connections;
 * the front-end's socket is one more fd in curl_multi_poll, so new
 * requests are read while transfers run.  Requests beyond the pool wait
 * in a queue; when the queue is full the socket is not read, which pushes
 * back on the front-end.  Replies go back in completion order (ids
 * identify them).  Reads the direct path takes (fetcher-direct.c) wait in
 * the same poll.
 *
 * The web server is untrusted.  A range reply is used only if it is a 206
 * whose Content-Range names exactly the requested bytes of an object of
 * the size seen at open, whose validators did not change, and whose body
 * is exactly as long as asked for.  The write callback
 * (fetcher-http-receive.c) refuses the first byte of any other body (a
 * 200 with the whole object is never downloaded) and any byte past the
 * requested length.  Anything else is EIO for that request and a warning
 * that says what was wrong (fetcher-http-errors.c).
 *
 * Each transfer's libcurl handle is set up by fetcher-http-setup.c, with
 * the header lists of fetcher-http-headers.c; these files share
 * fetcher-curl.h.
 */
#include <inttypes.h>
#include <stdio.h>

#include <curl/curl.h>

#include "child-fds.h"
#include "clock.h"
#include "fetcher-cache.h"
#include "fetcher-curl.h"
#include "ipc-messages.h"
#include "limits-cache.h"
#include "limits-web.h"

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

void
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
  if (mc == CURLM_OK)
    fetcher_stats.web_requests++;
  if (mc != CURLM_OK) {
    char why[PROBLEM_MAX];
    snprintf (why, sizeof why, "libcurl could not start it: %s", curl_multi_strerror (mc));
    if (t->prefetch != NULL)
      readahead_finished (t->prefetch, why);
    else if (t->scan)
      scan_finished (t, why);
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
  /* What the export's cache holds of its start is copied, and only the
   * rest fetched (a reader going on from where a cache left off, or
   * through blocks another client read); all of it: no request. */
  uint32_t held = fetcher_cache_copy_prefix (offset, length, buf);

  if (held == length) {
    readahead_finished (s, NULL);
    return;
  }
  offset += held;
  length -= held;
  buf += held;

  http.free_list = t->next_free;
  http.active++;
  transfer_reset (t, MODE_READ);
  t->offset = offset;
  t->length = length;
  t->data = buf;                /* through libcurl: no parts, the body goes to buf */
  t->prefetch = s;
  /* --timeout: a window that stalls fails like a read, and the reads
   * that wait for it go on their own. */
  if (http.f->cfg->timeout != 0)
    t->limit_ms = monotonic_ms () + (uint64_t) http.f->cfg->timeout * 1000;
  if (!http.direct) {
    start_curl_read (t);
    return;
  }
  /* Through the direct path: one part, the segment, received into it
   * (never the pipe: the bytes must land here); no libcurl buffer and
   * no copy out of it.  Should the direct path hand it to libcurl, it
   * goes as above (direct_to_libcurl). */
  t->parts[0].id = 0;
  t->parts[0].data = buf;
  t->parts[0].length = length;
  t->parts[0].auth_retried = false;
  t->nparts = 1;
  direct_start (t);
  start_handed_reads ();
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
        readahead_overlaps (next->offset, next->length) ||
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

  if (t->scan)
    scan_finished (t, why);     /* its own buffer, no parts, no retries */
  else if (t->prefetch != NULL) {
    if (why == NULL)
      fetcher_cache_keep (t->offset, t->data, t->length);
    else if (t->reply.object_changed)
      fetcher_cache_changed ();
    readahead_finished (t->prefetch, why);   /* its own buffer, no parts */
  }
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
    answer_part (t, t->next_part);
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

/* Take what the front-end sent, while the queue has room.  Returns false
 * when the front-end has gone; at a half-close *input_open becomes false. */
static bool
take_requests (struct fetcher *f, bool *input_open, bool input_ready)
{
  /* Each pass queues one request, so at most QUEUE_SIZE passes. */
  while (*input_open && http.queue_len < QUEUE_SIZE &&
         (input_ready || fetcher_input_buffered ())) {
    struct fetcher_request req;
    int r = fetcher_next_request (f, &req);
    if (r == -1) {
      fetcher_flush_replies ();
      if (fetcher_front_end_gone ())
        return false;
      /* A half-close: it still reads replies, so finish what it asked. */
      if (http.active + http.queue_len > 0)
        debug ("the front-end closed its end; finishing %u reads",
               http.active + http.queue_len);
      *input_open = false;
      scan_stop ();             /* the connection ends with its reads */
      break;
    }
    if (r == 0)
      break;
    if (req.type == IPC_STAGE_GIVE) {
      staging_given (&req);
      continue;
    }
    /* The export is read-only, so the reader refused writes and
     * flushes (f->can has no FETCHER_CAN_WRITE or _FLUSH). */
    if (req.type != IPC_READ && req.type != IPC_CACHE)
      fatal ("internal error: request type %u on a read-only export", req.type);
    queue_push (&req);
  }
  return true;
}

/* Start what the queue holds, as far as the free transfers, the scripts
 * and the direct path allow. */
static void
start_queued_reads (void)
{
  /* Reads and CACHEs waiting for prefetches that ended. */
  readahead_progress ();
  /* FTP reads run one at a time: with several in one libcurl 7.88
   * multi handle, a control connection now and then takes a reply for
   * the wrong command ("Couldn't use REST"), and a failed read is an
   * error the client sees.  Queued sequential reads are still fetched
   * together (start_read). */
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
    /* The readahead sees every read (it follows the reader), and its
     * windows come from the cache when it holds them (start_prefetch);
     * what it hands back is looked up before it is fetched. */
    if (!readahead_take (&req) && !fetcher_cache_answer (&req))
      start_read (&req);
  }
  scan_progress ();
}

/* Wait for the front-end's socket (if want_input), the direct reads, the
 * script channel and libcurl's own descriptors, and take what the direct
 * reads and the scripts have.  Returns true when the front-end's socket
 * is readable. */
static bool
wait_for_events (bool want_input)
{
  const struct curl_waitfd peer = { .fd = CHILD_FD_PEER, .events = CURL_WAIT_POLLIN };
  struct curl_waitfd wait[1 + MAX_CONNECTIONS + 1 + 1];
  unsigned nwait = 0, ndirect;
  long direct_timeout, timeout, retry_timeout;
  CURLMcode mc;

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
  direct_progress (want_input ? wait + 1 : wait, ndirect);
  if (script_fd () >= 0 && wait[nwait - 1].revents != 0)
    script_input ();
  return want_input && wait[0].revents != 0;
}

/* Move the transfers on: reads handed over by the direct path and retries
 * that are due start, libcurl runs, and the finished ones are answered. */
static void
run_transfers (void)
{
  CURLMcode mc;
  int running;

  start_handed_reads ();
  start_due_retries ();
  mc = curl_multi_perform (http.multi, &running);
  if (mc != CURLM_OK)
    fatal ("libcurl: curl_multi_perform: %s", curl_multi_strerror (mc));
  finish_done_transfers ();
}

/* The client has gone.  The blocks its reads left in part are fetched
 * whole for the export's next clients, for CACHE_FILL_LINGER_MS at most;
 * not while a read or window of the client is in flight or queued:
 * their replies and staged bytes would go nowhere. */
static void
finish_fills (void)
{
  const uint64_t deadline = monotonic_ms () + CACHE_FILL_LINGER_MS;

  if (!scan_fills_waiting () || http.queue_len != 0 || !readahead_idle () ||
      http.active != scan_inflight ())
    return;
  scan_stop ();
  debug ("the client has gone: fetching the blocks its reads left in part");
  /* Each pass starts fills or waits for transfers, until none is left or
   * the time is up. */
  while (monotonic_ms () < deadline) {
    scan_progress ();
    if (http.active == 0)
      break;
    wait_for_events (false);
    run_transfers ();
  }
}

static void
http_serve (struct fetcher *f)
{
  bool input_open = true;
  bool input_ready = true;      /* try a read first: requests may be there */

  /* Runs until the front-end closes its end and every read is answered. */
  for (;;) {
    if (!take_requests (f, &input_open, input_ready)) {
      /* Gone: nobody will read the replies of the reads in flight. */
      finish_fills ();
      retry_summary ();
      fetcher_cache_summary ();
      return;
    }
    start_queued_reads ();
    fetcher_flush_replies ();   /* before waiting: nothing is held back */
    if (!input_open && http.active == 0 && http.queue_len == 0 && script_parked () == 0 &&
        readahead_idle ()) {
      retry_summary ();
      fetcher_cache_summary ();
      return;
    }
    input_ready = wait_for_events (input_open && http.queue_len < QUEUE_SIZE);
    run_transfers ();
  }
}

const struct fetcher_backend fetcher_http_backend = {
  .name = "http",
  .open_reads_untrusted = true,
  .init = http_init,
  .open = http_open,
  .serve = http_serve,
};
