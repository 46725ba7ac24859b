/*
 * request-parse.c: a client's transmission requests, parsed with the
 * bounded reader (wire.h) and checked completely (magic, command, flags,
 * length, range) before anything reaches the fetcher.
 */
#include <errno.h>

#include "limits-nbd.h"
#include "request-parse.h"
#include "wire.h"

enum request_parse
parse_request (const uint8_t *buf, size_t len, struct client_request *req)
{
  struct reader r;

  reader_init (&r, buf, len);
  if (reader_get_u32_be (&r, &req->magic) == -1 ||
      reader_get_u16_be (&r, &req->flags) == -1 ||
      reader_get_u16_be (&r, &req->type) == -1 ||
      reader_get_u64_be (&r, &req->cookie) == -1 ||
      reader_get_u64_be (&r, &req->offset) == -1 ||
      reader_get_u32_be (&r, &req->count) == -1)
    return REQUEST_INCOMPLETE;
  if (req->magic != NBD_REQUEST_MAGIC)
    return REQUEST_BAD_MAGIC;
  return REQUEST_COMPLETE;
}

/* Is [offset, offset + count) inside the export?  Written so that nothing
 * can overflow: count <= size is checked before size - count. */
static bool
in_range (const struct request_rules *rules, uint64_t offset, uint32_t count)
{
  return count <= rules->export_size && offset <= rules->export_size - count;
}

uint32_t
check_request (const struct request_rules *rules, const struct client_request *req)
{
  bool ro = (rules->eflags & NBD_FLAG_READ_ONLY) != 0;
  /* With SEND_FUA advertised, the spec has every command accept FUA
   * (a no-op where it means nothing); DF exists only for structured reads. */
  uint16_t fua = (rules->eflags & NBD_FLAG_SEND_FUA) ? NBD_CMD_FLAG_FUA : 0;
  uint16_t flags = req->flags;
  uint64_t offset = req->offset;
  uint32_t count = req->count;

  switch (req->type) {
  case NBD_CMD_READ:
    if (flags & ~(fua | (rules->structured ? NBD_CMD_FLAG_DF : 0)))
      return EINVAL;
    if (count == 0 || count > NBD_MAX_REQUEST_SIZE || !in_range (rules, offset, count))
      return EINVAL;
    return 0;
  case NBD_CMD_WRITE:
    if (ro)
      return EPERM;
    if (flags & ~fua)
      return EINVAL;
    if (count == 0 || count > NBD_MAX_REQUEST_SIZE)
      return EINVAL;
    if (!in_range (rules, offset, count))
      return ENOSPC;
    return 0;
  case NBD_CMD_FLUSH:
    if (!(rules->eflags & NBD_FLAG_SEND_FLUSH) || (flags & ~fua) || offset != 0 || count != 0)
      return EINVAL;
    return 0;
  case NBD_CMD_CACHE:
    if ((flags & ~fua) || count == 0 || !in_range (rules, offset, count))
      return EINVAL;
    return 0;
  case NBD_CMD_BLOCK_STATUS:
    if (!rules->structured || !rules->base_allocation)
      return EINVAL;
    if (flags & ~(fua | NBD_CMD_FLAG_REQ_ONE))
      return EINVAL;
    if (count == 0 || !in_range (rules, offset, count))
      return EINVAL;
    return 0;
  default:
    /* TRIM and WRITE_ZEROES are not advertised; others are unknown. */
    return EINVAL;
  }
}
