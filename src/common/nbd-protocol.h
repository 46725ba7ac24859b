/*
 * nbd-protocol.h: the NBD wire format, fixed newstyle only.
 *
 * Reference: the NBD protocol specification (NetworkBlockDevice/nbd,
 * doc/proto.md).  Every number that crosses the wire is big-endian; the
 * structs below describe the on-wire layout and are only ever filled or read
 * through the bounded reader/writer (wire.h), never cast onto raw bytes, so
 * their sizes are checked here to keep the constants honest.
 */
#ifndef NBDCURLD_NBD_PROTOCOL_H
#define NBDCURLD_NBD_PROTOCOL_H

#include <assert.h>
#include <stdint.h>

/* Greeting. */
#define NBD_MAGIC                 UINT64_C(0x4e42444d41474943) /* "NBDMAGIC" */
#define NBD_IHAVEOPT              UINT64_C(0x49484156454F5054) /* "IHAVEOPT" */
#define NBD_REP_MAGIC             UINT64_C(0x0003e889045565a9)

/* Handshake flags (server) and client flags. */
#define NBD_FLAG_FIXED_NEWSTYLE   (1u << 0)
#define NBD_FLAG_NO_ZEROES        (1u << 1)
#define NBD_FLAG_C_FIXED_NEWSTYLE NBD_FLAG_FIXED_NEWSTYLE
#define NBD_FLAG_C_NO_ZEROES      NBD_FLAG_NO_ZEROES
#define NBD_KNOWN_CLIENT_FLAGS    (NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES)

/* Options. */
#define NBD_OPT_EXPORT_NAME        1
#define NBD_OPT_ABORT              2
#define NBD_OPT_LIST               3
#define NBD_OPT_STARTTLS           5
#define NBD_OPT_INFO               6
#define NBD_OPT_GO                 7
#define NBD_OPT_STRUCTURED_REPLY   8
#define NBD_OPT_LIST_META_CONTEXT  9
#define NBD_OPT_SET_META_CONTEXT  10

/* Option replies. */
#define NBD_REP_ACK                1
#define NBD_REP_SERVER             2
#define NBD_REP_INFO               3
#define NBD_REP_META_CONTEXT       4
#define NBD_REP_FLAG_ERROR         (UINT32_C(1) << 31)
#define NBD_REP_ERR_UNSUP          (NBD_REP_FLAG_ERROR | 1)
#define NBD_REP_ERR_POLICY         (NBD_REP_FLAG_ERROR | 2)
#define NBD_REP_ERR_INVALID        (NBD_REP_FLAG_ERROR | 3)
#define NBD_REP_ERR_PLATFORM       (NBD_REP_FLAG_ERROR | 4)
#define NBD_REP_ERR_TLS_REQD       (NBD_REP_FLAG_ERROR | 5)
#define NBD_REP_ERR_UNKNOWN        (NBD_REP_FLAG_ERROR | 6)
#define NBD_REP_ERR_SHUTDOWN       (NBD_REP_FLAG_ERROR | 7)
#define NBD_REP_ERR_BLOCK_SIZE_REQD (NBD_REP_FLAG_ERROR | 8)
#define NBD_REP_ERR_TOO_BIG        (NBD_REP_FLAG_ERROR | 9)

/* NBD_REP_INFO types. */
#define NBD_INFO_EXPORT            0
#define NBD_INFO_NAME              1
#define NBD_INFO_DESCRIPTION       2
#define NBD_INFO_BLOCK_SIZE        3

/* Transmission flags (per export). */
#define NBD_FLAG_HAS_FLAGS         (1u << 0)
#define NBD_FLAG_READ_ONLY         (1u << 1)
#define NBD_FLAG_SEND_FLUSH        (1u << 2)
#define NBD_FLAG_SEND_FUA          (1u << 3)
#define NBD_FLAG_ROTATIONAL        (1u << 4)
#define NBD_FLAG_SEND_TRIM         (1u << 5)
#define NBD_FLAG_SEND_WRITE_ZEROES (1u << 6)
#define NBD_FLAG_SEND_DF           (1u << 7)
#define NBD_FLAG_CAN_MULTI_CONN    (1u << 8)
#define NBD_FLAG_SEND_RESIZE       (1u << 9)
#define NBD_FLAG_SEND_CACHE        (1u << 10)
#define NBD_FLAG_SEND_FAST_ZERO    (1u << 11)

/* Requests. */
#define NBD_REQUEST_MAGIC          UINT32_C(0x25609513)
#define NBD_CMD_READ               0
#define NBD_CMD_WRITE              1
#define NBD_CMD_DISC               2
#define NBD_CMD_FLUSH              3
#define NBD_CMD_TRIM               4
#define NBD_CMD_CACHE              5
#define NBD_CMD_WRITE_ZEROES       6
#define NBD_CMD_BLOCK_STATUS       7

#define NBD_CMD_FLAG_FUA           (1u << 0)
#define NBD_CMD_FLAG_NO_HOLE       (1u << 1)
#define NBD_CMD_FLAG_DF            (1u << 2)
#define NBD_CMD_FLAG_REQ_ONE       (1u << 3)
#define NBD_CMD_FLAG_FAST_ZERO     (1u << 4)

/* Replies. */
#define NBD_SIMPLE_REPLY_MAGIC     UINT32_C(0x67446698)
#define NBD_STRUCTURED_REPLY_MAGIC UINT32_C(0x668e33ef)
#define NBD_REPLY_FLAG_DONE        (1u << 0)
#define NBD_REPLY_TYPE_NONE        0
#define NBD_REPLY_TYPE_OFFSET_DATA 1
#define NBD_REPLY_TYPE_OFFSET_HOLE 2
#define NBD_REPLY_TYPE_BLOCK_STATUS 5
#define NBD_REPLY_TYPE_ERROR       ((1u << 15) | 1)

/* base:allocation extent flags. */
#define NBD_STATE_HOLE             (1u << 0)
#define NBD_STATE_ZERO             (1u << 1)

/* Error numbers on the wire (not the host's errno values). */
#define NBD_EPERM        1
#define NBD_EIO          5
#define NBD_ENOMEM      12
#define NBD_EINVAL      22
#define NBD_ENOSPC      28
#define NBD_EOVERFLOW   75
#define NBD_ENOTSUP     95
#define NBD_ESHUTDOWN  108

#define NBD_META_BASE_ALLOCATION   "base:allocation"

/* Wire sizes, each checked against the struct that documents the layout. */
struct nbd_option_header {      /* client -> server, each option */
  uint64_t magic;               /* NBD_IHAVEOPT */
  uint32_t option;
  uint32_t length;
} __attribute__((packed));
#define NBD_OPTION_HEADER_SIZE 16
static_assert(sizeof(struct nbd_option_header) == NBD_OPTION_HEADER_SIZE, "option header");

struct nbd_option_reply_header { /* server -> client */
  uint64_t magic;               /* NBD_REP_MAGIC */
  uint32_t option;
  uint32_t reply;
  uint32_t length;
} __attribute__((packed));
#define NBD_OPTION_REPLY_HEADER_SIZE 20
static_assert(sizeof(struct nbd_option_reply_header) == NBD_OPTION_REPLY_HEADER_SIZE, "option reply");

struct nbd_request {
  uint32_t magic;               /* NBD_REQUEST_MAGIC */
  uint16_t flags;
  uint16_t type;
  uint64_t cookie;
  uint64_t offset;
  uint32_t count;
} __attribute__((packed));
#define NBD_REQUEST_SIZE 28
static_assert(sizeof(struct nbd_request) == NBD_REQUEST_SIZE, "request");

struct nbd_simple_reply {
  uint32_t magic;               /* NBD_SIMPLE_REPLY_MAGIC */
  uint32_t error;
  uint64_t cookie;
} __attribute__((packed));
#define NBD_SIMPLE_REPLY_SIZE 16
static_assert(sizeof(struct nbd_simple_reply) == NBD_SIMPLE_REPLY_SIZE, "simple reply");

struct nbd_structured_reply {
  uint32_t magic;               /* NBD_STRUCTURED_REPLY_MAGIC */
  uint16_t flags;
  uint16_t type;
  uint64_t cookie;
  uint32_t length;              /* of the payload that follows */
} __attribute__((packed));
#define NBD_STRUCTURED_REPLY_SIZE 20
static_assert(sizeof(struct nbd_structured_reply) == NBD_STRUCTURED_REPLY_SIZE, "structured reply");

/* Greeting the server sends first: magic, IHAVEOPT, handshake flags. */
#define NBD_GREETING_SIZE (8 + 8 + 2)
/* Reply to NBD_OPT_EXPORT_NAME: size, transmission flags, then 124 zero
 * bytes unless the client set NO_ZEROES. */
#define NBD_EXPORT_NAME_REPLY_SIZE (8 + 2)
#define NBD_EXPORT_NAME_ZEROES 124

#endif
