/*
 * fetcher-transfer.c: what fetcher-http.c and fetcher-direct.c share about
 * transfers: the network fetcher's state, its queue of requests waiting
 * for a transfer, starting a transfer's reply afresh, and ending a read.
 * Both use it; it uses neither, so calls go one way: fetcher-http.c
 * drives fetcher-direct.c, and both stand on this file and web-reply.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "fetcher-cache.h"
#include "fetcher-http.h"
#include "fetcher-wire.h"
#include "limits-web.h"

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

  if (t->prefetch != NULL) {
    /* A window through the direct path: never tried again; the reads
     * that wait for it go on their own (readahead_finished says it). */
    if (t->reply.object_changed)
      fetcher_cache_changed ();
    readahead_finished (t->prefetch, why);
    t->prefetch = NULL;
    return;
  }

  char after[48] = "";

  if (t->retries > 0)
    snprintf (after, sizeof after, " (after %u %s)", t->retries,
              t->retries == 1 ? "retry" : "retries");
  warn ("export \"%s\" (%s): read of %" PRIu32 " bytes at offset %" PRIu64
        " failed: %s%s", http.f->export_name, http.f->log_url, t->length,
        t->offset, why, after);
  if (t->retries > 0)
    http.retried_failed++;
  if (t->reply.object_changed)
    fetcher_cache_changed ();
  for (i = t->next_part; i < t->nparts; i++)
    fetcher_reply (t->parts[i].id, EIO);
}

void
answer_part (struct transfer *t, unsigned p)
{
  uint64_t offset = t->offset;
  unsigned i;

  /* The parts are consecutive from t->offset. */
  for (i = 0; i < p; i++)
    offset += t->parts[i].length;
  fetcher_cache_keep (offset, t->parts[p].data, t->parts[p].length);
  if (t->prefetch != NULL) {
    /* A window through the direct path, all here and checked. */
    readahead_finished (t->prefetch, NULL);
    t->prefetch = NULL;
    return;
  }
  fetcher_reply (t->parts[p].id, 0);
}

/* ---- Retries ---- */

void
trim_answered_parts (struct transfer *t)
{
  uint64_t done = 0;
  unsigned i;

  for (i = 0; i < t->next_part; i++)
    done += t->parts[i].length;
  memmove (&t->parts[0], &t->parts[t->next_part],
           (t->nparts - t->next_part) * sizeof t->parts[0]);
  t->nparts -= t->next_part;
  t->next_part = 0;
  t->offset += done;
  t->length -= (uint32_t) done;       /* done < length: a part is left */
  t->part_received = 0;
  t->received = 0;
}

/* A number from 0 to n for jitter; n itself when the kernel has no
 * randomness to give (then the wait is simply the longest). */
static uint64_t
random_upto (uint64_t n)
{
  uint64_t r;

  if (n == 0 || getrandom (&r, sizeof r, GRND_NONBLOCK) != (ssize_t) sizeof r)
    return n;
  return r % (n + 1);
}

/* The wait before retry number t->retries + 1: the delay doubles from
 * --retry-delay (unless retry-exponential=no) up to RETRY_MAX_DELAY_MS,
 * and the wait is half of it plus up to the other half, at random; a
 * server's Retry-After (already at most RETRY_AFTER_MAX_MS) makes it
 * longer, never shorter. */
static uint64_t
retry_delay (const struct transfer *t, enum retry_cause cause)
{
  const struct fetcher_config *cfg = http.f->cfg;
  uint64_t delay = cfg->retry_delay_ms;     /* <= RETRY_MAX_DELAY_MS */
  unsigned i;

  /* At most MAX_RETRIES doublings, each capped: no overflow. */
  for (i = 0; !(cfg->flags & FETCHER_RETRY_CONSTANT) && i < t->retries; i++)
    if ((delay *= 2) >= RETRY_MAX_DELAY_MS) {
      delay = RETRY_MAX_DELAY_MS;
      break;
    }
  delay = delay / 2 + random_upto (delay - delay / 2);
  if (cause == RETRY_CAUSE_REPLY && t->reply.retry_after_ms > 0 &&
      (uint64_t) t->reply.retry_after_ms > delay)
    delay = (uint64_t) t->reply.retry_after_ms;
  return delay;
}

bool
retry_decide (struct transfer *t, enum retry_cause cause, const char *why)
{
  const struct fetcher_config *cfg = http.f->cfg;
  uint64_t now = monotonic_ms (), delay;

  switch (cause) {
  case RETRY_CAUSE_FINAL:
    return false;
  case RETRY_CAUSE_REPLY:
    if (!web_reply_transient (&t->reply))
      return false;
    break;
  case RETRY_CAUSE_TRANSIENT:
    break;
  }
  /* Opening is not retried: a URL that cannot be opened is the user's
   * to see at once. */
  if (t->mode != MODE_READ || cfg->retries == 0)
    return false;
  if (t->retries >= cfg->retries)
    return false;
  delay = retry_delay (t, cause);
  if (now >= t->limit_ms || delay >= t->limit_ms - now) {
    debug ("export \"%s\": read at offset %" PRIu64 " not retried: no time "
           "left for a retry before --timeout", http.f->export_name, t->offset);
    return false;
  }
  warn ("export \"%s\" (%s): read of %" PRIu32 " bytes at offset %" PRIu64
        ": %s; retry %u of %u in %" PRIu64 ".%03" PRIu64 " s",
        http.f->export_name, http.f->log_url, t->length, t->offset, why,
        t->retries + 1, cfg->retries, delay / 1000, delay % 1000);
  if (t->retries == 0)
    http.retried_reads++;
  http.retries++;
  fetcher_stats.retries++;
  t->retries++;
  trim_answered_parts (t);
  t->retry_direct = t->direct;
  t->direct = false;            /* neither path's while it waits */
  t->retry_at_ms = now + (delay > 0 ? delay : 1);   /* 0: not waiting */
  return true;
}

long
retry_wait_ms (void)
{
  uint64_t now = monotonic_ms (), soonest = UINT64_MAX;
  unsigned i;

  for (i = 0; i < http.f->cfg->connections; i++)
    if (http.pool[i].retry_at_ms != 0 && http.pool[i].retry_at_ms < soonest)
      soonest = http.pool[i].retry_at_ms;
  if (soonest == UINT64_MAX)
    return -1;
  return soonest <= now ? 0 : (long) (soonest - now);
}

struct transfer *
retry_take_due (void)
{
  uint64_t now = monotonic_ms ();
  unsigned i;

  for (i = 0; i < http.f->cfg->connections; i++) {
    struct transfer *t = &http.pool[i];
    if (t->retry_at_ms != 0 && t->retry_at_ms <= now) {
      t->retry_at_ms = 0;
      return t;
    }
  }
  return NULL;
}

void
retry_summary (void)
{
  if (http.retries == 0)
    return;
  notice ("export \"%s\" (%s): retried reads: %" PRIu64 ", retries: %" PRIu64
          ", retried reads that failed all the same: %" PRIu64,
          http.f->export_name, http.f->log_url, http.retried_reads, http.retries,
          http.retried_failed);
}
