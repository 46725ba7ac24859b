/*
 * fuzz-direct-reply: the direct read path's reading of a web server's
 * replies (src/fetcher/fetcher-direct.c and the direct-*.c beside it): the
 * header section read from the socket (header_section_end,
 * parse_header_section, headers_done, interim replies), then the body
 * moved into the data pipe, over kept-alive connections that serve one
 * read after another, with the server's bytes arriving in segments the
 * input cuts.
 *
 * The direct path's files are compiled into this file (but its header
 * parser, direct-head-parse.c, which has nothing to stand in for and is
 * linked), driven through its entry
 * points as fetcher-http.c's loop drives them (direct_prepare, then
 * direct_start per read, direct_wait_fds, a poll, direct_progress,
 * direct_take_handed), with fetcher-transfer.c and web-reply.c as they
 * are.  Stand-ins: its monotonic clock (moved by the harness, so that
 * deadlines pass without waiting), libcurl's word on where the open
 * connected (then the address is replaced by a listening AF_UNIX socket
 * of the harness: each connection the code opens is one end of a stream
 * pair whose other end is the harness's server), the data pipe (a real
 * pipe, drained by the harness as the front-end would: only as far as
 * announced), the replies to the front-end, and libcurl's reads (a read
 * handed over is recorded, not fetched).
 *
 * Input: a configuration byte (bits 0-1: 1 to 3 connections; bits 2-3:
 * the pipe's capacity, 4, 16 or 64 KiB, reads of up to a quarter go
 * direct; bit 4: an ETag pinned at open; bit 5: a Last-Modified; bit 6:
 * --timeout 10; bit 7: --stall-timeout 2), a byte for the number of
 * reads (1 to 16), 5 bytes a read (flags: bit 0 it continues the read
 * before, bit 1 it is asked only once all reads before it ended, bit 2 a
 * short one; 2 bytes offset, 2 bytes length); a byte counting the
 * server's reply plans, 3 bytes each (kind, flags, parameter: see
 * serve_request; past the plans every reply is a correct one); 2 bytes
 * for the length of a pool of raw header bytes, and that pool; the rest
 * paces the run: each round a control byte (bits 0-1: segments each
 * connection sends now; bit 2: the front-end drains the pipe now, as it
 * does whenever nothing else moved; bit 3: when nothing moves, the
 * server closes a connection instead of the clock jumping past the
 * stall window; bits 4-5: the clock moves 1 s, a stall window), and a
 * byte per segment for its length (past the input: the rest of what the
 * server has to send).
 *
 * The server answers each request it receives on a connection with the
 * next plan: a correct 206 (with variants a client must take: interim
 * replies, HTTP/1.0, Connection: close, header case and spaces, a weak
 * ETag, an unknown total), or a damaged one (another status, another
 * Content-Range, another ETag or Last-Modified, a content coding, a
 * wrong or doubled Content-Length, too many interim replies, a broken
 * status or header line), or one the direct path may leave to libcurl
 * (bare LF line ends, mixed ones, folding, chunked, no Content-Length, a
 * header section over the limit), a truncated body, extra bytes after
 * it, a close instead of a reply, or raw header bytes.  A damaged reply's
 * body is the other version's bytes (every byte differs from the
 * object's): a client must refuse it.
 *
 * Checked, against this model and not the direct path's code:
 *   - every read ends exactly once: all its bytes announced in the pipe,
 *     EIO, or handed to libcurl (then with its offset, length and parts
 *     being exactly what is left of it);
 *   - a read announced as in the pipe is followed there by exactly the
 *     object's bytes of its range, after the bytes of earlier
 *     announcements and discards (which must all be in the pipe when
 *     announced);
 *   - the pipe never holds a byte nobody will account for: its bytes are
 *     those announced and not yet drained plus the current part of the
 *     read writing to it, and at the end it is empty;
 *   - every request the server receives is a well-formed GET of the
 *     object with the pinned precondition and the range of a read the
 *     direct path started;
 *   - the reads all end, in a bounded number of rounds; no fatal(), no
 *     sanitizer report.
 */
#include <curl/curl.h>
#include <time.h>

#include "data-path.h"
#include "fetcher-wire.h"
#include "fuzz.h"
#include "ipc-messages.h"
#include "limits-reply.h"

#ifdef FUZZ_DIRECT_TLS
/* https (fuzz-direct-reply-tls.c): libcurl's connect-only connections are
 * played by plain sockets to the harness's server.  TLS itself is
 * libcurl's and OpenSSL's, not fuzzed here; what is, is the direct path
 * over curl_easy_send and curl_easy_recv, and its bodies going into the
 * reads' places in the data area (tls_receive_body). */
struct fake_easy {
  int fd;
};
struct fake_multi {
  struct fake_easy *easy;       /* the one handle, or NULL */
  bool reported;                /* its CURLMSG_DONE was read */
  CURLMsg msg;
};
static CURL *fuzz_duphandle (CURL *easy);
static void fuzz_easy_cleanup (CURL *easy);
static CURLM *fuzz_multi_init (void);
static CURLMcode fuzz_multi_cleanup (CURLM *multi);
static CURLMcode fuzz_multi_add (CURLM *multi, CURL *easy);
static CURLMcode fuzz_multi_remove (CURLM *multi, CURL *easy);
static CURLMcode fuzz_multi_perform (CURLM *multi, int *running);
static CURLMsg *fuzz_multi_info_read (CURLM *multi, int *left);
static CURLMcode fuzz_multi_fdset (CURLM *multi, fd_set *r, fd_set *w, fd_set *e, int *max);
static CURLMcode fuzz_multi_timeout (CURLM *multi, long *ms);
static CURLcode fuzz_easy_send (CURL *easy, const void *buf, size_t len, size_t *n);
static CURLcode fuzz_easy_recv (CURL *easy, void *buf, size_t len, size_t *n);
#define curl_easy_duphandle fuzz_duphandle
#define curl_easy_cleanup fuzz_easy_cleanup
#define curl_multi_init fuzz_multi_init
#define curl_multi_cleanup fuzz_multi_cleanup
#define curl_multi_add_handle fuzz_multi_add
#define curl_multi_remove_handle fuzz_multi_remove
#define curl_multi_perform fuzz_multi_perform
#define curl_multi_info_read fuzz_multi_info_read
#define curl_multi_fdset fuzz_multi_fdset
#define curl_multi_timeout fuzz_multi_timeout
#define curl_easy_send fuzz_easy_send
#define curl_easy_recv fuzz_easy_recv
#undef curl_easy_setopt
#define curl_easy_setopt(easy, option, ...) ((void) (easy), (void) (__VA_ARGS__), CURLE_OK)
#endif

/* The clock the direct path reads: moved by the harness only. */
static uint64_t fake_ms;
static int
fuzz_clock_gettime (clockid_t clock, struct timespec *ts)
{
  (void) clock;
  ts->tv_sec = (time_t) (fake_ms / 1000);
  ts->tv_nsec = (long) (fake_ms % 1000) * 1000000;
  return 0;
}

/* Where libcurl's open connected: a loopback address, replaced after
 * direct_prepare by the harness's listening socket. */
static CURLcode
fuzz_getinfo (CURL *easy, CURLINFO info, void *arg)
{
  (void) easy;
#ifdef FUZZ_DIRECT_TLS
  if (info == CURLINFO_ACTIVESOCKET) {
    *(curl_socket_t *) arg = ((struct fake_easy *) easy)->fd;
    return CURLE_OK;
  }
  if (info == CURLINFO_HTTP_VERSION) {
    *(long *) arg = CURL_HTTP_VERSION_1_1;
    return CURLE_OK;
  }
#endif
  if (info == CURLINFO_PRIMARY_IP)
    *(char **) arg = (char *) "127.0.0.1";
  else if (info == CURLINFO_PRIMARY_PORT)
    *(long *) arg = 8080;
  else
    return CURLE_BAD_FUNCTION_ARGUMENT;
  return CURLE_OK;
}


#define clock_gettime fuzz_clock_gettime
#undef curl_easy_getinfo
#define curl_easy_getinfo(easy, info, arg) fuzz_getinfo ((easy), (info), (arg))
#include "fetcher-direct.c"
#include "direct-body.c"
#include "direct-conn.c"
#include "direct-fail.c"
#include "direct-prepare.c"
#include "direct-sizing.c"
#include "direct-tls.c"
#include "direct-wait.c"
#undef clock_gettime
#undef curl_easy_getinfo

#include <signal.h>
#include <sys/un.h>

#define IMAGE_SIZE (UINT64_C (1) << 20)
#define MAX_READS 16
#define POOL 3
#define MAX_CONNS 16
#define ROUNDS_MAX 200000
#define URL_PATH "/disk.img"
#define ETAG "\"v1\""
#define DATE "Tue, 01 Dec 2026 08:00:00 GMT"

/* The object's byte at i, or the other version's (every byte differs). */
static uint8_t
image_byte (uint64_t i, bool other)
{
  uint64_t x = (i + 1) * UINT64_C (0x9E3779B97F4A7C15);
  x ^= x >> 29;
  x *= UINT64_C (0xBF58476D1CE4E5B9);
  return (uint8_t) ((x >> 56) ^ (other ? 0x5a : 0));
}

/* ---- The reads, as the front-end knows them ---- */

enum read_state { R_WAITING, R_ISSUED, R_PIPED, R_EIO, R_HANDED };
static struct read_rec {
  uint64_t offset;
  uint32_t length;
  bool barrier;
  /* Served on a connection that carried raw header bytes, which can say
   * anything (even frame the next reply's body): its bytes are not
   * compared. */
  bool lenient;
  enum read_state state;
} reads[MAX_READS];
static unsigned nreads, nissued;
#define FIRST_ID 1000

static struct read_rec *
read_of (uint64_t id)
{
  FUZZ_CHECK (id >= FIRST_ID && id < FIRST_ID + nreads, "unknown read id %llu",
              (unsigned long long) id);
  return &reads[id - FIRST_ID];
}

static void
read_ends (uint64_t id, enum read_state how)
{
  struct read_rec *r = read_of (id);
  FUZZ_CHECK (r->state == R_ISSUED, "read %llu ended again (state %d, now %d)",
              (unsigned long long) id, r->state, how);
  r->state = how;
}

/* ---- The data pipe, as the front-end drains it ---- */

static int pipe_r = -1;
/* Announced and not drained yet: a read's bytes (id) or a discard (0). */
static struct announcement {
  uint64_t id;
  uint32_t length;
} announced[1024];
static unsigned nannounced;
static size_t announced_bytes;

static size_t
pipe_bytes (void)
{
  int queued = 0;
  if (ioctl (pipe_r, FIONREAD, &queued) == -1 || queued < 0)
    abort ();
  return (size_t) queued;
}

static void
announce (uint64_t id, uint32_t length)
{
  FUZZ_CHECK (nannounced < sizeof announced / sizeof announced[0], "announcements");
  announced[nannounced++] = (struct announcement) { id, length };
  announced_bytes += length;
  FUZZ_CHECK (pipe_bytes () >= announced_bytes, "announced %zu bytes, the pipe has %zu",
              announced_bytes, pipe_bytes ());
}

static void
drain (void)
{
  static uint8_t buf[DATA_PIPE_READ_MAX];
  unsigned i;

  for (i = 0; i < nannounced; i++) {
    const struct announcement *a = &announced[i];
    size_t got = 0, j;
    while (got < a->length) {
      ssize_t r = read (pipe_r, buf + got, a->length - got);
      FUZZ_CHECK (r > 0, "the pipe ended %zu bytes into an announcement of %u",
                  got, a->length);
      got += (size_t) r;
    }
    if (a->id != 0 && !read_of (a->id)->lenient) {
      const struct read_rec *rec = read_of (a->id);
      for (j = 0; j < a->length; j++)
        FUZZ_CHECK (buf[j] == image_byte (rec->offset + j, false),
                    "read %llu (%u bytes at %llu) succeeded, but its byte %zu in the "
                    "pipe is not the object's", (unsigned long long) a->id,
                    rec->length, (unsigned long long) rec->offset, j);
    }
  }
  nannounced = 0;
  announced_bytes = 0;
}

/* ---- Stand-ins for fetcher.c ---- */

int fetcher_pipe_fd = -1;
uint32_t fetcher_pipe_read_max;
/* The counters the fetcher reports to the front-end: the direct path adds
 * to them, nothing here reads them. */
struct fetcher_stats_wire fetcher_stats;

#ifdef FUZZ_DIRECT_TLS
static const bool over_tls = true;
#else
static const bool over_tls = false;
#endif
/* Each read's place in the data area (where https reads, and plain-http
 * reads larger than the pipe takes, put their bytes). */
static uint8_t *area[MAX_READS];

void
fetcher_reply (uint64_t id, uint32_t error)
{
  const struct read_rec *r = read_of (id);
  uint32_t j;

  FUZZ_CHECK (error == EIO || (error == 0 && (over_tls || r->length > fetcher_pipe_read_max)),
              "read %llu answered with error %u", (unsigned long long) id, error);
  if (error == 0 && !r->lenient)
    for (j = 0; j < r->length; j++)
      FUZZ_CHECK (area[id - FIRST_ID][j] == image_byte (r->offset + j, false),
                  "read %llu (%u bytes at %llu) succeeded, but its byte %u in the "
                  "data area is not the object's", (unsigned long long) id,
                  r->length, (unsigned long long) r->offset, j);
  read_ends (id, error == 0 ? R_PIPED : R_EIO);
}

void
fetcher_reply_piped (uint64_t id)
{
  FUZZ_CHECK (!over_tls, "a read over TLS announced in the pipe");
  FUZZ_CHECK (read_of (id)->length <= fetcher_pipe_read_max,
              "a read larger than the pipe takes announced in it");
  read_ends (id, R_PIPED);
  announce (id, read_of (id)->length);
}

void
fetcher_pipe_discard (uint32_t length)
{
  FUZZ_CHECK (length > 0, "an empty discard");
  FUZZ_CHECK (!over_tls, "a discard in the pipe over TLS");
  announce (0, length);
}

void
fetcher_flush_replies (void)
{
}

/* Stand-in for fetcher-readahead.c: no read here is a readahead window
 * (every transfer has t->prefetch NULL), so nothing may end one. */
void
readahead_finished (struct ra_segment *s, const char *why)
{
  (void) s;
  (void) why;
  FUZZ_CHECK (false, "a readahead window ended in a harness that starts none");
}

/* Stand-in for fetcher-script.c: no header-script here, so a 401 or 403
 * is never parked for a renewal. */
bool
script_park_refused (struct transfer *t)
{
  (void) t;
  return false;
}

/* ---- Stand-in for fetcher-http.c and fetcher-http-errors.c: starting
 * reads, libcurl's side ---- */

/* The https path's connections (never made here: the URL is http). */
enum retry_cause
fetcher_curl_cause (CURL *easy, CURLcode rc)
{
  (void) easy;
  (void) rc;
  FUZZ_CHECK (over_tls, "an https connection in an http harness");
  return RETRY_CAUSE_TRANSIENT;
}

/* The words of a failed https connection: as libcurl gave them. */
const char *
certificate_problem (struct transfer *t, CURLcode rc, const char *what)
{
  (void) t;
  (void) rc;
  FUZZ_CHECK (over_tls, "an https connection in an http harness");
  return what;
}

static struct transfer pool[POOL];

/* libcurl takes what is left of t (start_curl_read): recorded, and
 * checked to be exactly the parts not answered. */
static void
to_libcurl (struct transfer *t)
{
  uint64_t at = t->offset;
  unsigned i;

  FUZZ_CHECK (t->next_part == 0 && t->nparts >= 1, "handed over from part %u of %u",
              t->next_part, t->nparts);
  for (i = 0; i < t->nparts; i++) {
    const struct read_rec *r = read_of (t->parts[i].id);
    FUZZ_CHECK (r->offset == at && r->length == t->parts[i].length,
                "handed part %u: %u bytes at %llu, the read was %u at %llu", i,
                t->parts[i].length, (unsigned long long) at, r->length,
                (unsigned long long) r->offset);
    at += r->length;
    read_ends (t->parts[i].id, R_HANDED);
  }
  FUZZ_CHECK (at == t->offset + t->length, "a handed read's length is not its parts'");
  release (t);
}

static void
take_handed (void)
{
  struct transfer *t;
  while ((t = direct_take_handed ()) != NULL)
    to_libcurl (t);
}

/* start_read: the queue's head, with the queued reads that continue it. */
static void
start_one (void)
{
  struct fetcher_request req = queue_pop ();
  struct transfer *t = http.free_list;
  bool go_direct = direct_takes (&req);

  http.free_list = t->next_free;
  http.active++;
  t->mode = MODE_READ;
  t->offset = req.offset;
  t->length = 0;
  t->nparts = t->next_part = 0;
  t->part_received = t->received = 0;
  t->conn_close = false;
  t->window_bytes = 0;
  t->next_owner = NULL;
  /* As start_read: --timeout counts from here.  No retries (cfg->retries
   * is 0): a read that fails ends. */
  t->limit_ms = http.f->cfg->timeout ? clock_ms () + (uint64_t) http.f->cfg->timeout * 1000
                                     : UINT64_MAX;
  t->retries = 0;
  t->retry_at_ms = 0;
  for (;;) {
    t->parts[t->nparts].id = req.id;
    t->parts[t->nparts].data = area[req.id - FIRST_ID];
    t->parts[t->nparts++].length = req.length;
    t->length += req.length;
    if (http.queue_len == 0 || t->nparts == COALESCE_MAX_PARTS ||
        http.queue[http.queue_head].offset != t->offset + t->length ||
        http.queue[http.queue_head].length > COALESCE_MAX_BYTES - t->length ||
        (go_direct && direct_to_area (&http.queue[http.queue_head]) != direct_to_area (&req)))
      break;
    req = queue_pop ();
  }
  reply_begin (t);
  if (go_direct)
    direct_start (t);
  else
    to_libcurl (t);
  take_handed ();
}

static bool
ended (const struct read_rec *r)
{
  return r->state != R_WAITING && r->state != R_ISSUED;
}

/* The front-end asks: reads in order, one with a barrier once all before
 * it ended; then the fetcher's loop starts what it may. */
static void
issue_and_start (void)
{
  while (nissued < nreads && http.queue_len < QUEUE_SIZE) {
    struct read_rec *r = &reads[nissued];
    unsigned i;
    if (r->barrier)
      for (i = 0; i < nissued; i++)
        if (!ended (&reads[i]))
          goto start;
    r->state = R_ISSUED;
    queue_push (&(struct fetcher_request) {
        .type = IPC_READ, .id = FIRST_ID + nissued, .offset = r->offset,
        .length = r->length });
    nissued++;
  }
start:
  while (http.free_list != NULL && http.queue_len > 0 &&
         (!direct_takes (&http.queue[http.queue_head]) || direct_may_start ()))
    start_one ();
}

/* One pass of the loop: a wait that does not wait, and progress. */
static void
progress (void)
{
  struct curl_waitfd w[POOL + 1];
  struct pollfd p[POOL + 1];
  long timeout;
  unsigned n = direct_wait_fds (w, POOL + 1, &timeout), i;

  for (i = 0; i < n; i++)
    p[i] = (struct pollfd) {
      .fd = w[i].fd,
      .events = (short) (((w[i].events & CURL_WAIT_POLLIN) ? POLLIN : 0) |
                         ((w[i].events & CURL_WAIT_POLLOUT) ? POLLOUT : 0)),
    };
  if (n > 0 && poll (p, n, 0) == -1)
    abort ();
  for (i = 0; i < n; i++)
    w[i].revents = (short) (((p[i].revents & (POLLIN | POLLHUP | POLLERR)) ? CURL_WAIT_POLLIN : 0) |
                            ((p[i].revents & POLLOUT) ? CURL_WAIT_POLLOUT : 0));
  direct_progress (w, n);
  take_handed ();
}

/* The pipe holds the bytes announced and not drained, and those of the
 * part being written; nothing else. */
static void
check_pipe (void)
{
  size_t expect = announced_bytes;
  unsigned i;

  for (i = 0; i < POOL && !over_tls; i++)     /* over TLS: always empty */
    if (pool[i].direct && pool[i].dstate == DIRECT_BODY && !pool[i].to_area)
      expect += pool[i].part_received;
  FUZZ_CHECK (pipe_bytes () == expect, "the pipe holds %zu bytes, %zu accounted for",
              pipe_bytes (), expect);
}

/* ---- The web server ---- */

static struct fuzz_input plans, raw, pace;
static struct sockaddr_un listen_addr;
static socklen_t listen_len;
static int listen_fd = -1;
static bool etag_pinned, date_pinned;

#ifdef FUZZ_DIRECT_TLS
/* ---- libcurl's connect-only connections, as plain sockets ---- */

static CURL *
fuzz_duphandle (CURL *easy)
{
  struct fake_easy *e = malloc (sizeof *e);

  (void) easy;
  if (e == NULL)
    abort ();
  e->fd = -1;
  return (CURL *) e;
}

static void
fuzz_easy_cleanup (CURL *easy)
{
  struct fake_easy *e = (struct fake_easy *) easy;

  if (e != NULL && e->fd >= 0)
    close (e->fd);
  free (e);
}

static CURLM *
fuzz_multi_init (void)
{
  struct fake_multi *m = calloc (1, sizeof *m);

  if (m == NULL)
    abort ();
  return (CURLM *) m;
}

static CURLMcode
fuzz_multi_cleanup (CURLM *multi)
{
  struct fake_multi *m = (struct fake_multi *) multi;

  FUZZ_CHECK (m == NULL || m->easy == NULL, "a multi handle freed with its handle in it");
  free (m);
  return CURLM_OK;
}

/* The connection: to the harness's server (a Unix socket whose backlog
 * takes it at once, or refuses it). */
static CURLMcode
fuzz_multi_add (CURLM *multi, CURL *easy)
{
  struct fake_multi *m = (struct fake_multi *) multi;
  struct fake_easy *e = (struct fake_easy *) easy;

  FUZZ_CHECK (m->easy == NULL, "a second handle in a connection's multi handle");
  m->easy = e;
  m->reported = false;
  e->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (e->fd == -1)
    abort ();
  m->msg = (CURLMsg) { .msg = CURLMSG_DONE, .easy_handle = easy };
  m->msg.data.result = connect (e->fd, (struct sockaddr *) &listen_addr, listen_len) == 0
    ? CURLE_OK : CURLE_COULDNT_CONNECT;
  return CURLM_OK;
}

/* Taken out of its multi handle, a connect-only connection is closed. */
static CURLMcode
fuzz_multi_remove (CURLM *multi, CURL *easy)
{
  struct fake_multi *m = (struct fake_multi *) multi;
  struct fake_easy *e = (struct fake_easy *) easy;

  FUZZ_CHECK (m->easy == e, "a handle removed from a multi handle it is not in");
  m->easy = NULL;
  if (e->fd >= 0)
    close (e->fd);
  e->fd = -1;
  return CURLM_OK;
}

static CURLMcode
fuzz_multi_perform (CURLM *multi, int *running)
{
  (void) multi;
  *running = 0;
  return CURLM_OK;
}

static CURLMsg *
fuzz_multi_info_read (CURLM *multi, int *left)
{
  struct fake_multi *m = (struct fake_multi *) multi;

  *left = 0;
  if (m->easy == NULL || m->reported)
    return NULL;
  m->reported = true;
  return &m->msg;
}

static CURLMcode
fuzz_multi_fdset (CURLM *multi, fd_set *r, fd_set *w, fd_set *e, int *max)
{
  (void) multi;
  (void) r;
  (void) w;
  (void) e;
  *max = -1;
  return CURLM_OK;
}

static CURLMcode
fuzz_multi_timeout (CURLM *multi, long *ms)
{
  (void) multi;
  *ms = 0;
  return CURLM_OK;
}

/* As libcurl 7.88 says it: "would block" is CURLE_AGAIN from recv, and
 * CURLE_OK with nothing sent from send; the end of the connection is
 * CURLE_OK with nothing received. */
static CURLcode
fuzz_easy_send (CURL *easy, const void *buf, size_t len, size_t *n)
{
  ssize_t r = send (((struct fake_easy *) easy)->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);

  *n = 0;
  if (r >= 0) {
    *n = (size_t) r;
    return CURLE_OK;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK ? CURLE_OK : CURLE_SEND_ERROR;
}

static CURLcode
fuzz_easy_recv (CURL *easy, void *buf, size_t len, size_t *n)
{
  ssize_t r = recv (((struct fake_easy *) easy)->fd, buf, len, MSG_DONTWAIT);

  *n = 0;
  if (r >= 0) {
    *n = (size_t) r;
    return CURLE_OK;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK ? CURLE_AGAIN : CURLE_RECV_ERROR;
}
#endif

static struct conn {
  int fd;                       /* -1: a free slot */
  char in[4096];
  size_t in_len;
  uint8_t *out;
  size_t out_len, out_pos, out_cap;
  size_t close_at;              /* close once this much is sent; SIZE_MAX: no */
  bool tainted;                 /* it sent raw header bytes */
} conns[MAX_CONNS];

static void
conn_close (struct conn *c)
{
  close (c->fd);
  c->fd = -1;
  free (c->out);
  c->out = NULL;
}

static void
out_bytes (struct conn *c, const void *p, size_t n)
{
  if (n == 0)
    return;
  if (c->out_len + n > c->out_cap) {
    c->out_cap = (c->out_len + n) * 2;
    c->out = realloc (c->out, c->out_cap);
    if (c->out == NULL)
      abort ();
  }
  memcpy (c->out + c->out_len, p, n);
  c->out_len += n;
}

static void
out_body (struct conn *c, uint64_t first, uint64_t n, bool other)
{
  uint64_t i;
  for (i = 0; i < n; i++) {
    uint8_t b = image_byte (first + i, other);
    out_bytes (c, &b, 1);
  }
}

/* A header section being built: lines end in CRLF (changed after). */
static char head[40000];
static size_t head_len;

PRINTF_LIKE (1, 2) static void
line (const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (head + head_len, sizeof head - head_len - 2, fmt, ap);
  va_end (ap);
  if (n < 0 || (size_t) n >= sizeof head - head_len - 2)
    abort ();
  head_len += (size_t) n;
  memcpy (head + head_len, "\r\n", 2);
  head_len += 2;
}

/* The CR of the k-th line end goes (k counts from 0; SIZE_MAX: all). */
static void
bare_lf (size_t k)
{
  size_t i, o = 0, seen = 0;
  for (i = 0; i < head_len; i++) {
    if (head[i] == '\r' && i + 1 < head_len && head[i + 1] == '\n' &&
        (k == SIZE_MAX || seen++ == k))
      continue;
    head[o++] = head[i];
  }
  head_len = o;
}

static void
interim (unsigned n, uint8_t p)
{
  static const char *const statuses[] = { "100 Continue", "102 Processing",
                                          "103 Early Hints", "199 Odd" };
  unsigned i;
  for (i = 0; i < n; i++) {
    line ("HTTP/1.1 %s", statuses[(p + i) % 4]);
    if (p & 0x10)
      line ("Content-Length: 7");
    if (p & 0x20)
      line ("ETag: \"v9\"");
    if (p & 0x40)
      line ("Content-Range: bytes 0-0/1");
    line ("%s", "");
  }
}

/* Everything of a 206 for [first, last] but the end of the section. */
static void
partial_headers (uint64_t first, uint64_t last, const char *version)
{
  line ("%s 206 Partial Content", version);
  line ("Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, first, last, IMAGE_SIZE);
  line ("ETag: " ETAG);
  line ("Last-Modified: " DATE);
}

enum reply_kind {
  K_GOOD, K_GOOD2, K_STATUS, K_RANGE, K_VALIDATOR, K_ENCODING, K_LINE_ENDS,
  K_INTERIM, K_TRUNCATED, K_LENGTH, K_SYNTAX, K_RAW, K_CLOSE, K_KINDS
};

/* The reply to a request for [first, last] on c: the next plan. */
static void
serve_request (struct conn *c, uint64_t first, uint64_t last)
{
  enum reply_kind kind = (enum reply_kind) (fuzz_u8 (&plans) % K_KINDS);
  uint8_t flags = fuzz_u8 (&plans), p = fuzz_u8 (&plans);
  uint64_t n = last - first + 1, body_first = first, body_n = n;
  bool other = false;           /* damaged: the body is not the object's */
  bool close_after = false;
  size_t junk = 0;
  const uint8_t *rawp;
  size_t rawn;

  head_len = 0;
  switch (kind) {
  case K_GOOD:
  case K_GOOD2:
    interim (flags & 3, p);
    line ("HTTP/1.%d 206%s", (flags & 4) ? 0 : 1, (p & 1) ? "" : " Partial Content");
    if (flags & 0x20) {
      line ("content-range:   bytes %" PRIu64 "-%" PRIu64 "/%s\t", first, last,
            (p & 2) ? "*" : "1048576");
      line ("etag:%s", (p & 4) ? "W/" ETAG : ETAG);
      line ("CONTENT-LENGTH: %" PRIu64 " ", n);
    }
    else {
      line ("Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, first, last,
            IMAGE_SIZE);
      if (!(p & 8))
        line ("ETag: " ETAG);
      line ("Content-Length: %" PRIu64, n);
    }
    if (!(p & 0x10))
      line ("Last-Modified: " DATE);
    if (flags & 8)
      line ("Connection: %s", (p & 0x20) ? "keep-alive, close" : "close");
    if (flags & 0x10) {
      line ("Date: " DATE);
      line ("Server: fuzz/1");
      line ("Accept-Ranges: bytes");
      line ("Content-Type: application/octet-stream");
      line ("Content-Encoding: identity");
      line ("Content-Length: %" PRIu64, n);     /* the same again */
      line ("Connection: keep-alive");
    }
    line ("%s", "");
    close_after = flags & 0x80;
    if (flags & 0x40)
      junk = 1 + p % 32;
    break;
  case K_STATUS: {
    static const char *const statuses[] = {
      "200 OK", "203 Non-Authoritative", "204 No Content", "301 Moved",
      "304 Not Modified", "404 Not Found", "412 Precondition Failed",
      "416 Range Not Satisfiable", "500 Oops", "101 Switching Protocols",
      "226 IM Used", "207 Multi-Status", "999 Beyond", "100 Continue",
    };
    line ("HTTP/1.1 %s", statuses[p % (sizeof statuses / sizeof statuses[0])]);
    line ("Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, first, last, IMAGE_SIZE);
    line ("Content-Length: %" PRIu64, n);
    line ("%s", "");
    other = true;
    close_after = flags & 0x80;
    break;
  }
  case K_RANGE: {
    uint64_t f = first, l = last, total = IMAGE_SIZE;
    line ("HTTP/1.1 206 Partial Content");
    switch (p % 9) {
    case 0: f++; l++; break;
    case 1: l++; break;
    case 2: if (l > f) l--; else l++; break;
    case 3: total++; break;
    case 4: total = 2 * IMAGE_SIZE; break;
    case 5: if (f > 0) { f--; l--; } else { f++; l++; } break;
    default: break;
    }
    if (l >= total)
      total = l + 1;
    switch (p % 9) {
    case 6: line ("Content-Range: bytes */%" PRIu64, total); break;
    case 7: line ("Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, f, l, total);
      line ("Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, f, l, total); break;
    case 8: if (flags & 1) line ("Content-Range: bytes=%" PRIu64 "-%" PRIu64, f, l); break;
    default: line ("Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, f, l, total);
    }
    line ("Content-Length: %" PRIu64, l - f + 1);
    line ("%s", "");
    body_first = f;
    body_n = l - f + 1;
    other = true;
    break;
  }
  case K_VALIDATOR:
    line ("HTTP/1.1 206 Partial Content");
    line ("Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, first, last, IMAGE_SIZE);
    if (p & 1) {
      line ("ETag: \"v2\"");
      other = etag_pinned;
    }
    else {
      line ("Last-Modified: Wed, 02 Dec 2026 08:00:00 GMT");
      other = date_pinned;
    }
    line ("Content-Length: %" PRIu64, n);
    line ("%s", "");
    break;
  case K_ENCODING: {
    static const char *const codings[] = { "gzip", "br", "gzip, identity", "x-gzip",
                                           "identity", "IDENTITY", "identity  " };
    unsigned which = p % 7;
    partial_headers (first, last, "HTTP/1.1");
    line ("Content-Encoding: %s", codings[which]);
    line ("Content-Length: %" PRIu64, n);
    line ("%s", "");
    other = which < 4;
    break;
  }
  case K_LINE_ENDS:
    /* Left to libcurl, or taken: the body is the object's either way. */
    interim (flags & 1, p);
    partial_headers (first, last, "HTTP/1.1");
    line ("Content-Length: %" PRIu64, n);
    if (p & 0x80)
      line ("X-Odd: a\rb");
    line ("%s", "");
    if (flags & 2)
      bare_lf (SIZE_MAX);
    else
      bare_lf (p % 8);
    break;
  case K_INTERIM:
    if (flags & 1) {
      /* Only interim replies, then the server closes. */
      interim (1 + p % 3, p);
      close_after = true;
      body_n = 0;
      break;
    }
    interim (1 + p % 8, p);     /* more than 4: refused */
    other = 1 + p % 8 > MAX_INTERIM_RESPONSES;
    partial_headers (first, last, "HTTP/1.1");
    line ("Content-Length: %" PRIu64, n);
    line ("%s", "");
    break;
  case K_TRUNCATED:
    partial_headers (first, last, "HTTP/1.1");
    line ("Content-Length: %" PRIu64, n);
    line ("%s", "");
    if (flags & 1)
      head_len = (size_t) ((uint64_t) head_len * p / 256);   /* within the headers */
    body_n = (flags & 1) ? 0 : n * p / 256;
    close_after = true;
    break;
  case K_LENGTH:
    partial_headers (first, last, "HTTP/1.1");
    other = true;
    switch (p % 8) {
    case 0: line ("Content-Length: %" PRIu64, n + 1); body_n = n + 1; break;
    case 1: line ("Content-Length: %" PRIu64, n - 1); body_n = n - 1; break;
    case 2: line ("Content-Length: %" PRIu64, n);
      line ("Content-Length: %" PRIu64, n + 1); break;
    case 3: /* None: framed by the close, left to libcurl. */
      other = false;
      close_after = true;
      break;
    case 4: line ("Transfer-Encoding: chunked"); break;
    case 5: line ("Content-Length: 0%" PRIu64, n); other = false; break;
    case 6: line ("Content-Length: 99999999999999999999"); break;
    default: line ("Content-Length: +%" PRIu64, n); break;
    }
    line ("%s", "");
    if (p % 8 == 4) {
      char size[32];
      int k = snprintf (size, sizeof size, "%" PRIx64 "\r\n", n);
      memcpy (head + head_len, size, (size_t) k);
      head_len += (size_t) k;
      other = false;            /* the chunk's size line makes it differ */
    }
    break;
  case K_SYNTAX:
    other = true;
    switch (p % 10) {
    case 0: line ("HTTP/1.1 20 Partial Content"); break;
    case 1: line ("HTTP/2 206"); break;
    case 2: line ("HTTP/1.1 206"); other = false; break;
    case 3: line ("HTTP/2.0 206 Partial Content"); break;
    case 4: line ("ICY 206 OK"); break;
    default: line ("HTTP/1.1 206 Partial Content"); break;
    }
    line ("Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, first, last, IMAGE_SIZE);
    switch (p % 10) {
    case 5: line ("Content-Length : %" PRIu64, n); break;
    case 6: line ("Content-Length: %" PRIu64, n); line ("no colon here"); break;
    case 7: line ("Content-Length: %" PRIu64, n); line ("X-Folded: a");
      line (" b"); break;
    case 8: {
      /* A long header section: past MAX_RESPONSE_HEADER_BYTES (libcurl's)
       * or not. */
      size_t i, lines = 1 + (size_t) flags;
      for (i = 0; i < lines; i++)
        line ("X-Filler-%zu: %080zu", i, i);
      line ("Content-Length: %" PRIu64, n);
      other = false;
      break;
    }
    case 9: /* A header the checker reads, over MAX_HEADER_LINE. */
      line ("Content-Length: %" PRIu64, n);
      line ("ETag: \"%0*u\"", (int) MAX_HEADER_LINE, 1u);
      break;
    default: line ("Content-Length: %" PRIu64, n); break;
    }
    line ("%s", "");
    if (p % 10 == 3 && (flags & 1))
      head[5] = '\0';           /* a NUL in the status line */
    break;
  case K_RAW:
    /* The input's header bytes, then the object's: whatever the header
     * says, no other bytes may be taken for the range. */
    rawn = fuzz_span (&raw, (size_t) p * 4 + (flags & 3), &rawp);
    c->tainted = true;
    memcpy (head, rawp, rawn);
    head_len = rawn;
    close_after = flags & 0x80;
    break;
  case K_CLOSE:
    /* A close instead of a reply (a kept connection the server dropped
     * as the request came), or after part of a status line. */
    if (flags & 1)
      line ("HTTP/1.1 2");
    head_len = head_len > 2 ? head_len - 2 : 0;
    body_n = 0;
    close_after = true;
    break;
  case K_KINDS:
    abort ();
  }
  out_bytes (c, head, head_len);
  out_body (c, body_first, body_n, other);
  for (; junk > 0; junk--) {
    const char *bytes = (p & 0x40) ? "\r\n" : "xy";
    out_bytes (c, bytes + junk % 2, 1);
  }
  if (close_after)
    c->close_at = c->out_len;
}

/* A request the direct path sent: the GET of a read in flight. */
static void
check_request (struct conn *c, const char *req, size_t len)
{
  char expect[256];
  uint64_t first, last;
  const char *range;
  unsigned i;
  bool known = false;

  snprintf (expect, sizeof expect, "GET " URL_PATH " HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n");
  FUZZ_CHECK (len > strlen (expect) && memcmp (req, expect, strlen (expect)) == 0,
              "request: %.*s", (int) len, req);
  FUZZ_CHECK ((http.precondition == NULL) == (strstr (req, "\r\nIf-") == NULL) &&
              (http.precondition == NULL || strstr (req, http.precondition) != NULL),
              "request without its precondition: %.*s", (int) len, req);
  range = strstr (req, "\r\nRange: bytes=");
  FUZZ_CHECK (range != NULL &&
              sscanf (range, "\r\nRange: bytes=%" SCNu64 "-%" SCNu64, &first, &last) == 2 &&
              first <= last && last < IMAGE_SIZE, "request range: %.*s", (int) len, req);
  /* The read that sent it may have ended since (bytes already there
   * failed it), but its slot has not started another. */
  for (i = 0; i < POOL; i++)
    if (pool[i].offset == first && pool[i].offset + pool[i].length - 1 == last)
      known = true;
  FUZZ_CHECK (known, "a request for %llu-%llu that no read made",
              (unsigned long long) first, (unsigned long long) last);
  if (c->close_at == SIZE_MAX)  /* else the server is closing it */
    serve_request (c, first, last);
  if (c->tainted)
    for (i = 0; i < nreads; i++)
      if (reads[i].offset >= first && reads[i].offset + reads[i].length - 1 <= last)
        reads[i].lenient = true;
}

/* Take new connections and the requests that came; returns whether
 * anything did. */
static bool
server_receive (void)
{
  bool moved = false;
  unsigned i;
  int fd;

  while ((fd = accept4 (listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
    for (i = 0; i < MAX_CONNS && conns[i].fd >= 0; i++)
      ;
    FUZZ_CHECK (i < MAX_CONNS, "more than %d connections open at once", MAX_CONNS);
    conns[i] = (struct conn) { .fd = fd, .close_at = SIZE_MAX };
    moved = true;
  }
  for (i = 0; i < MAX_CONNS; i++) {
    struct conn *c = &conns[i];
    char *end;
    ssize_t r;

    if (c->fd < 0)
      continue;
    r = recv (c->fd, c->in + c->in_len, sizeof c->in - 1 - c->in_len, MSG_DONTWAIT);
    if (r == 0 || (r == -1 && errno != EAGAIN)) {
      conn_close (c);           /* the client closed it */
      moved = true;
      continue;
    }
    if (r < 0)
      continue;
    moved = true;
    c->in_len += (size_t) r;
    c->in[c->in_len] = '\0';
    while ((end = strstr (c->in, "\r\n\r\n")) != NULL) {
      size_t len = (size_t) (end - c->in) + 4;
      char saved = c->in[len];
      c->in[len] = '\0';
      check_request (c, c->in, len);
      c->in[len] = saved;
      memmove (c->in, c->in + len, c->in_len - len + 1);
      c->in_len -= len;
    }
    FUZZ_CHECK (c->in_len < sizeof c->in - 1, "a request of %zu bytes or more", c->in_len);
  }
  return moved;
}

/* Each connection sends up to `segments` segments, or closes, a round
 * after the last byte before its close went (so that the close can meet
 * a request on a connection the client kept); returns whether anything
 * happened. */
static bool
server_send (unsigned segments)
{
  bool moved = false;
  unsigned i, s;

  for (i = 0; i < MAX_CONNS; i++) {
    struct conn *c = &conns[i];
    if (c->fd >= 0 && c->out_pos >= c->close_at) {
      conn_close (c);
      moved = true;
    }
    for (s = 0; s < segments && c->fd >= 0 && c->out_pos < c->out_len; s++) {
      size_t left = c->out_len - c->out_pos, seg = left;
      ssize_t r;
      if (fuzz_left (&pace) > 0) {
        uint8_t b = fuzz_u8 (&pace);
        seg = b < 0x80 ? (size_t) b + 1 : (size_t) (b - 0x7f) * 128;
      }
      r = send (c->fd, c->out + c->out_pos, MIN (seg, left), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (r == -1 && errno == EAGAIN)
        break;
      if (r <= 0) {
        conn_close (c);
        break;
      }
      c->out_pos += (size_t) r;
      moved = true;
    }
  }
  return moved;
}

/* ---- The run ---- */

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  signal (SIGPIPE, SIG_IGN);
  listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  listen_addr.sun_family = AF_UNIX;
  /* Autobind: an abstract name of the kernel's choosing. */
  if (listen_fd == -1 || bind (listen_fd, (struct sockaddr *) &listen_addr,
                               sizeof (sa_family_t)) == -1 ||
      listen (listen_fd, 64) == -1)
    abort ();
  listen_len = sizeof listen_addr;
  if (getsockname (listen_fd, (struct sockaddr *) &listen_addr, &listen_len) == -1)
    abort ();
  for (unsigned i = 0; i < MAX_CONNS; i++)
    conns[i].fd = -1;
  for (unsigned i = 0; i < POOL; i++)
    pool[i].sock = -1;
  return 0;
}

static void
setup (struct fuzz_input *in, struct fetcher *f, struct fetcher_config *cfg)
{
  static const int capacities[] = { 4096, 16384, 65536, 65536 };
  uint8_t conf = fuzz_u8 (in);
  int fds[2];
  unsigned i;
  uint64_t end = 0;

  cfg->connections = 1 + (conf & 3) % POOL;
  cfg->timeout = (conf & 0x40) ? 10 : 0;
  cfg->stall_timeout = (conf & 0x80) ? 2 : 0;
  for (i = 0; i < FETCHER_NSTRINGS; i++)
    *fetcher_string (cfg, i) = (char *) "";
  cfg->http_version = FETCHER_HTTP_NONE;
  /* Every reply's header section through the trace's masks too. */
  cfg->flags = FETCHER_CURL_VERBOSE;
  cfg->readahead = 0;               /* the direct path only */
  f->cfg = cfg;
  f->export_name = "fuzz";
  f->log_url = (char *) "http://127.0.0.1:8080" URL_PATH;
  f->size = IMAGE_SIZE;
  etag_pinned = conf & 0x10;
  date_pinned = conf & 0x20;

  if (pipe2 (fds, O_NONBLOCK | O_CLOEXEC) == -1 ||
      fcntl (fds[1], F_SETPIPE_SZ, capacities[(conf >> 2) & 3]) == -1)
    abort ();
  pipe_r = fds[0];
  fetcher_pipe_fd = fds[1];
  fetcher_pipe_read_max = (uint32_t) fcntl (fds[1], F_GETPIPE_SZ) / 4;

  nreads = 1 + fuzz_u8 (in) % MAX_READS;
  nissued = 0;
  for (i = 0; i < nreads; i++) {
    uint8_t flags = fuzz_u8 (in);
    uint64_t offset = fuzz_u16 (in), length = fuzz_u16 (in);
    length = 1 + length % ((flags & 4) ? 64 : 2 * fetcher_pipe_read_max);
    offset = (flags & 1) ? end : offset * 16;
    if (offset + length > IMAGE_SIZE)
      offset = IMAGE_SIZE - length;
    reads[i] = (struct read_rec) { offset, (uint32_t) length, flags & 2, false, R_WAITING };
    {
      free (area[i]);
      area[i] = malloc (length);
      if (area[i] == NULL)
        abort ();
      memset (area[i], 0xee, length);
    }
    end = offset + length;
  }
  plans.len = fuzz_span (in, (size_t) fuzz_u8 (in) * 3, &plans.data);
  plans.pos = 0;
  raw.len = fuzz_span (in, fuzz_u16 (in), &raw.data);
  raw.pos = 0;
  pace.len = fuzz_span (in, fuzz_left (in), &pace.data);
  pace.pos = 0;

  memset (&http, 0, sizeof http);
  http.f = f;
  http.pool = pool;
  http.range_url = over_tls ? (char *) "https://127.0.0.1:8080" URL_PATH
                            : (char *) "http://127.0.0.1:8080" URL_PATH;
  http.range_same_origin = true;
  http.range_is_http = true;
  http.etag = etag_pinned ? (char *) ETAG : NULL;
  http.last_modified = date_pinned ? (char *) DATE : NULL;
  http.precondition = etag_pinned ? (char *) "If-Match: " ETAG
    : date_pinned ? (char *) "If-Unmodified-Since: " DATE : NULL;
  for (i = cfg->connections; i-- > 0;) {
    pool[i].next_free = http.free_list;
    http.free_list = &pool[i];
  }
  free (direct.request_head);
  memset (&direct, 0, sizeof direct);
  direct_prepare (&pool[0]);
  FUZZ_CHECK (http.direct, "direct_prepare refused the export");
  memcpy (&direct.addr, &listen_addr, listen_len);
  direct.addr_len = listen_len;
  nannounced = 0;
  announced_bytes = 0;
  fake_ms = UINT64_C (1) << 32;
}

static void
teardown (void)
{
  int fd;
  unsigned i;

  for (i = 0; i < POOL; i++) {
    close_connection (&pool[i]);
    free (pool[i].head);
    free (pool[i].request);
    web_reply_reset (&pool[i].reply, &pool[i].reply.req);
    memset (&pool[i], 0, sizeof pool[i]);
    pool[i].sock = -1;
  }
  for (i = 0; i < MAX_CONNS; i++)
    if (conns[i].fd >= 0)
      conn_close (&conns[i]);
  while ((fd = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
    close (fd);
  close (pipe_r);
  close (fetcher_pipe_fd);
  fetcher_pipe_fd = -1;
}

/* A signature of where everything is: unchanged over a round, nothing
 * moves but by time or a close. */
static uint64_t
signature (void)
{
  uint64_t s = pipe_bytes () * 31 + nannounced;
  unsigned i;

  for (i = 0; i < POOL; i++) {
    const struct transfer *t = &pool[i];
    s = s * 1000003 + (uint64_t) t->dstate * 7 + t->direct + (uint64_t) (t->sock >= 0) * 2;
    s = s * 1000003 + t->head_len + t->received * 3 + t->request_sent * 5 + t->next_part;
  }
  for (i = 0; i < nreads; i++)
    s = s * 5 + reads[i].state;
  return s;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct fuzz_input in = { data, size, 0 };
  static struct fetcher f;
  static struct fetcher_config cfg;
  unsigned round, i, still = 0;

  setup (&in, &f, &cfg);
  for (round = 0;; round++) {
    uint8_t ctl = fuzz_u8 (&pace);
    uint64_t before = signature ();
    bool moved;

    FUZZ_CHECK (round < ROUNDS_MAX, "reads still running after %u rounds", round);
    issue_and_start ();
    moved = server_send (1 + (ctl & 3));
    progress ();
    check_pipe ();
    moved |= server_receive ();
    if ((ctl & 4) || !moved)
      drain ();
    if (ctl & 0x10)
      fake_ms += 1000;
    if (ctl & 0x20)
      fake_ms += (uint64_t) fetcher_stall_timeout (&cfg) * 1000;
    if (nissued == nreads && http.active == 0 && http.queue_len == 0)
      break;
    still = !moved && signature () == before ? still + 1 : 0;
    if (still >= 2) {
      /* Stuck: the server closes a connection, or time passes. */
      for (i = 0; i < MAX_CONNS && conns[i].fd < 0; i++)
        ;
      if ((ctl & 8) && i < MAX_CONNS)
        conn_close (&conns[i]);
      else
        fake_ms += (uint64_t) fetcher_stall_timeout (&cfg) * 1000 + 1000;
      still = 0;
    }
  }
  drain ();
  for (i = 0; i < nreads; i++)
    FUZZ_CHECK (ended (&reads[i]), "read %u never ended", i);
  FUZZ_CHECK (pipe_bytes () == 0, "%zu bytes left in the pipe that nobody announced",
              pipe_bytes ());
  teardown ();
  return 0;
}
