/*
 * staging.h: staged reads, the front-end's side (staging.c): spans of a
 * client's data area lent to its fetcher, which fills them with bytes it
 * read ahead of a forward reader; the client's reads inside them are
 * answered here (limits-staging.h says why).
 */
#ifndef NBDCURLD_STAGING_H
#define NBDCURLD_STAGING_H

#include <stdbool.h>
#include <stdint.h>

#include "data-area.h"
#include "ipc-messages.h"

struct client;
struct client_request;

/* One lent span: the fetcher's to fill, or staged (the front-end's to
 * answer from until it gives it back). */
struct stage {
  enum { STAGE_NONE, STAGE_AT_FETCHER, STAGE_AT_FRONTEND } state;
  struct area_span span;
  uint64_t offset;              /* staged: the export's bytes held */
  uint32_t length;
  uint64_t asked;               /* bytes that reads answered from it asked for */
  uint64_t furthest;            /* one past the furthest of them, or 0 */
};

/* Is h (IPC_STAGE_WANTED or IPC_STAGED) one the fetcher may send now? */
bool staging_message_ok (const struct client *c, const struct ipc_header *h);
/* Act on a checked IPC_STAGE_WANTED or IPC_STAGED. */
void staging_message (struct client *c, const struct ipc_header *h);
/* A checked READ: answer it from a staged span (true), or leave it to
 * the fetcher (false).  Either way, spans the reader has left go back. */
bool staging_answer (struct client *c, const struct client_request *req, uint64_t started_us);
/* The fetcher is gone: its spans go back to the data area. */
void staging_drop (struct client *c);

#endif
