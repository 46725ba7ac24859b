/*
 * fetcher-transfer.c: what fetcher-http.c and fetcher-direct.c share about
 * transfers: the network fetcher's state, its queue of requests waiting
 * for a transfer, starting a transfer's reply afresh, and ending a read.
 * Both use it; it uses neither, so calls go one way: fetcher-http.c
 * drives fetcher-direct.c, and both stand on this file and web-reply.c.
 */
#include <errno.h>
#include <inttypes.h>

#include "fetcher-http.h"

struct http_state http;

void
reply_begin (struct transfer *t)
{
  const struct web_request req = {
    .kind = t->mode == MODE_HEAD ? WEB_REQUEST_HEAD
      : t->mode == MODE_PROBE ? WEB_REQUEST_PROBE : WEB_REQUEST_RANGE,
    .offset = t->offset,
    .length = t->length,
    .size = http.f->size,
    .etag = http.etag,
    .last_modified = http.last_modified,
  };

  web_reply_reset (&t->reply, &req);
  t->refused[0] = '\0';
}

void
queue_push (const struct fetcher_request *req)
{
  /* The caller checked queue_len < QUEUE_SIZE. */
  http.queue[(http.queue_head + http.queue_len) % QUEUE_SIZE] = *req;
  http.queue_len++;
}

void
queue_push_front (const struct fetcher_request *req)
{
  /* The caller checked queue_len < QUEUE_SIZE. */
  http.queue_head = (http.queue_head + QUEUE_SIZE - 1) % QUEUE_SIZE;
  http.queue[http.queue_head] = *req;
  http.queue_len++;
}

struct fetcher_request
queue_pop (void)
{
  struct fetcher_request req = http.queue[http.queue_head];

  /* The caller checked queue_len > 0. */
  http.queue_head = (http.queue_head + 1) % QUEUE_SIZE;
  http.queue_len--;
  return req;
}

void
release (struct transfer *t)
{
  t->data = NULL;               /* the data area's, not ours */
  t->direct = false;            /* its connection (t->sock) stays */
  t->next_free = http.free_list;
  http.free_list = t;
  http.active--;                /* counted by start_read */
}

void
fail_read (struct transfer *t, const char *why)
{
  unsigned i;

  warn ("export \"%s\" (%s): read of %" PRIu32 " bytes at offset %" PRIu64
        " failed: %s", http.f->export_name, http.f->log_url, t->length,
        t->offset, why);
  for (i = t->next_part; i < t->nparts; i++)
    fetcher_reply (t->parts[i].id, EIO);
}
