/*
 * fetcher-http-receive.c: what a libcurl transfer receives.  The header
 * callback hands every line of an HTTP reply to the reply checker
 * (web-reply.c); the write callback takes the body only once the reply
 * passed its checks, refuses its first byte otherwise and any byte past
 * the length asked for, and scatters it over the requests of the range,
 * answering each as soon as it is complete.
 */
#include <inttypes.h>
#include <string.h>

#include "fetcher-curl.h"

size_t
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
long
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
bool
reply_ok (struct transfer *t)
{
  return !t->parse_headers || web_reply_check (&t->reply);
}

size_t
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
  fetcher_stats.web_bytes += len;
  if (t->nparts == 0) {
    if (len > 0)
      memcpy (t->data + t->received - len, ptr, len);
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
        answer_part (t, p);
        t->next_part++;
        t->part_received = 0;
      }
    }
  }
  return len;
}

void
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
  t->scan = false;
  t->window_bytes = 0;
  t->limit_ms = UINT64_MAX;
  t->retries = 0;
  t->retry_at_ms = 0;
  t->retry_direct = false;
  t->errbuf[0] = '\0';
}
