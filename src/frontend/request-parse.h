/*
 * request-parse.h: a client's transmission requests, parsed and checked
 * (request-parse.c): the 28-byte header, then the command, its flags and
 * its range against what was negotiated.  Nothing here knows about
 * clients or the loop: transmission.c acts on the results.
 */
#ifndef NBDCURLD_REQUEST_PARSE_H
#define NBDCURLD_REQUEST_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nbd-protocol.h"

struct client_request {
  uint32_t magic;
  uint16_t flags;             /* NBD_CMD_FLAG_* */
  uint16_t type;              /* NBD_CMD_* */
  uint64_t cookie;
  uint64_t offset;
  uint32_t count;
};
enum request_parse {
  REQUEST_INCOMPLETE,         /* fewer than NBD_REQUEST_SIZE bytes */
  REQUEST_BAD_MAGIC,          /* req->magic says which */
  REQUEST_COMPLETE,           /* NBD_REQUEST_SIZE bytes */
};
enum request_parse parse_request (const uint8_t *buf, size_t len, struct client_request *req);

/* What a request is checked against: what the client negotiated. */
struct request_rules {
  uint64_t export_size;
  uint16_t eflags;            /* NBD_FLAG_* sent to the client */
  bool structured;            /* structured replies */
  bool base_allocation;       /* base:allocation selected for this export */
};
/* 0 if the request may go ahead, else the errno to answer it with.
 * NBD_CMD_DISC is the caller's: it is not checked here. */
uint32_t check_request (const struct request_rules *rules, const struct client_request *req);

#endif
