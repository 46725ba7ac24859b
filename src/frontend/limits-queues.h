/*
 * limits-queues.h: how much the front-end queues for one client
 * (frontend.c, output-queue.c).  Read data is not counted here: it lives
 * in the data area or the data pipe (data-path.h) and is bounded there.
 */
#ifndef NBDCURLD_LIMITS_QUEUES_H
#define NBDCURLD_LIMITS_QUEUES_H

/* Front-end memory one client's queues may hold (chunk records and the
 * reply headers, errors and option replies copied into them).  At
 * CLIENT_QUEUE_MEMORY the client is no longer read until its replies
 * drain; one pass of buffered input may overshoot that by a bounded amount
 * (at most one input buffer of requests, or one LIST reply), so a client
 * past CLIENT_QUEUE_MEMORY_LIMIT is broken and is closed. */
#define CLIENT_QUEUE_MEMORY       (256u * 1024)
#define CLIENT_QUEUE_MEMORY_LIMIT (4u * 1024 * 1024)
/* Small replies are packed into shared buffers of this size, so a flood of
 * 16-byte errors costs a few bytes each rather than two allocations. */
#define OUTQ_PACK_BUFFER          4096u
/* Bytes queued towards one client or one fetcher before the front-end stops
 * reading more requests from that client. */
#define MAX_QUEUED_BYTES          (64u * 1024 * 1024)

#endif
