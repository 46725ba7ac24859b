/*
 * handshake-parse.h: the client's handshake bytes, parsed and checked
 * (handshake-parse.c): its flags, each option's header, and the data of
 * the options that carry any.  Nothing here knows about clients or the
 * loop: handshake.c decides what each result means for the client.
 */
#ifndef NBDCURLD_HANDSHAKE_PARSE_H
#define NBDCURLD_HANDSHAKE_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "limits-nbd.h"
#include "nbd-protocol.h"

/* The client's flags, after the greeting: nothing we do not know.  Without
 * NBD_FLAG_C_FIXED_NEWSTYLE the client speaks plain newstyle, where
 * EXPORT_NAME is the only option (handshake.c). */
bool client_flags_acceptable (uint32_t flags);

/* One option: its header, and its data in place. */
struct client_option {
  uint32_t option;
  uint32_t length;            /* of the data; <= NBD_MAX_OPTION_LENGTH if complete */
  const uint8_t *data;
  size_t size;                /* bytes it takes: header and data */
};
enum option_parse {
  OPTION_INCOMPLETE,          /* more bytes needed (header or data) */
  OPTION_BAD_MAGIC,
  OPTION_TOO_LONG,            /* its length is over NBD_MAX_OPTION_LENGTH:
                                 option and length are set */
  OPTION_COMPLETE,
};
/* The option at the start of len bytes.  Its length is checked as soon as
 * the header is in, before any of its data is waited for. */
enum option_parse parse_option (const uint8_t *buf, size_t len, struct client_option *o);

/* NBD_OPT_EXPORT_NAME: the data is the name, nothing else.  -1 when it is
 * too long or not a string. */
int parse_export_name (const uint8_t *data, size_t len, char name[NBD_MAX_STRING + 1]);

/* NBD_OPT_INFO and NBD_OPT_GO: u32 name length, name, u16 count, count
 * u16 info types; exactly that long.  -1 when it is not. */
struct info_go_request {
  char name[NBD_MAX_STRING + 1];
  bool want_name, want_description;     /* NBD_INFO_NAME, _DESCRIPTION asked */
};
int parse_info_go (const uint8_t *data, size_t len, struct info_go_request *req);

/* NBD_OPT_LIST_META_CONTEXT (list true) and SET_META_CONTEXT: u32 name
 * length, name, u32 query count, then per query u32 length and bytes;
 * exactly that.  Every query is checked before any is answered. */
struct meta_context_request {
  char name[NBD_MAX_STRING + 1];
  uint32_t nqueries;
  bool base_allocation;       /* the queries select base:allocation */
};
enum meta_parse {
  META_COMPLETE,
  META_BAD_REQUEST,           /* the name or the count */
  META_BAD_QUERY,             /* a query's length or bytes */
  META_TRAILING,              /* bytes after the last query */
};
enum meta_parse parse_meta_context (const uint8_t *data, size_t len, bool list,
                                    struct meta_context_request *req);

#endif
