/*
 * frontend.h: state shared by the front-end's files.
 *
 *   frontend.c      role main, event loop, sockets, peers
 *   handshake.c     NBD fixed-newstyle negotiation (one client's options)
 *   transmission.c  NBD requests and replies, and the fetcher's replies
 *   frontend-tls.c  NBD over TLS (STARTTLS), keys through the key holder
 *   frontend-tls-starts.c
 *                   each client address's share of TLS handshakes
 *   access.c        --allow: who may use which export
 *   handshake-parse.c, request-parse.c
 *                   the client's options and requests, parsed and checked:
 *                   no state, no loop, unit-tested alone (tests/unit/)
 *   clients.c       closing a client, its fetcher's start and end, the clock
 *   output-queue.c  bytes waiting for a peer, and the memory they hold
 *   data-area.c     a fetcher's data area and its allocator
 *   frontend-stats.c
 *                   the clients' and exports' statistics, reported to the
 *                   supervisor
 *
 * Calls go one way, down the layers: frontend.c calls transmission.c,
 * which calls handshake.c (an export opened), which calls access.c and
 * clients.c; those call frontend-tls.c; and everything calls down into
 * output-queue.c and data-area.c.  Nothing calls back up: where a lower
 * layer's event needs a higher one (a TLS handshake ended), the loop
 * hands it a function to call.
 *
 * The front-end is the only process that reads client bytes.  It holds no
 * files and makes no connections; it asks the supervisor for a fetcher when
 * a client has chosen an export, and gets the fetcher's socket back.
 */
#ifndef NBDCURLD_FRONTEND_H
#define NBDCURLD_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "data-area.h"
#include "data-path.h"
#include "ipc-messages.h"
#include "limits-nbd.h"
#include "nbd-protocol.h"
#include "output-queue.h"
#include "limits-staging.h"
#include "staging.h"
#include "stats-wire.h"

enum client_state {
  CLIENT_GREETING,        /* greeting queued; want 4 bytes of client flags */
  CLIENT_OPTIONS,         /* want an option header and its data */
  CLIENT_TLS_HANDSHAKE,   /* STARTTLS answered: flush that, then the TLS
                             handshake (frontend-tls.c) */
  CLIENT_WAIT_FETCHER,    /* an INFO/GO/EXPORT_NAME waits for a fetcher */
  CLIENT_TRANSMISSION,    /* want request headers */
  CLIENT_WRITE_PAYLOAD,   /* collecting a WRITE's data */
  CLIENT_DISCARD,         /* skipping a refused WRITE's data */
  CLIENT_CLOSING,         /* flush what is queued, then close */
};

/* A request handed to the fetcher, waiting for its reply. */
struct inflight {
  bool used;
  uint16_t type;          /* NBD_CMD_* */
  uint16_t flags;
  uint64_t cookie;
  uint64_t offset;
  uint32_t length;
  uint64_t ipc_id;        /* the id the fetcher must answer: never reused */
  uint64_t started_us;    /* its header read (now_us), for its service time */
  struct area_span span;  /* READ and WRITE: where the data is */
};

/* Request ids sent to the fetcher: a serial number above the slot number,
 * so a late or repeated reply can never pass for the answer to a newer
 * request that took the same slot. */
#define IPC_ID_SLOT_BITS 8
static_assert (MAX_INFLIGHT_PER_CLIENT <= (1u << IPC_ID_SLOT_BITS), "slot bits");

/* What the fetcher sent and we have not handled yet: headers (data is in
 * the area; only a failed open's reason follows its header), read many at
 * a time. */
#define FETCHER_INPUT_SIZE (64 * IPC_HEADER_SIZE)
static_assert (FETCHER_INPUT_SIZE >= IPC_HEADER_SIZE + MAX_OPEN_FAILURE_MESSAGE,
               "a failed open's reason fits the fetcher input buffer");
struct fetcher_input {
  uint8_t buf[FETCHER_INPUT_SIZE];
  size_t len;                           /* <= FETCHER_INPUT_SIZE */
};

/* Capacity of a client's input buffer: one option with its data, or many
 * pipelined request headers. */
#define CLIENT_INPUT_SIZE (NBD_OPTION_HEADER_SIZE + NBD_MAX_OPTION_LENGTH)

/* Where a client connected from, to count connections per address: the
 * IPv4 or IPv6 address, or the family alone (Unix sockets, -s). */
struct client_address {
  int family;
  uint8_t addr[16];
};

struct client_tls;                     /* frontend-tls.c */
struct event_loop;                     /* event.h */

struct client {
  uint64_t token;               /* unique; names the client to the supervisor */
  int rfd, wfd;                 /* the same socket, or stdin/stdout with -s */
  char peer[64];                /* for log lines */
  struct client_address from;
  uint64_t connected_ms;        /* when accepted: the oldest handshake goes first */
  enum client_state state;
  uint64_t deadline_ms;         /* handshake must finish by then (or, while
                                   waiting for a fetcher, the export must
                                   open by then); 0 after */

  uint8_t in[CLIENT_INPUT_SIZE];
  size_t in_len;
  struct outq out;              /* towards the client */
  struct client_tls *tls;       /* after STARTTLS, else NULL */

  /* Negotiation. */
  bool fixed_newstyle;          /* else plain: EXPORT_NAME alone, no replies */
  bool no_zeroes;
  bool structured;
  unsigned options_seen;
  unsigned fetcher_spawns;
  bool meta_base_allocation;    /* base:allocation selected ... */
  uint32_t meta_export;         /* ... for this export */
  uint32_t pending_option;      /* INFO, GO or EXPORT_NAME awaiting a fetcher */
  uint32_t pending_export;
  bool want_name, want_description;

  /* Its fetcher's start (request_fetcher): waiting for a turn, or
   * asked for and not yet started (counted in fe.fetchers_starting). */
  enum { SPAWN_NONE, SPAWN_QUEUED, SPAWN_STARTING } spawn;
  uint64_t spawn_turn;          /* first come, first served */

  /* The export chosen, and its fetcher. */
  int fetcher_fd;               /* -1 when none */
  bool fetcher_open;            /* IPC_FETCHER_OPENED received */
  bool fetcher_failed;          /* died or misbehaved: requests get EIO */
  uint32_t export_index;
  uint64_t export_size;
  uint32_t fetcher_caps;        /* FETCHER_CAN_* from IPC_FETCHER_OPENED */
  uint32_t pipe_read_max;       /* reads up to this come through the pipe */
  uint16_t eflags;              /* transmission flags sent to the client */
  struct outq to_fetcher;
  struct fetcher_input fin;
  /* IPC_PIPE_DISCARD messages not yet balanced by a read's reply: at
   * most one per read in flight, so a fetcher cannot grow the queue with
   * them. */
  unsigned discards_unmatched;
  /* Spans of the data area lent to the fetcher for staged reads
   * (staging.c), all STAGE_NONE until it asks. */
  struct stage stages[STAGE_SPANS];

  /* Transmission. */
  struct inflight slots[MAX_INFLIGHT_PER_CLIENT];
  unsigned ninflight;
  uint64_t request_serial;      /* for inflight.ipc_id */
  struct data_area *area;       /* the attached fetcher's, or NULL */
  struct data_pipe *pipe;       /* its data pipe, or NULL (file: exports) */
  uint32_t payload_slot;        /* the WRITE whose data is being collected */
  uint8_t *payload;             /* where: in its span of the data area */
  size_t payload_got;
  uint64_t discard_left;
  bool disconnect_requested;    /* NBD_CMD_DISC seen */

  /* Statistics (frontend-stats.c), from its first request phase on. */
  bool counted;                 /* in transmission: its figures count */
  uint64_t serving_since_ms;
  struct stats_wire stats;      /* its requests, and its earlier fetchers' */
  struct fetcher_stats_wire fetcher_stats;   /* its fetcher's, as it said */
  bool dead;                    /* closed; freed at the end of the round */
};

struct frontend {
  struct frontend_config config;
  int control_fd;               /* SOCK_SEQPACKET to the supervisor */
  int reserve_fd;               /* spare descriptor for accept's EMFILE, or -1 */
  uint64_t accept_paused_until; /* out of descriptors: listeners rest until then */
  int *listeners;
  unsigned nlisteners;
  unsigned max_clients;         /* --max-clients, lowered to fit RLIMIT_NOFILE */
  struct client **clients;      /* max_clients + ACCEPTS_PER_ROUND entries */
  unsigned nclients;            /* entries, closed ones included until reaped */
  unsigned nlive;               /* entries not closed */
  unsigned accepts_left;        /* this round's */
  uint64_t next_token;
  uint64_t unix_peers;          /* numbers Unix-socket peers in log lines */
  unsigned fetchers_starting;   /* clients in SPAWN_STARTING */
  unsigned max_fetchers_starting;
  uint64_t spawn_turns;
};

extern struct frontend fe;

/* clients.c */
uint64_t now_ms (void);
/* Close a client: its socket, its fetcher, its queues and its TLS session.
 * It is freed at the end of the loop's round (c->dead until then). */
void client_close (struct client *c, const char *why);
/* Queue the client for a fetcher for that export, asked of the supervisor
 * in turn. */
int request_fetcher (struct client *c, uint32_t export_index);
/* The client's fetcher has started, or will not: another may start. */
void fetcher_start_done (struct client *c);
/* Let go of the client's fetcher (it exits when its socket closes). */
void drop_fetcher (struct client *c);

/* handshake.c */
void handshake_start (struct client *c);
/* Consume what the client sent during negotiation; returns bytes used, or
 * 0 when more are needed.  May change c->state or close. */
size_t handshake_consume (struct client *c, const uint8_t *data, size_t len);
/* The fetcher for the pending option opened (error 0) or failed, and
 * then why, as it said (reason_len bytes, untrusted; 0 when it did not). */
void handshake_fetcher_opened (struct client *c, uint32_t error,
                               const uint8_t *reason, uint32_t reason_len);

/* The handshake over TLS is done: what was negotiated before it is
 * forgotten (NBD spec, STARTTLS), and options follow in TLS. */
void handshake_tls_done (struct client *c);

/* frontend-tls.c */
/* What the loop does when a client's TLS handshake has ended: established
 * (options follow in TLS), or failed (the client is to be closed).  Given
 * by the loop, so that the TLS layer never calls up into the phases. */
typedef void tls_handshake_ended_fn (struct client *c, bool established);
void tls_setup (tls_handshake_ended_fn *ended);   /* before the sandbox */
bool tls_offered (void);                /* --tls=on or require */
bool tls_required (void);
bool client_in_tls (const struct client *c);
/* STARTTLS accepted: a session for the client; -1 if none can be made,
 * with errno EAGAIN when its address has used up its share of TLS
 * handshakes for now (TLS_STARTS_PER_ADDRESS_*). */
int tls_start (struct client *c);
bool tls_handshake_begun (const struct client *c);
/* A handshake whose fiber waits for the key holder (frontend-tls.c): its
 * socket is not polled meanwhile; the key holder's socket is (registered
 * in ev while one waits: 0, or -1 when ev is full), and each answer
 * resumes the handshake it belongs to.  A wait ends by
 * KEY_ANSWER_TIMEOUT_MS. */
bool tls_key_waiting (const struct client *c);
uint64_t tls_key_deadline (const struct client *c);
void tls_key_deadline_check (struct client *c, uint64_t now);
int tls_keyholder_register (struct event_loop *ev);
short tls_handshake_events (const struct client *c);
/* Go on with the handshake; once it ends, tls_setup's function. */
void tls_handshake_step (struct client *c);
void tls_end (struct client *c);
/* Client I/O, through TLS once it is up: read(2)'s conventions, and the
 * output queue's flush. */
ssize_t client_recv (struct client *c, void *buf, size_t len);
int client_flush (struct client *c);
size_t client_unsent (const struct client *c);
/* Decrypted bytes are waiting inside GnuTLS (poll would not say so). */
bool tls_input_pending (const struct client *c);
const char *tls_psk_user (const struct client *c);
const char *tls_cert_dn (const struct client *c);
bool tls_cert_has_san (const struct client *c, const char *name);

/* frontend-tls-starts.c */
/* May this client begin a TLS handshake now (its address's share)? */
bool tls_start_allowed (const struct client *c);

/* access.c */
bool export_allowed (const struct client *c, uint32_t export_index);

/* frontend-stats.c */
uint64_t now_us (void);
void stats_init (void);
/* The client entered transmission: from now on it counts. */
void stats_client_serving (struct client *c);
/* IPC_FETCHER_STATS's payload (its size checked); and the fetcher gone:
 * its last figures stay the client's. */
void stats_fetcher_report (struct client *c, const uint8_t *payload);
void stats_fetcher_dropped (struct client *c);
/* The client is closing: its figures join its export's, and go to the
 * supervisor for the log. */
void stats_client_closed (struct client *c);
/* One IPC_EXPORT_STATS per export to the supervisor; final: we exit. */
void stats_report (bool final);

/* transmission.c */
size_t transmission_consume (struct client *c, const uint8_t *data, size_t len);
struct client_request;
void transmission_reply_copied (struct client *c, const struct client_request *req,
                                const uint8_t *data, uint64_t started_us);
/* More bytes of a WRITE's payload are in c->payload (its span of the data
 * area); dispatch if complete. */
void transmission_payload_done (struct client *c);
/* Read what the fetcher sent; returns -1 if the fetcher was dropped. */
int transmission_read_fetcher (struct client *c);
/* Fail every request handed to the fetcher with EIO (it died). */
void transmission_fail_inflight (struct client *c);
uint32_t nbd_errno (uint32_t host_errno);

#endif
