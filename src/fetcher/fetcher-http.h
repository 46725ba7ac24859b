/*
 * fetcher-http.h: private to the network fetcher: the libcurl path
 * (fetcher-http.c and the fetcher-http-*.c below it, sharing
 * fetcher-curl.h: opening the export, and reads of https, ftp and ftps)
 * and fetcher-direct.c (reads without libcurl, plain http ones spliced
 * into the data pipe): the transfers they share (fetcher-transfer.c).
 * Whether a reply is the one asked for is neither's business but
 * web-reply.c's, which both use.  Calls go one way: the libcurl path
 * drives fetcher-direct.c, which calls back only into
 * fetcher-http-errors.c, which calls neither.
 */
#ifndef NBDCURLD_FETCHER_HTTP_H
#define NBDCURLD_FETCHER_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "data-path.h"
#include "fetcher.h"
#include "fetcher-wire.h"
#include "limits-transfer.h"
#include "log.h"
#include "url-check-wire.h"
#include "web-reply.h"

/* Requests waiting for a free transfer.  A well-behaved front-end keeps
 * at most MAX_INFLIGHT_PER_CLIENT requests in flight, so this only fills
 * when it misbehaves; then its socket is simply not read until a transfer
 * finishes. */
#define QUEUE_SIZE MAX_INFLIGHT_PER_CLIENT

/* libcurl's receive buffer per transfer: bigger than the 16 KiB default
 * means fewer callbacks for large reads; small enough that a body we
 * refuse is cut off early. */
#define CURL_RECEIVE_BUFFER (128L * 1024)

/* Sequential reads waiting together are fetched as one ranged GET of up
 * to this many bytes (and parts): fewer HTTP requests for the server, the
 * connection and libcurl to handle.  Each part is answered as soon as its
 * last byte arrives, so coalescing adds no wait; the data goes straight to
 * each request's place in the data area, so it adds no memory either. */
#define COALESCE_MAX_BYTES (8u * 1024 * 1024)
#define COALESCE_MAX_PARTS 32

/* The stall window of --stall-timeout (see MIN_TRANSFER_RATE). */
static inline unsigned
fetcher_stall_timeout (const struct fetcher_config *cfg)
{
  return cfg->stall_timeout ? cfg->stall_timeout : DEFAULT_STALL_TIMEOUT;
}

enum transfer_mode {
  MODE_HEAD,                  /* open: HEAD (or FTP SIZE), redirects followed */
  MODE_PROBE,                 /* open: GET bytes=0-0, redirects followed */
  MODE_READ,                  /* serve: one range of the pinned URL */
};

struct transfer {
  CURL *easy;
  bool easy_used;             /* easy has run a transfer: renew_easy */
  struct transfer *next_free;
  enum transfer_mode mode;
  bool parse_headers;         /* HTTP, not FTP */
  /* The request: one range, offset and length (the whole range). */
  uint64_t id, offset;
  uint32_t length;
  uint8_t *data;              /* probe, prefetch: exactly length bytes;
                                 reads: NULL */
  size_t received;            /* <= length */
  /* Reads: the requests the range covers, in order, each with its place
   * in the data area; parts before next_part are complete and answered. */
  struct {
    uint64_t id;
    uint8_t *data;
    uint32_t length;
    bool auth_retried;        /* struct fetcher_request's */
  } parts[COALESCE_MAX_PARTS];
  unsigned nparts, next_part;
  size_t part_received;       /* of parts[next_part] */
  /* The reply to the request now out: reset whenever one goes out
   * (reply_begin), checked before its first body byte is taken. */
  struct web_reply reply;
  /* A direct read (fetcher-direct.c): this slot's own connection, kept
   * across reads, and where the read is. */
  bool direct;
  int sock;                   /* -1: none (over TLS: libcurl's socket of
                                 tls, not this file's to close) */
  CURL *tls;                  /* https: the connection's own libcurl handle
                                 (CURLOPT_CONNECT_ONLY), or NULL */
  CURLM *tls_multi;           /* and the multi handle it connects in */
  bool to_area;               /* a direct read's body goes into the data
                                 area (https, or larger than the pipe
                                 takes), not the pipe */
  bool sock_reused;           /* it served a read before this one */
  int dstate;                 /* enum direct_state, fetcher-direct.c */
  char *request;              /* the request's bytes (malloc'd), */
  size_t request_len, request_sent;
  uint8_t *head;              /* response headers: head_cap bytes, grown
                                 up to MAX_RESPONSE_HEADER_BYTES */
  size_t head_cap;
  size_t head_len;            /* bytes in head */
  size_t head_scanned;        /* searched for the section's end up to here */
  size_t body_pos;            /* head[body_pos..head_len): body bytes read with it */
  bool conn_close;            /* the server closes after this reply */
  uint64_t deadline_ms;       /* waiting on the server past this: fail,
                                 unless the body's minimum rate was met */
  uint64_t window_bytes;      /* body bytes since the rate window began */
  uint64_t limit_ms;          /* --timeout: the read's end at the latest,
                                 retries included (set by start_read) */
  /* Retries (retry_decide): those of this read so far, and while it
   * waits for the next, when that starts (0: not waiting) and which way
   * (direct, or through libcurl). */
  unsigned retries;
  uint64_t retry_at_ms;
  bool retry_direct;
  struct transfer *next_owner;  /* the queue for the data pipe */
  bool wake_on_part;          /* queued, or the owner waiting for its
                                 next part: SO_RCVLOWAT is that part */
  /* Sizing to the link (direct-sizing.c): when the request
   * went out, and the body bytes waiting in the socket when the rate
   * window began (they count for the window only once moved). */
  uint64_t sent_us;
  size_t window_here;
  struct ra_segment *prefetch;  /* a readahead's segment (its buffer is
                                   data), or NULL: a read */
  bool scan;                    /* a chunk of --prefetch=all (its buffer is
                                   data, no parts) */
  char errbuf[CURL_ERROR_SIZE];
  char message[CURL_ERROR_SIZE + 256];  /* curl_message's text, or a TLS
                                           failure with its next step */
  char refused[MAX_LOG_URL_LENGTH + 256];  /* why fetcher_open_socket refused
                                              a connection, or "" */
};

struct http_state {
  struct fetcher *f;
  CURLM *multi;
  struct transfer *pool;      /* f->cfg->connections transfers */
  struct transfer *free_list;
  unsigned active;
  /* Pinned at open. */
  char *range_url;            /* final URL after redirects: may hold credentials */
  bool range_same_origin;     /* range_url's scheme, host and port are the URL's */
  bool range_is_http;         /* else FTP(S) */
  char *etag, *last_modified; /* or NULL */
  char *precondition;         /* "If-Match: ..." or "If-Unmodified-Since: ...", or NULL */
  struct curl_slist *preconditions; /* the same, for libcurl, then the
                                       header= lines reads may send */
  char *read_headers;         /* the same lines for the direct reads */
  struct curl_slist *resolve; /* resolve= entries, for CURLOPT_RESOLVE */
  struct curl_slist *open_headers;  /* header= lines and the cookie= as a
                                       Cookie header, for the open: libcurl
                                       keeps Authorization and Cookie headers
                                       from hosts a redirect leads to */
  /* Requests waiting for a transfer: ring buffer. */
  struct fetcher_request queue[QUEUE_SIZE];
  unsigned queue_head, queue_len;
  /* Reads that fit the data pipe go direct (fetcher-direct.c). */
  bool direct;
  /* Counted for the summary at the end (retry_summary). */
  uint64_t retried_reads, retries, retried_failed;
  /* cookiefile=: the one cookie store of every handle, or NULL. */
  CURLSH *cookies;
};
extern struct http_state http;

/* fetcher-http-errors.c */
/* libcurl's words what (for rc) about a server certificate that no CA we
 * trust signed, with the next step after them, in t->message; what
 * itself for any other failure. */
const char *certificate_problem (struct transfer *t, CURLcode rc, const char *what);

/* fetcher-transfer.c */
/* A request for t goes out (its mode, offset and length set): its reply
 * starts afresh (web_reply_reset). */
void reply_begin (struct transfer *t);
/* The reads of t not answered yet fail with EIO, and why is logged. */
void fail_read (struct transfer *t, const char *why);
/* Part p of t (none before it unanswered) is all in its place in the data
 * area, from a reply that passed its checks: kept in the cache, and
 * answered. */
void answer_part (struct transfer *t, unsigned p);
/* t goes back to the pool's free list. */
void release (struct transfer *t);
/* The queue of requests waiting for a transfer (the callers check that
 * there is room, or a request): at its tail, back at its head, from its
 * head. */
void queue_push (const struct fetcher_request *req);
void queue_push_front (const struct fetcher_request *req);
struct fetcher_request queue_pop (void);

/* fetcher-readahead.c: the prefetch store (readahead and IPC_CACHE).
 * Flags it puts on a read it hands back to be fetched (struct
 * fetcher_request's flags, which are 0 for reads from the front-end): it
 * saw the read already; the read must go into the data area (its start
 * was copied there), not through the data pipe. */
#define REQ_READAHEAD_SEEN (1u << 14)
#define REQ_NOT_PIPED      (1u << 15)
struct ra_segment;
/* After the open: a store of up to max bytes (0: none, every read is
 * fetched as it comes and a CACHE is answered at once). */
void readahead_init (uint32_t max);
/* A request off the queue, READ or CACHE: true when the store took it
 * (answered, or waiting for a prefetch); false: fetch req, which may have
 * been shortened to the part the store lacks. */
bool readahead_take (struct fetcher_request *req);
/* Answer the waiting requests that can be, start what they need, hand
 * back reads to be fetched (to the queue's head).  Called once a round. */
void readahead_progress (void);
/* The prefetch of segment s ended: why NULL if every check passed. */
void readahead_finished (struct ra_segment *s, const char *why);
/* No request waits in the store. */
bool readahead_idle (void);
/* The store holds or fetches a byte of [offset, offset + length): a
 * queued read that does must come off the queue through readahead_take,
 * not join another read's transfer, or it would be fetched twice. */
bool readahead_overlaps (uint64_t offset, uint32_t length);
/* Is a window in flight fetching bytes of [offset, offset + length)? */
bool readahead_fetching (uint64_t offset, uint32_t length);
/* Windows in flight (each holds a transfer), and reads waiting for them. */
unsigned readahead_windows_in_flight (void);
unsigned readahead_waiters (void);
/* What staging asks of the store: is the newest read's run followed
 * (read ahead), and where are its furthest byte and its start; how many
 * bytes from pos, up to max, the store holds complete without a gap;
 * copy n of them (readahead_stored said so) to dst; and reads the
 * front-end answered from staged bytes, [offset, offset + length), as if
 * they had come here. */
bool readahead_following (uint64_t *frontier, uint64_t *run_start);
/* Hold bytes fewer in the store from now on (a staging span took them):
 * the oldest complete segments go as room is needed. */
void readahead_shrink (uint32_t bytes);
uint32_t readahead_stored (uint64_t pos, uint32_t max);
void readahead_copy (uint8_t *dst, uint64_t pos, uint32_t n);
void readahead_staged_progress (uint64_t offset, uint32_t length);
/* How many bytes a span may take: no more than the reader's lead, so
 * that a slow reader has no more staged ahead of it than fetched. */
uint32_t readahead_stage_max (void);

/* fetcher-staging.c: staged reads (limits-staging.h).  A staging span the
 * front-end gave (back): req->data is where, req->offset and req->id how
 * far the reads answered from it went and the bytes they asked for. */
void staging_given (const struct fetcher_request *req);
/* Stage into the spans held what the store holds ahead of the reader;
 * the first time the reader is followed, ask for spans. */
void staging_fill (void);
/* The bytes staged past frontier for the run that starts at run_start:
 * the front-end may answer reads up to there without a word, so the
 * store's lead counts from there. */
uint64_t staging_ahead (uint64_t frontier, uint64_t run_start);

/* fetcher-http.c: start s's prefetch of [offset, offset + length) into
 * buf through libcurl, on a free transfer (the caller checked there is
 * one).  A failure to start is readahead_finished at once. */
void start_prefetch (struct ra_segment *s, uint64_t offset, uint32_t length, uint8_t *buf);

/* fetcher-scan.c: blocks fetched whole into the cache, and --prefetch=all.
 * After the open (and fetcher_cache_pin): scan if asked, with the cache's
 * block size and capacity in bytes. */
void scan_init (const struct fetcher *f, uint32_t block_size, uint64_t capacity);
/* Start chunks while the client's reads leave the fetcher idle.  Called
 * once a round, after the client's reads were started. */
void scan_progress (void);
/* Start no more chunks of --prefetch=all: the client is leaving (blocks
 * left in part are still fetched). */
void scan_stop (void);
/* Are blocks listed to be fetched whole, or being fetched? */
bool scan_fills_waiting (void);
/* Chunks running now (counted in http.active). */
unsigned scan_inflight (void);
/* A chunk's transfer ended: why NULL if every check passed. */
void scan_finished (struct transfer *t, const char *why);
/* fetcher-http.c: start t's range through libcurl (t->offset, t->length,
 * and t->data or its parts set). */
void start_curl_read (struct transfer *t);

/* fetcher-connect.c */
/* libcurl's CURLOPT_OPENSOCKETFUNCTION (clientp: the transfer): a
 * connection to a port or an address the redirect rules forbid is
 * refused, and why is left in t->refused. */
curl_socket_t fetcher_open_socket (void *clientp, curlsocktype purpose,
                                   struct curl_sockaddr *address);

/* fetcher-trace.c: -D curl.verbose=1 (FETCHER_CURL_VERBOSE).  libcurl's
 * CURLOPT_DEBUGFUNCTION; and the lines of a header section (a request's,
 * kind '>', or a reply's, '<') or of text ('*'), masked and logged. */
int fetcher_curl_trace (CURL *easy, curl_infotype type, char *data, size_t size,
                        void *userp);
void fetcher_trace_block (char kind, const char *data, size_t size);
static inline bool
fetcher_tracing (void)
{
  return (http.f->cfg->flags & FETCHER_CURL_VERBOSE) != 0;
}
/* fetcher-script.c: header-script= and cookie-script= (the supervisor
 * runs them; this is the fetcher's side). */
void script_init (const struct fetcher_config *cfg);
/* The script channel's descriptor, or -1 without scripts. */
int script_fd (void);
/* The header= lines and the cookie to send: the scripts' values when
 * they give them, else the configuration's. */
const char *script_headers (const struct fetcher_config *cfg);
const char *script_cookie (const struct fetcher_config *cfg);
/* Before the open: wait for the first values.  Returns 0, or an errno
 * for IPC_FETCHER_OPENED after logging why. */
int script_wait_first (struct fetcher *f);
/* The open was refused (401, 403): ask for a renewal and wait for it.
 * True when new values are in use. */
bool script_renew_blocking (void);
/* Serving: take the supervisor's messages (the script channel is
 * readable); while a renewal is asked for or new values wait to be
 * taken, no read starts; take them once no transfer runs (then rebuild
 * the header lists); the refused reads go back to the queue. */
void script_input (void);
bool script_hold_reads (void);
bool script_values_waiting (void);
void script_take_values (void);
void script_requeue (void);
unsigned script_parked (void);
/* A read failed: if the server refused it with 401 or 403, scripts are
 * configured and it was not retried yet, park it for the renewal and
 * return true (it is not failed); else false. */
bool script_park_refused (struct transfer *t);
/* Retries.  Why an attempt of a read failed: */
enum retry_cause {
  RETRY_CAUSE_REPLY,          /* its reply was refused: a retry only if
                                 web_reply_transient says so (408, 429,
                                 500, 502, 503, 504) */
  RETRY_CAUSE_TRANSIENT,      /* the connection: none, reset, closed early,
                                 a short body, a stall, a connect timeout */
  RETRY_CAUSE_FINAL,          /* anything else: wrong data, another object,
                                 local trouble: never retried */
};
/* The one place that decides whether a failed read is tried again: its
 * cause, the retries left (--retries), and the time left (--timeout).
 * The caller has ended the attempt (its connection, its bytes in the
 * data pipe).  Returns true when the read will be tried again: the parts
 * answered are dropped from it (offset and length follow), it waits,
 * holding its slot, until retry_take_due hands it back, and a line says
 * why.  Returns false: the caller fails it (fail_read) and releases it. */
bool retry_decide (struct transfer *t, enum retry_cause cause, const char *why);
/* Milliseconds until the soonest waiting retry is due, or -1: none. */
long retry_wait_ms (void);
/* A read whose retry is due now (it starts through direct_start or
 * libcurl, as t->retry_direct and http.direct say), or NULL. */
struct transfer *retry_take_due (void);
/* fetcher-http-errors.c: could a failed libcurl transfer or connection
 * on easy pass if tried again (RETRY_CAUSE_TRANSIENT), or not (a
 * certificate refused, a connection the sandbox refused:
 * RETRY_CAUSE_FINAL)? */
enum retry_cause fetcher_curl_cause (CURL *easy, CURLcode rc);
/* Drop t's answered parts: t->offset and t->length become those of the
 * parts left (one at least). */
void trim_answered_parts (struct transfer *t);
/* The log line of an export's retries, when its fetcher ends. */
void retry_summary (void);

/* fetcher-direct.c and the direct-*.c files beside it (direct.h names
 * each one's concern) */
/* The header lines changed (new script values): make the direct reads'
 * request again (or stop them, if it cannot be made). */
void direct_headers_changed (void);
/* After a successful open: can reads go direct (plain http, the data
 * pipe, no credentials)?  Sets http.direct and prepares the requests. */
void direct_prepare (struct transfer *opened);
/* Does req go direct (else through libcurl)?  https: every read, into
 * the data area; plain http: through the data pipe if it takes the read,
 * else into the data area (not a read whose start the prefetch store
 * copied into the area). */
bool direct_takes (const struct fetcher_request *req);
/* Do direct reads use the data pipe (plain http), or the data area
 * (https)? */
bool direct_piped (void);
/* Does a direct read of req go into the data area (https, or larger than
 * the data pipe takes), or through the pipe? */
bool direct_to_area (const struct fetcher_request *req);
/* Start t's range (t->offset, t->length, t->parts set) without libcurl. */
void direct_start (struct transfer *t);
/* Is the data pipe free for other bytes (no direct read is moving its
 * body into it)?  Every byte in it then belongs to an announcement
 * already made. */
bool direct_pipe_idle (void);
/* May another direct read start now?  Not while those running have the
 * look-ahead or more still to come (DIRECT_AHEAD_BYTES on a near server,
 * more on a distant one: direct-sizing.c). */
bool direct_may_start (void);
/* The most bytes one direct read may carry (queued reads coalesced into
 * it, start_read): COALESCE_MAX_BYTES on a near server; on a distant one,
 * the look-ahead spread over the connections, so that they all bring
 * data at once. */
uint32_t direct_piece_max (void);
/* The round trip to the server, as the direct reads measured it (the
 * least of the last replies' times to their headers), in microseconds;
 * 0 if none was measured. */
uint64_t direct_round_trip_us (void);
/* Descriptors the direct reads wait for, up to max; and the longest
 * wait in milliseconds their deadlines allow (or -1: none). */
unsigned direct_wait_fds (struct curl_waitfd *fds, unsigned max, long *timeout_ms);
/* Move the direct reads on after a wait on those descriptors. */
void direct_progress (const struct curl_waitfd *fds, unsigned n);
/* A read that direct_start or direct_progress handed over to libcurl
 * (its offset, length and parts set to what is left), or NULL: the
 * caller starts it through libcurl. */
struct transfer *direct_take_handed (void);

#endif
