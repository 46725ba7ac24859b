/*
 * fetcher.h: private to the fetcher role (fetcher.c and its request
 * parser fetcher-request-parse.c, fetcher-file.c, and the network
 * fetcher's files under fetcher-http.h).
 *
 * The fetcher has three peers:
 *   front-end   fd CHILD_FD_PEER, SOCK_STREAM: IPC_READ, IPC_WRITE and
 *               IPC_FLUSH and IPC_CACHE in, IPC_FETCHER_OPENED then
 *               IPC_REPLY and IPC_FETCHER_STATS out.
 *               Untrusted: every request is checked here again.
 *   the export  a local file (fetcher-file.c) or a web/FTP server
 *               (fetcher-http.c, fetcher-direct.c).  Untrusted: every
 *               reply is checked.
 *   supervisor  with header-script= or cookie-script= only: the script
 *               channel, fd CHILD_FD_SCRIPTS (fetcher-script.c)
 *
 * fetcher.c owns the role's main, the configuration, the request reader
 * (its validation: fetcher-request-parse.c), and sending replies; a
 * backend only opens its export and serves requests that are already
 * known to be well formed and in bounds.
 */
#ifndef NBDCURLD_FETCHER_H
#define NBDCURLD_FETCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ipc-messages.h"
#include "log.h"
#include "stats-wire.h"
#include "url.h"

/* What every part of the fetcher knows about its export. */
struct fetcher {
  const struct fetcher_config *cfg;
  enum url_kind kind;
  char *file_path;            /* file: exports only, else NULL */
  char *log_url;              /* url_for_log (cfg->url): safe to print */
  const char *export_name;    /* for log lines */
  /* Set by the backend's open. */
  uint64_t size;
  uint32_t can;               /* FETCHER_CAN_* */
  uint32_t piped_read_max;    /* reads up to this go through the data pipe */
  /* Set by the backend's open when it fails: why, for IPC_FETCHER_OPENED
   * (no credentials: URLs in it are url_for_log's). */
  char open_failure[MAX_OPEN_FAILURE_MESSAGE + 1];
};

/* One request from the front-end, already validated against the export:
 * a known type, exact payload, flags known, 1 <= length <=
 * NBD_MAX_REQUEST_SIZE, offset + length <= size, writes only when
 * writable. */
struct fetcher_request {
  uint16_t type;              /* IPC_READ, IPC_WRITE, IPC_FLUSH or IPC_CACHE */
  uint16_t flags;             /* IPC_FLAG_FUA for writes, else 0 */
  uint64_t id;
  uint64_t offset;            /* 0 for flush */
  uint32_t length;            /* 0 for flush */
  uint8_t *data;              /* READ and WRITE: the request's length bytes
                                 in the data area (where a read's data goes,
                                 where a write's data is).  FLUSH: NULL. */
  bool auth_retried;          /* refused with 401 or 403 once already, and
                                 sent again with the scripts' renewed values
                                 (fetcher-script.c): not again */
};

struct fetcher_backend {
  const char *name;
  /* Does open read bytes from a peer (a web server)?  Then it runs under
   * the sandbox; a local file is opened before it. */
  bool open_reads_untrusted;
  /* Work that must happen before the sandbox is applied (library
   * initialisation that reads configuration files).  May be NULL. */
  void (*init) (struct fetcher *f);
  /* Open the export and set f->size and f->can.  Returns 0, or an errno
   * for IPC_FETCHER_OPENED after logging why. */
  int (*open) (struct fetcher *f);
  /* Serve requests until the front-end closes its end. */
  void (*serve) (struct fetcher *f);
};

/* fetcher-connect.c: the TCP ports a network export may connect to, for
 * its Landlock rules: the URL's, 80 and 443 unless followlocation=false,
 * --allow-port, and 53 for DNS over TCP when the host is a name; up to
 * max of them.  *any_port: FTP, whose data connections go anywhere.
 * Returns how many, or -1 when the URL cannot be read. */
int fetcher_connect_ports (const struct fetcher_config *cfg, uint16_t *ports,
                           size_t max, bool *any_port);

extern const struct fetcher_backend fetcher_file_backend;
extern const struct fetcher_backend fetcher_http_backend;

/* Take the next request from the front-end without blocking.  Returns 1
 * with *req filled in, 0 when no complete request is there yet, or -1
 * when the front-end has closed its end at a message boundary.  A
 * malformed or out-of-bounds request ends the process (exit 1): the
 * front-end checked it already, so it is broken or compromised. */
int fetcher_next_request (struct fetcher *f, struct fetcher_request *req);

/* True if bytes already read from the front-end are waiting to be parsed
 * (so there may be a request even though the socket is not readable). */
bool fetcher_input_buffered (void);

/* After EOF from the front-end: true if it closed the socket entirely,
 * false if it only shut down its sending side and still reads replies. */
bool fetcher_front_end_gone (void);

/* Queue IPC_REPLY for request id: error 0 (a read's data is in place in
 * the data area), or an errno.  Queued replies go out together with
 * fetcher_flush_replies, which a backend calls before it waits for
 * anything.  If the front-end has gone away, exits quietly: there is
 * nobody left to serve. */
void fetcher_reply (uint64_t id, uint32_t error);
void fetcher_flush_replies (void);

/* The fetcher's figures since it opened (stats-wire.h): each part of the
 * fetcher adds what it sees; fetcher_flush_replies sends them, when they
 * changed, ahead of the replies, so that the front-end has them before a
 * client sees the reply they came with. */
extern struct fetcher_stats_wire fetcher_stats;

/* The data pipe (data-path.h) of a network export: its write end, made
 * non-blocking, or -1 when the supervisor gave none; and the largest read
 * that may go through it (0 when none may). */
extern int fetcher_pipe_fd;
extern uint32_t fetcher_pipe_read_max;
/* Queue IPC_REPLY with IPC_REPLY_PIPED: every byte of the read is in the
 * pipe now, after those of earlier announcements. */
void fetcher_reply_piped (uint64_t id);
/* Queue IPC_PIPE_DISCARD: the next length bytes in the pipe, after those
 * of earlier announcements, belong to no reply. */
void fetcher_pipe_discard (uint32_t length);
/* Queue any other message for the front-end, after the replies before
 * it (staging's, fetcher-staging.c). */
void fetcher_queue_message (const struct ipc_header *h);
/* The front-end sent something it never should: end this connection. */
__attribute__((noreturn)) PRINTF_LIKE (1, 2)
void fetcher_front_end_violation (const char *fmt, ...);
/* The data area shared with the front-end (data-path.h), mapped at start. */
extern uint8_t *fetcher_data_area;

/* The export's CA certificates (--cainfo, --capath) as the supervisor
 * read them, mapped read-only from the sealed memfd it gave, for
 * libcurl's CURLOPT_CAINFO_BLOB; NULL and 0 when there are none (libcurl's
 * default CA store then). */
extern const char *fetcher_ca_bundle;
extern size_t fetcher_ca_bundle_len;

#endif
