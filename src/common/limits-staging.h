/*
 * limits-staging.h: staged reads.  A network fetcher that reads ahead of
 * a forward reader (fetcher-readahead.c) copies what it has stored just
 * ahead of the reader into spans of the data area that the front-end
 * lent it, and names them (IPC_STAGED); the front-end then answers the
 * client's reads inside them itself, without a message to the fetcher
 * and back.  A reader such as qemu-img converting a compressed qcow2
 * keeps one small read in flight: there each read's two extra process
 * wake-ups were most of its service time.
 */
#ifndef NBDCURLD_LIMITS_STAGING_H
#define NBDCURLD_LIMITS_STAGING_H

#include "data-path.h"

/* Spans a client lends its fetcher, and their size: one being read while
 * the fetcher fills the next.  Taken beside the requests' share of the
 * data area (a client that pipelines keeps all of its --client-memory
 * for its reads), while the fetcher's store, also bounded by
 * --client-memory, gives up as much; only once the fetcher follows a
 * forward reader, and only when --client-memory is large enough
 * (STAGE_MIN_CLIENT_MEMORY) for them to be small beside it. */
#define STAGE_SPANS               2u
#define STAGE_SPAN_BYTES          (1024u * 1024)
#define STAGE_MIN_CLIENT_MEMORY   (4u * STAGE_SPANS * STAGE_SPAN_BYTES)
static_assert (STAGE_SPAN_BYTES % DATA_AREA_CHUNK == 0, "stage spans in chunks");
static_assert (STAGE_MIN_CLIENT_MEMORY <= DEFAULT_CLIENT_MEMORY,
               "the default client memory stages");

/* Each span is staged from this far before where the reader's next read
 * is expected (its run's furthest byte, or the previous span's end): a
 * reader whose reads overlap their neighbours (qemu-img reads compressed
 * clusters rounded to sectors) starts a little back, and a read of up to
 * this many bytes that crosses from one span into the next lies wholly
 * inside the next. */
#define STAGE_OVERLAP_BYTES       (64u * 1024)

/* A span is staged only with at least this many bytes (or up to the
 * export's end): fewer, and the reader would be past it after a few
 * reads. */
#define STAGE_MIN_BYTES           (256u * 1024)

#endif
