/*
 * output-queue.h: bytes waiting to be written to one peer, and the memory
 * they hold (output-queue.c).
 */
#ifndef NBDCURLD_OUTPUT_QUEUE_H
#define NBDCURLD_OUTPUT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "data-area.h"

/* A fetcher's data pipe (data-path.h), read end.  Counted references like
 * the data area: the client while the fetcher is attached, and each queued
 * chunk that reads from it. */
struct data_pipe {
  int fd;
  unsigned refs;
};

/* Bytes waiting to be written to one peer. */
struct chunk {
  struct chunk *next;
  uint8_t *data;          /* start of unsent bytes */
  size_t len;             /* unsent bytes from data */
  void *to_free;          /* the allocation holding data, or NULL */
  size_t alloc_len;       /* its size: counted in outq.mem */
  bool packable;          /* to_free is a pack buffer: small copies may be
                             appended after data + len */
  struct area_span span;  /* or the data area part holding data */
  /* Or len bytes that are next in a data pipe: spliced to the peer, or
   * with discard, read and dropped (a failed read's partial body). */
  struct data_pipe *pipe;
  bool discard;
};

struct outq {
  struct chunk *head, *tail;
  size_t bytes;           /* sum of len over the queue */
  size_t mem;             /* front-end memory it holds: chunk records and
                             their allocations (CLIENT_QUEUE_MEMORY) */
};

/* Write as much of a queue as fd takes now: 0, or -1 if the peer is gone. */
int outq_flush (struct outq *q, int fd);
/* Move up to room bytes from the head of a queue into dst (pipe chunks
 * are read, discarded ones dropped): the count, or -1 when a fetcher's
 * pipe lacks bytes it announced. */
ssize_t outq_take (struct outq *q, uint8_t *dst, size_t room);
void outq_push_copy (struct outq *q, const void *data, size_t len);
/* Write two parts to fd now if nothing is queued before them, and queue
 * copies of what it did not take (all of both when something was queued
 * or the write failed: the next flush meets the failure as any write). */
void outq_write_or_copy (struct outq *q, int fd, const void *a, size_t a_len,
                         const void *b, size_t b_len);
void outq_push_owned (struct outq *q, void *alloc, uint8_t *data, size_t len);
/* Queue len bytes of a data area span; the span is released once sent. */
void outq_push_span (struct outq *q, struct area_span span, size_t len);
/* Queue len bytes that are next in a data pipe: to be spliced to the peer,
 * or with discard, dropped. */
void outq_push_pipe (struct outq *q, struct data_pipe *p, size_t len, bool discard);
/* Drop everything queued, giving back what it holds. */
void outq_clear (struct outq *q);
/* Drop a reference to a data pipe; the last closes it. */
void data_pipe_unref (struct data_pipe *p);

#endif
