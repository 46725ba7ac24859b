/*
 * handshake-parse.c: the client's handshake bytes, parsed and checked with
 * the bounded reader (wire.h): every length is capped before it is used,
 * and an option's data must be consumed exactly.
 */
#include <string.h>

#include "handshake-parse.h"
#include "limits-handshake.h"
#include "limits-nbd.h"
#include "wire.h"

bool
client_flags_acceptable (uint32_t flags)
{
  return !(flags & ~NBD_KNOWN_CLIENT_FLAGS);
}

enum option_parse
parse_option (const uint8_t *buf, size_t len, struct client_option *o)
{
  struct reader r;
  uint64_t magic;

  reader_init (&r, buf, len);
  if (reader_get_u64_be (&r, &magic) == -1 ||
      reader_get_u32_be (&r, &o->option) == -1 ||
      reader_get_u32_be (&r, &o->length) == -1)
    return OPTION_INCOMPLETE;
  if (magic != NBD_IHAVEOPT)
    return OPTION_BAD_MAGIC;
  /* Capped before a byte of the data is waited for or buffered. */
  if (o->length > NBD_MAX_OPTION_LENGTH)
    return OPTION_TOO_LONG;
  if (reader_get_span (&r, &o->data, o->length) == -1)
    return OPTION_INCOMPLETE;
  o->size = r.pos;
  return OPTION_COMPLETE;
}

int
parse_export_name (const uint8_t *data, size_t len, char name[NBD_MAX_STRING + 1])
{
  struct reader r;

  reader_init (&r, data, len);
  return reader_get_string (&r, name, reader_remaining (&r), NBD_MAX_STRING);
}

int
parse_info_go (const uint8_t *data, size_t len, struct info_go_request *req)
{
  struct reader r;
  uint32_t namelen;
  uint16_t ninfo, i;

  reader_init (&r, data, len);
  if (reader_get_u32_be (&r, &namelen) == -1 ||
      namelen > NBD_MAX_STRING ||
      reader_get_string (&r, req->name, namelen, NBD_MAX_STRING) == -1 ||
      reader_get_u16_be (&r, &ninfo) == -1 ||
      ninfo > NBD_MAX_INFO_REQUESTS ||
      reader_remaining (&r) != (size_t) ninfo * 2)
    return -1;
  req->want_name = req->want_description = false;
  for (i = 0; i < ninfo; i++) {
    uint16_t type;
    if (reader_get_u16_be (&r, &type) == -1)
      return -1;                        /* cannot happen: length checked */
    if (type == NBD_INFO_NAME)
      req->want_name = true;
    else if (type == NBD_INFO_DESCRIPTION)
      req->want_description = true;
    /* Others are answered regardless (EXPORT, BLOCK_SIZE) or unknown,
     * which the spec says to ignore. */
  }
  return 0;
}

/* Does this query select base:allocation?  Listing, "base:" names the
 * whole namespace. */
static bool
query_selects_base_allocation (const char *query, bool list)
{
  return strcmp (query, NBD_META_BASE_ALLOCATION) == 0 ||
    (list && strcmp (query, "base:") == 0);
}

enum meta_parse
parse_meta_context (const uint8_t *data, size_t len, bool list,
                    struct meta_context_request *req)
{
  char query[NBD_MAX_STRING + 1];
  struct reader r;
  uint32_t namelen, i;

  reader_init (&r, data, len);
  if (reader_get_u32_be (&r, &namelen) == -1 ||
      reader_get_string (&r, req->name, namelen, NBD_MAX_STRING) == -1 ||
      reader_get_u32_be (&r, &req->nqueries) == -1 ||
      req->nqueries > NBD_MAX_META_QUERIES)
    return META_BAD_REQUEST;
  /* Listing with no query: every context, which is base:allocation. */
  req->base_allocation = req->nqueries == 0 && list;
  for (i = 0; i < req->nqueries; i++) {
    uint32_t qlen;
    if (reader_get_u32_be (&r, &qlen) == -1 ||
        reader_get_string (&r, query, qlen, NBD_MAX_STRING) == -1)
      return META_BAD_QUERY;
    if (query_selects_base_allocation (query, list))
      req->base_allocation = true;
  }
  if (reader_end (&r) == -1)
    return META_TRAILING;
  return META_COMPLETE;
}
