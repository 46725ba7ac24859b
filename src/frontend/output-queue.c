/*
 * output-queue.c: bytes waiting to be written to one peer (a client or its
 * fetcher), and the memory they hold.
 *
 * Every phase queues here and nothing here knows about phases: a reply is
 * copied in, or points into the fetcher's data area, or is announced as
 * bytes waiting in the fetcher's data pipe.  outq.mem counts what the
 * front-end holds for the queue, so that a client whose replies pile up is
 * not read until they drain (client_wants_input).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "limits-queues.h"
#include "log.h"
#include "output-queue.h"

/* Memory a chunk holds, as counted in outq.mem. */
static size_t
chunk_memory (const struct chunk *ch)
{
  return sizeof *ch + ch->alloc_len;
}

static struct chunk *
outq_append (struct outq *q, void *alloc, size_t alloc_len, uint8_t *data, size_t len)
{
  struct chunk *ch = malloc (sizeof *ch);
  if (ch == NULL)
    fatal_errno ("malloc");
  *ch = (struct chunk) {
    .data = data, .len = len, .to_free = alloc, .alloc_len = alloc_len,
  };
  if (q->tail)
    q->tail->next = ch;
  else
    q->head = ch;
  q->tail = ch;
  q->bytes += len;
  q->mem += chunk_memory (ch);
  return ch;
}

void
outq_push_owned (struct outq *q, void *alloc, uint8_t *data, size_t len)
{
  outq_append (q, alloc, 0, data, len);
}

void
outq_push_span (struct outq *q, struct area_span span, size_t len)
{
  outq_push_owned (q, NULL, area_address (&span), len);
  q->tail->span = span;
}

void
data_pipe_unref (struct data_pipe *p)
{
  if (--p->refs == 0) {                 /* refs >= 1 while referenced */
    close (p->fd);
    free (p);
  }
}

void
outq_push_pipe (struct outq *q, struct data_pipe *p, size_t len, bool discard)
{
  outq_push_owned (q, NULL, NULL, len);
  q->tail->pipe = p;
  q->tail->discard = discard;
  p->refs++;
}

static void
chunk_free (struct outq *q, struct chunk *ch)
{
  q->mem -= chunk_memory (ch);          /* counted when appended */
  free (ch->to_free);
  area_release (&ch->span);
  if (ch->pipe)
    data_pipe_unref (ch->pipe);
  free (ch);
}

/* Copy len bytes to the end of the queue.  Small ones (reply headers,
 * errors, option replies) go into a pack buffer at the tail when there is
 * room, so that a run of small replies costs a few records and
 * allocations, not two each.  A pack buffer starts just big enough and
 * the next one in a run is twice the size, up to OUTQ_PACK_BUFFER: a
 * read's reply header, followed by its data, keeps a small allocation
 * (its memory counts towards the client's share, and a large one would
 * throttle pipelined reads), while a flood of errors is packed. */
void
outq_push_copy (struct outq *q, const void *data, size_t len)
{
  struct chunk *t = q->tail;
  size_t cap = len > 0 ? len : 1;
  uint8_t *p;

  if (t && t->packable) {
    uint8_t *end = t->data + t->len;
    /* end lies inside the pack buffer: data only moves forward in it. */
    if (len <= t->alloc_len && (size_t) (end - (uint8_t *) t->to_free) <= t->alloc_len - len) {
      memcpy (end, data, len);
      t->len += len;
      q->bytes += len;
      return;
    }
    if (len < OUTQ_PACK_BUFFER / 4)
      cap = t->alloc_len * 2 < OUTQ_PACK_BUFFER ? t->alloc_len * 2 : OUTQ_PACK_BUFFER;
  }
  if (cap < len)
    cap = len;
  p = malloc (cap);
  if (p == NULL)
    fatal_errno ("malloc");
  memcpy (p, data, len);
  outq_append (q, p, cap, p, len)->packable = len < OUTQ_PACK_BUFFER / 4;
}

void
outq_write_or_copy (struct outq *q, int fd, const void *a, size_t a_len,
                    const void *b, size_t b_len)
{
  struct iovec iov[2] = {
    { .iov_base = (void *) a, .iov_len = a_len },
    { .iov_base = (void *) b, .iov_len = b_len },
  };
  ssize_t r = 0;

  /* A reply answered at once (a staged read) mostly fits the socket's
   * buffer: written now, it costs no copy into the queue and no wait for
   * the next poll to say the socket is writable. */
  if (q->head == NULL) {
    do
      r = writev (fd, iov, 2);
    while (r == -1 && errno == EINTR);
    if (r == -1)
      r = 0;
  }
  /* 0 <= r <= a_len + b_len: what is left of each is queued. */
  if ((size_t) r < a_len)
    outq_push_copy (q, (const uint8_t *) a + r, a_len - (size_t) r);
  if ((size_t) r < a_len + b_len && b_len > 0) {
    size_t b_sent = (size_t) r > a_len ? (size_t) r - a_len : 0;
    outq_push_copy (q, (const uint8_t *) b + b_sent, b_len - b_sent);
  }
}

void
outq_clear (struct outq *q)
{
  struct chunk *ch = q->head, *next;
  for (; ch; ch = next) {
    next = ch->next;
    chunk_free (q, ch);
  }
  q->head = q->tail = NULL;
  q->bytes = 0;
}

/* Move bytes of a pipe chunk: splice them to fd, or drop them.  Returns
 * the count, 0 when fd cannot take more now, or -1: an error on fd, or
 * the fetcher announced bytes it never put in the pipe (announced bytes
 * are all there before the announcement, so an empty pipe is a lie). */
static ssize_t
pipe_chunk_move (struct chunk *ch, int fd)
{
  struct pollfd pfd = { .fd = ch->pipe->fd, .events = POLLIN };
  ssize_t r;

  if (ch->discard) {
    uint8_t scratch[16 * 1024];
    r = read (ch->pipe->fd, scratch, ch->len < sizeof scratch ? ch->len : sizeof scratch);
  }
  else
    r = splice (ch->pipe->fd, NULL, fd, NULL, ch->len, SPLICE_F_NONBLOCK);
  if (r > 0)
    return r;
  if (r == -1 && errno == EINTR)
    return 0;
  if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    /* The socket is full, unless the pipe is empty. */
    if (!ch->discard && poll (&pfd, 1, 0) == 1)
      return 0;
  }
  else if (r == -1 && !ch->discard)
    return -1;                          /* the client's socket */
  warn ("a fetcher announced %zu bytes that are not in its data pipe", ch->len);
  return -1;
}

/* Write as much of the queue as the socket takes now.  Returns 0, or -1 if
 * the peer is gone or broken. */
int
outq_flush (struct outq *q, int fd)
{
  while (q->head) {
    struct iovec iov[64];
    struct chunk *ch = q->head;
    int n = 0;
    ssize_t r;

    if (ch->pipe) {
      r = pipe_chunk_move (ch, fd);
      if (r <= 0)
        return (int) r;
    }
    else {
      /* Memory chunks up to the next pipe chunk, in one write. */
      for (; ch && !ch->pipe && n < 64; ch = ch->next, n++) {
        iov[n].iov_base = ch->data;
        iov[n].iov_len = ch->len;
      }
      r = writev (fd, iov, n);
      if (r == -1) {
        if (errno == EINTR)
          continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
          return 0;
        return -1;
      }
    }
    q->bytes -= (size_t) r;        /* cannot underflow: r <= sum of the chunks */
    while (r > 0) {
      ch = q->head;
      if ((size_t) r < ch->len) {
        if (ch->data)
          ch->data += r;
        ch->len -= (size_t) r;
        break;
      }
      r -= (ssize_t) ch->len;
      q->head = ch->next;
      if (q->head == NULL)
        q->tail = NULL;
      chunk_free (q, ch);
    }
  }
  return 0;
}

/* Drop a queue's head chunk once all of it has been moved. */
static void
outq_consumed (struct outq *q, struct chunk *ch, size_t n)
{
  q->bytes -= n;
  if (n < ch->len) {
    if (ch->data)
      ch->data += n;
    ch->len -= n;
    return;
  }
  q->head = ch->next;
  if (q->head == NULL)
    q->tail = NULL;
  chunk_free (q, ch);
}

ssize_t
outq_take (struct outq *q, uint8_t *dst, size_t room)
{
  size_t got = 0;

  while (q->head && got < room) {
    struct chunk *ch = q->head;
    size_t n = ch->len < room - got ? ch->len : room - got;
    ssize_t r;

    if (ch->pipe == NULL) {
      memcpy (dst + got, ch->data, n);
      outq_consumed (q, ch, n);
      got += n;
      continue;
    }
    /* Announced bytes are in the pipe before the announcement.  Bytes
     * to drop are read into dst too, and written over. */
    bool discard = ch->discard;
    r = read (ch->pipe->fd, dst + got, n);
    if (r == -1 && errno == EINTR)
      continue;
    if (r <= 0) {
      warn ("a fetcher announced %zu bytes that are not in its data pipe", ch->len);
      return -1;
    }
    outq_consumed (q, ch, (size_t) r);      /* may free ch */
    if (!discard)
      got += (size_t) r;
  }
  return (ssize_t) got;
}
