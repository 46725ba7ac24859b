/*
 * ipc-messages.h: the internal message format every role speaks.  A
 * message is a struct ipc_header followed by exactly payload_len bytes;
 * each type below says who sends it to whom, which header fields it uses
 * and what payload it carries.  ipc-table.c holds the same contract as
 * data (ipc-table.h), which every receiver checks a message against
 * before anything else; ipc.h moves the bytes.  The payloads that are
 * structures of their own are in the header of their concern:
 * configuration (config-wire.h, fetcher-wire.h, tls-modes.h,
 * access-rules.h, keyholder-wire.h), the URL checker's answer
 * (url-check-wire.h) and the scripts' values (script-values.h).
 */
#ifndef NBDCURLD_IPC_MESSAGES_H
#define NBDCURLD_IPC_MESSAGES_H

#include <assert.h>
#include <stdint.h>

/* Host byte order: both ends are on the same machine. */
struct ipc_header {
  uint16_t type;          /* enum ipc_type */
  uint16_t flags;         /* per type */
  uint32_t payload_len;   /* bytes following the header, exact per type */
  uint64_t id;            /* request id (front-end's own) or client token */
  uint64_t offset;        /* request offset, or export size */
  uint32_t length;        /* request length, or export index */
  uint32_t error;         /* 0 or a host errno value */
  uint64_t area_offset;   /* READ and WRITE: where in the data area */
};
#define IPC_HEADER_SIZE 40
static_assert(sizeof(struct ipc_header) == IPC_HEADER_SIZE, "ipc header");

enum ipc_type {
  /* Configuration, supervisor -> child on CHILD_FD_CONFIG. */
  IPC_CONFIG_FRONTEND = 1, /* payload struct frontend_config_wire */
  IPC_CONFIG_EXPORT,       /* payload struct export_config_wire + name + description */
  IPC_CONFIG_FETCHER,      /* payload struct fetcher_config_wire + strings */
  IPC_CONFIG_END,          /* payload 0: nothing follows */
  IPC_CONFIG_URL_CHECK,    /* to the URL checker, first: flags FETCHER_VERBOSE,
                              FETCHER_SANDBOX_DEBUG; payload 0 */
  IPC_CONFIG_URL,          /* to the URL checker: payload one URL (1 ..
                              MAX_URL_LENGTH bytes), flags URL_CHECK_*;
                              answered by one IPC_URL_CHECKED on
                              CHILD_FD_PEER */


  /* The URL checker's answer, on its CHILD_FD_PEER socket. */
  IPC_URL_CHECKED = 8,     /* payload struct url_checked_wire + strings */

  /* More configuration. */
  IPC_CONFIG_TLS = 9,      /* to the front-end, after the exports, with
                              --tls: payload struct tls_config_wire + strings */
  IPC_CONFIG_ACCESS,       /* to the front-end, after the exports: one
                              --allow rule, struct access_rule_wire + name */
  IPC_CONFIG_KEYHOLDER,    /* to the key holder, then IPC_CONFIG_END: struct
                              keyholder_config_wire + the certificate chain */
  IPC_CONFIG_LAUNCHER,     /* to the fetcher launcher, then IPC_CONFIG_END:
                              struct launcher_config_wire */
  IPC_CONFIG_REMOVER,      /* to the file remover, then IPC_CONFIG_END:
                              struct remover_config_wire, then each file's
                              struct removed_file_wire and path */

  /* Control, front-end <-> supervisor on the SOCK_SEQPACKET socket. */
  IPC_SPAWN_FETCHER = 16,  /* fe -> sup: id = client token, length = export
                              index; payload 0 */
  IPC_FETCHER_SPAWNED,     /* sup -> fe: id = client token, error = 0 with
                              two or three fds (SCM_RIGHTS): the fetcher's
                              socket, its data area and the data pipe's read
                              end (unless FETCHER_DATA_PIPE is off); or an
                              errno without; payload 0 */
  IPC_STOP_ACCEPTING,      /* sup -> fe: a graceful stop: close the
                              listeners and the clients still negotiating,
                              finish the requests in flight, close each
                              client once its replies are out, exit when
                              none is left; every field 0, no fds,
                              payload 0 */
  IPC_STATS_REQUEST,       /* 19, sup -> fe: report the statistics now: one
                              IPC_EXPORT_STATS per export; every field 0,
                              payload 0 */
  IPC_EXPORT_STATS,        /* 20, fe -> sup: length = export index (in
                              order, 0 first), flags EXPORT_STATS_*,
                              payload struct stats_wire (stats-wire.h): the
                              export's clients, closed and connected, since
                              the start; answers IPC_STATS_REQUEST, and is
                              sent unasked once more as the front-end
                              exits (EXPORT_STATS_FINAL) */
  IPC_CLIENT_STATS,        /* 21, fe -> sup: a client that opened an export
                              closed: id = its token, length = the export
                              index, payload struct client_stats_wire.  For
                              the log only (the export's sums come in
                              IPC_EXPORT_STATS): dropped when the socket
                              is full */

  /* Data, front-end <-> fetcher on the SOCK_STREAM socket. */
  IPC_FETCHER_OPENED = 32, /* fetcher -> fe, first message: offset = export
                              size, flags = FETCHER_CAN_*, length = the
                              largest read it sends through the data pipe
                              (0: none), error = 0 and payload 0; or error
                              an errno (then the fetcher exits) and payload
                              why, as text (0 .. MAX_OPEN_FAILURE_MESSAGE
                              bytes, no credentials) */
  IPC_READ,                /* fe -> fetcher: id, offset, length, area_offset:
                              put the data there; payload 0 */
  IPC_WRITE,               /* fe -> fetcher: id, offset, length, area_offset
                              (the data is there), flags IPC_FLAG_FUA; payload 0 */
  IPC_FLUSH,               /* fe -> fetcher: id; payload 0 */
  IPC_REPLY,               /* fetcher -> fe: id, error; payload 0 (a read's
                              data is in the data area, or with flags
                              IPC_REPLY_PIPED, all of it is in the data pipe,
                              after the bytes of earlier announcements) */
  IPC_PIPE_DISCARD,        /* fetcher -> fe: length = bytes of a failed read
                              that are next in the data pipe: drop them;
                              payload 0 */
  IPC_FETCHER_STARTED,     /* fetcher -> fe, before IPC_FETCHER_OPENED: its
                              start (exec, libraries, sandbox) is done and it
                              opens the export now; every field 0, payload 0 */
  IPC_CACHE,               /* 39, fe -> fetcher: NBD_CMD_CACHE: id, offset,
                              length (1 .. NBD_MAX_REQUEST_SIZE, inside the
                              export), area_offset 0, payload 0: prefetch
                              the range (what fits the store); answered by
                              IPC_REPLY once it is stored (or at once when
                              there is no store) */
  IPC_FETCHER_OPEN,        /* 40, sup -> fetcher, the first message on its
                              CHILD_FD_PEER socket, written by the
                              supervisor before it hands the socket on:
                              open the export now (a spare fetcher waits
                              for it, see limits-spares.h); every other
                              field 0, payload 0 */
  IPC_FETCHER_STATS,       /* 41, fetcher -> fe, after IPC_FETCHER_OPENED:
                              its figures since it opened, payload struct
                              fetcher_stats_wire (stats-wire.h), every
                              field 0; sent when they changed, before the
                              replies they came with.  Untrusted: only
                              summed, saturating */
  IPC_STAGE_WANTED,        /* 42, fetcher -> fe, only from a fetcher that
                              opened with FETCHER_CAN_STAGE: it follows a
                              forward reader: lend it staging spans
                              (limits-staging.h); any number of times, the
                              front-end lends them once per fetcher, when
                              the client's memory has room.  Every field
                              0, payload 0 */
  IPC_STAGE_GIVE,          /* 43, fe -> fetcher: a staging span is the
                              fetcher's now: area_offset, length =
                              STAGE_SPAN_BYTES; when it comes back from
                              being staged, offset = one past the furthest
                              byte that reads answered from it asked for,
                              id = the bytes they asked for (0 and 0: none,
                              or a first lending); payload 0 */
  IPC_STAGED,              /* 44, fetcher -> fe: the export's bytes
                              [offset, offset + length) are in the span at
                              area_offset (one the fetcher holds; length 1 ..
                              STAGE_SPAN_BYTES, inside the export), copied
                              from its store after their replies passed
                              every check: the front-end answers reads
                              inside them itself, and gives the span back
                              (IPC_STAGE_GIVE) once the reader passed it or
                              went elsewhere; payload 0 */

  /* Keys, front-end <-> key holder on a SOCK_SEQPACKET socket: one message
   * per packet, header and payload together, one request at a time. */
  IPC_KEY_SIGN = 48,       /* fe -> kh: id = request number (echoed in the
                              answer), length = the
                              gnutls_sign_algorithm_t, offset = GnuTLS's
                              sign flags, flags IPC_KEY_SIGN_HASHED when the
                              payload is a hash (ECDSA, RSA-PSS), else the
                              whole input (EdDSA); payload 1 ..
                              KEY_MAX_SIGN_INPUT bytes */
  IPC_KEY_SIGNATURE,       /* kh -> fe: id, error = 0 and payload the
                              signature (1 .. KEY_MAX_SIGNATURE), or an
                              errno and payload 0 */
  IPC_KEY_PSK,             /* fe -> kh: id = request number; payload the user
                              name a client gave (1 .. MAX_PSK_USERNAME) */
  IPC_KEY_PSK_KEY,         /* kh -> fe: id, error = 0 and payload the key
                              (1 .. MAX_PSK_KEY), or ENOENT and payload 0 */

  /* The fetcher launcher, supervisor <-> launcher on its CHILD_FD_PEER
   * (SOCK_SEQPACKET, one header per packet, payload 0, every field not
   * named 0).  One start at a time: the supervisor waits for each answer.
   * Anything else ends the launcher (or, from it, makes the supervisor
   * replace it). */
  IPC_LAUNCHER_READY = 56, /* launcher -> sup, once: loaded, sandboxed,
                              waiting for starts */
  IPC_LAUNCH_FETCHER,      /* sup -> launcher: length = the number of
                              descriptors passed (SCM_RIGHTS, 2 ..
                              LAUNCH_MAX_FDS): they become the fetcher's
                              fds 3, 4, ... in order */
  IPC_FETCHER_LAUNCHED,    /* launcher -> sup: id = the new fetcher's pid
                              (a child of the supervisor), error 0; or
                              error = an errno and id 0 */

  /* Scripts, supervisor <-> fetcher on the fetcher's script channel
   * (CHILD_FD_SCRIPTS, SOCK_SEQPACKET, one message per packet, no
   * descriptors).  It stays open while the fetcher lives; the fetcher
   * ends at its EOF.  The supervisor reads nothing else from fetchers:
   * anything else, or a descriptor, and it closes that channel, which
   * ends that fetcher. */
  IPC_SCRIPT_VALUES = 64,  /* sup -> fetcher: the export's scripts ran.
                              id = the generation (1, 2, ... per export),
                              error = 0, flags SCRIPT_VALUES_*, payload
                              struct script_values_wire + headers + cookie;
                              or error = an errno (the run failed: reads
                              waiting for it fail), payload 0.  Sent at the
                              fetcher's start (it opens nothing before the
                              first) and after every run. */
  IPC_SCRIPT_RENEW,        /* fetcher -> sup: a server answered 401 or 403
                              to a request made with generation id: run the
                              scripts again (at most once per generation,
                              SCRIPT_MIN_INTERVAL_MS apart); every other
                              field 0, payload 0 */
};

/* IPC_FETCHER_OPENED flags: what the opened export can do. */
#define FETCHER_CAN_WRITE   (1u << 0)
#define FETCHER_CAN_FLUSH   (1u << 1)
#define FETCHER_CAN_FUA     (1u << 2)
/* It reads ahead of forward readers and may stage what it read ahead
 * (IPC_STAGE_WANTED): only a read-only export's. */
#define FETCHER_CAN_STAGE   (1u << 3)

/* IPC_KEY_SIGN flags. */
#define IPC_KEY_SIGN_HASHED (1u << 0)

/* IPC_WRITE flags. */
#define IPC_FLAG_FUA        (1u << 0)
/* IPC_REPLY flags. */
#define IPC_REPLY_PIPED     (1u << 0)

/* Largest payload of any type: configuration only, since request data
 * never travels in messages (it crosses in the data area or the data
 * pipe, data-path.h).  Room for a fetcher's configuration with every
 * string at its bound. */
#define IPC_MAX_CONFIG_PAYLOAD    (64u * 1024)

/* IPC_FETCHER_OPENED with an errno: why the export could not be opened,
 * as the fetcher tells the front-end (the client's error message) and the
 * supervisor (at start).  One line of a log or of an NBD error reply. */
#define MAX_OPEN_FAILURE_MESSAGE  384u

#endif
