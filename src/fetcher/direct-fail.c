/*
 * direct-fail.c: an attempt of a direct read that did not succeed:
 * failed (then retried, or its parts left answered with EIO), or handed
 * to libcurl, this read alone or every later one too.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "direct.h"
#include "ipc-messages.h"

/* This attempt of the read failed: the bytes of the current part already
 * in the pipe are dropped (IPC_PIPE_DISCARD: the front-end throws them
 * away, so a retry sends the part whole), then either the read waits to
 * be tried again (retry_decide) or the parts left get EIO. */
void
direct_fail_cause (struct transfer *t, enum retry_cause cause, const char *why)
{
  if (t->dstate == DIRECT_BODY && t->part_received > 0 && !t->to_area)
    fetcher_pipe_discard ((uint32_t) t->part_received);
  if ((t->dstate == DIRECT_QUEUED || t->dstate == DIRECT_BODY) && !t->to_area)
    owner_queue_remove (t);
  close_connection (t);
  /* A window of the store is not tried again (as through libcurl). */
  if (t->prefetch != NULL) {
    fail_read (t, why);
    release (t);
    return;
  }
  /* 401, 403 with scripts: the read goes again with renewed values. */
  if (script_park_refused (t)) {
    release (t);
    return;
  }
  if (retry_decide (t, cause, why))
    return;                     /* it waits, holding its slot */
  fail_read (t, why);
  release (t);
}

PRINTF_LIKE (3, 4) void
direct_failf (struct transfer *t, enum retry_cause cause, const char *fmt, ...)
{
  char why[PROBLEM_MAX];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (why, sizeof why, fmt, ap);
  va_end (ap);
  direct_fail_cause (t, cause, why);
}

/* May a failed system call on the server's connection pass?  Not when
 * the sandbox refused it (EACCES, EPERM: a port the URL did not name),
 * nor when this process is out of descriptors or memory. */
enum retry_cause
errno_cause (int e)
{
  return e == EACCES || e == EPERM || e == EMFILE || e == ENFILE || e == ENOMEM
    ? RETRY_CAUSE_FINAL : RETRY_CAUSE_TRANSIENT;
}

/* The parts left go to libcurl.  So does every later read, unless only
 * this one read did not fit (just_this_read). */
void
direct_to_libcurl (struct transfer *t, const char *why, bool just_this_read)
{
  if (just_this_read)
    debug ("export \"%s\": a read goes through libcurl: %s", http.f->export_name, why);
  else if (http.direct)
    debug ("export \"%s\": reads go through libcurl from now on: %s",
           http.f->export_name, why);
  if (!just_this_read)
    http.direct = false;
  if (t->dstate == DIRECT_BODY && t->part_received > 0 && !t->to_area)
    fetcher_pipe_discard ((uint32_t) t->part_received);
  if ((t->dstate == DIRECT_QUEUED || t->dstate == DIRECT_BODY) && !t->to_area)
    owner_queue_remove (t);
  close_connection (t);
  if (t->prefetch != NULL) {
    /* A window goes whole, into its segment (t->data), as one that
     * started there: no parts. */
    t->nparts = t->next_part = 0;
    t->part_received = t->received = 0;
    t->dstate = DIRECT_HANDED;
    return;
  }
  /* Keep the parts not answered; their bytes start where the answered
   * ones end. */
  trim_answered_parts (t);
  /* Only this read goes to libcurl: the parts after it go back to the
   * queue, in order, and on through the pipe.  (libcurl writes into the
   * data area; the fewer reads it takes, the less memory is touched.) */
  while (just_this_read && t->nparts > 1 && http.queue_len < QUEUE_SIZE) {
    unsigned last = t->nparts - 1;
    struct fetcher_request req = {
      .type = IPC_READ, .id = t->parts[last].id, .data = t->parts[last].data,
      .length = t->parts[last].length,
      .offset = t->offset + t->length - t->parts[last].length,
      .auth_retried = t->parts[last].auth_retried,
    };
    queue_push_front (&req);
    t->length -= t->parts[last].length;   /* the other parts remain */
    t->nparts--;
  }
  /* fetcher-http.c starts it, with a reply of its own to check. */
  t->dstate = DIRECT_HANDED;
}

/* This server's replies are not the plain case (direct-head-parse.h):
 * this read and every later one go to libcurl. */
void
direct_give_up (struct transfer *t, const char *why)
{
  direct_to_libcurl (t, why, false);
}
