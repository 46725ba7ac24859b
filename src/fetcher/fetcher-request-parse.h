/*
 * fetcher-request-parse.h: one request header from the front-end, decoded
 * and checked against the export (fetcher-request-parse.c): its form by
 * the message table (ipc-table.c), then what the export allows (writes,
 * flushes, FUA), its range and its place in the data area.  Nothing here
 * reads a socket or ends the process: fetcher.c does, with the words
 * given back.
 */
#ifndef NBDCURLD_FETCHER_REQUEST_PARSE_H
#define NBDCURLD_FETCHER_REQUEST_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "fetcher.h"

/* Room for why a request was refused, its terminating NUL included. */
#define FETCHER_REQUEST_WHY_MAX 256

/* What a request is checked against. */
struct fetcher_request_rules {
  uint64_t size;              /* the export's size */
  uint32_t can;               /* FETCHER_CAN_* */
  uint8_t *data_area;         /* the data area, DATA_AREA_SIZE bytes */
};

/* Decode the IPC_HEADER_SIZE bytes at raw as a request.  Returns 0 with
 * *req filled in (req->data pointing at its part of the data area, which
 * lies inside it), or -1 with what is wrong in why (why_size bytes, up to
 * FETCHER_REQUEST_WHY_MAX of them used) and *req unchanged. */
int fetcher_request_parse (const struct fetcher_request_rules *rules, const uint8_t *raw,
                           struct fetcher_request *req, char *why, size_t why_size);

#endif
