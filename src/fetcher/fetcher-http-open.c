/*
 * fetcher-http-open.c: opening an http, https, ftp or ftps export through
 * libcurl.  A HEAD request (redirects followed), and when that does not
 * settle the size and range support, a probe "Range: bytes=0-0"; FTP
 * gives the size by its SIZE command.  The final URL of the redirects,
 * the size and the object's validators (ETag, Last-Modified) are pinned
 * for the life of the connection, and the pool of transfers is made
 * ready for range reads.  A failure is an errno and why, for the
 * front-end (open_failed).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "fetcher-cache.h"
#include "fetcher-curl.h"
#include "fetcher-wire.h"

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
    return open_failed (ENOENT, "not found (HTTP %ld): check the URL", status);
  case 401:
    return open_failed (EACCES, "access denied (HTTP 401): the web server wants "
                        "credentials (user= and password=, or header=)");
  case 403:
    return open_failed (EACCES, "access denied (HTTP 403): check the credentials, "
                        "or that a signed URL has not expired");
  case 200:
    return open_failed (EIO, NO_RANGES_MESSAGE);
  default:
    return open_failed (EIO, "the server answered HTTP %ld%s", status,
                        status >= 500 ? ": the web server's own error (try again later, "
                        "or ask its administrators)" : "");
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
    return open_failed (ENOENT, "not found: %s: check the URL", curl_message (t, rc));
  case CURLE_LOGIN_DENIED:
    return open_failed (EACCES, "access denied: %s: check user= and password=",
                        curl_message (t, rc));
  case CURLE_REMOTE_ACCESS_DENIED:
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

void
http_init (struct fetcher *f)
{
  CURLcode rc;

  (void) f;
  /* Before the sandbox: TLS libraries read their configuration here. */
  rc = curl_global_init (CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK)
    fatal ("libcurl: curl_global_init: %s", curl_easy_strerror (rc));
}

/* The multi handle: never more than n connections, all kept for reuse. */
static void
make_multi (const struct fetcher *f, uint32_t n)
{
  http.multi = curl_multi_init ();
  if (http.multi == NULL)
    fatal ("libcurl: curl_multi_init failed");
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
}

/* The n transfer slots, without a connection of their own yet. */
static void
make_pool (uint32_t n)
{
  uint32_t i;

  http.pool = calloc (n, sizeof *http.pool);
  if (http.pool == NULL)
    fatal_errno ("calloc");
  for (i = 0; i < n; i++)
    http.pool[i].sock = -1;
}

/* resolve= as libcurl's list for CURLOPT_RESOLVE. */
static void
build_resolve (const struct fetcher_config *cfg)
{
  char *block;

  if (asprintf (&block, "%s", cfg->resolve) == -1)
    fatal_errno ("asprintf");
  /* One entry a line, as options-nbdkit.c wrote them. */
  for (char *line = strtok (block, "\n"); line; line = strtok (NULL, "\n")) {
    http.resolve = curl_slist_append (http.resolve, line);
    if (http.resolve == NULL)
      fatal ("libcurl: out of memory");
  }
  free (block);
}

/* The first handle opens; its connection stays for the reads.  Returns
 * 0, or an errno after open_failed. */
static int
open_object (struct transfer *t)
{
  int error;

  error = open_head (t);
  if (error == EACCES && script_renew_blocking ()) {
    /* Refused (401, 403): once more with the scripts' renewed values. */
    curl_slist_free_all (http.open_headers);
    build_open_headers ();
    if (curl_easy_setopt (t->easy, CURLOPT_HTTPHEADER, http.open_headers) != CURLE_OK)
      return open_failed (EIO, "libcurl refused an option (see above)");
    error = open_head (t);
  }
  transfer_reset (t, MODE_READ);
  return error;
}

/* The object is open: the reads' headers and the direct path made ready,
 * the first handle switched to range reads, every slot free, and what
 * the front-end is told set. */
static int
prepare_reads (struct fetcher *f, uint32_t n)
{
  uint32_t i;

  if (http.range_is_http) {
    build_preconditions ();
    build_read_headers ();
  }
  fetcher_cache_pin (http.range_url, f->size, http.etag, http.last_modified);
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
  scan_init (f, fetcher_cache_block_size (), fetcher_cache_capacity ());
  /* Read-only: no write, flush or FUA; a store stages (fetcher-staging.c). */
  f->can = http.range_is_http && f->cfg->readahead > 0 ? FETCHER_CAN_STAGE : 0;
  f->piped_read_max = direct_piped () ? fetcher_pipe_read_max : 0;
  return 0;
}

int
http_open (struct fetcher *f)
{
  const uint32_t n = f->cfg->connections;   /* 1 .. MAX_CONNECTIONS */
  int error;

  http.f = f;
  make_multi (f, n);
  make_pool (n);
  /* header-script=, cookie-script=: their first values, before any
   * request goes out. */
  script_init (f->cfg);
  error = script_wait_first (f);
  if (error != 0)
    return error;
  /* Only the first slot gets its libcurl handle now; the others when a
   * read first goes through libcurl (ensure_easy).  Direct reads need
   * none, and each handle costs heap it touches, in every fetcher. */
  build_open_headers ();
  build_resolve (f->cfg);
  http.pool[0].easy = curl_easy_init ();
  if (http.pool[0].easy == NULL)
    fatal ("libcurl: curl_easy_init failed");
  if ((f->cfg->flags & FETCHER_COOKIE_ENGINE) && load_cookies (http.pool[0].easy) == -1)
    return open_failed (EIO, "libcurl refused an option (see above)");
  if (transfer_setup (&http.pool[0]) == -1)
    return open_failed (EIO, "libcurl refused an option (see above)");
  error = open_object (&http.pool[0]);
  if (error != 0)
    return error;
  return prepare_reads (f, n);
}
