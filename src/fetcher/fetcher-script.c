/*
 * fetcher-script.c: a network fetcher's side of header-script= and
 * cookie-script= (the supervisor runs them: scripts.c).
 *
 * Peer: the supervisor, on the script channel (CHILD_FD_SCRIPTS,
 * child-fds.h): IPC_SCRIPT_VALUES in (read through the bounded reader,
 * checked as the configuration is), IPC_SCRIPT_RENEW out.
 *
 * The first values come before the export is opened.  Later ones are
 * taken when no transfer runs (libcurl keeps pointers to the header lists
 * of its transfers, and a direct read's request is made from the same
 * lines), so new reads wait meanwhile.  A read that a web server refuses
 * with 401 or 403 is parked, the supervisor is asked for a renewal, and
 * the read goes again once with the new values: if those are refused
 * too, or the run fails, the read fails as any other.
 *
 * Below fetcher-http.c and fetcher-direct.c, above fetcher-transfer.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "child-fds.h"
#include "clock.h"
#include "fetcher-http.h"
#include "fetcher-wire.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "limits-scripts.h"
#include "limits-strings.h"
#include "script-values.h"
#include "wire.h"

static struct {
  bool on;                    /* FETCHER_HEADER_SCRIPT or _COOKIE_SCRIPT */
  uint32_t which;             /* SCRIPT_VALUES_* that the scripts give */
  char *headers, *cookie;     /* the values in use ("" until the first) */
  uint64_t generation;        /* of those values */
  /* Values received and not taken yet (script_take_values). */
  bool pending;
  char *new_headers, *new_cookie;
  uint64_t new_generation;
  /* A renewal asked for, for generation `generation`. */
  bool renewing;
  /* Reads refused with 401 or 403, waiting for the renewal. */
  struct fetcher_request parked[QUEUE_SIZE];
  unsigned nparked;
} script;

static void
free_secret (char **p)
{
  if (*p) {
    explicit_bzero (*p, strlen (*p));
    free (*p);
  }
  *p = NULL;
}

void
script_init (const struct fetcher_config *cfg)
{
  script.on = (cfg->flags & (FETCHER_HEADER_SCRIPT | FETCHER_COOKIE_SCRIPT)) != 0;
  script.which = ((cfg->flags & FETCHER_HEADER_SCRIPT) ? SCRIPT_VALUES_HEADERS : 0) |
                 ((cfg->flags & FETCHER_COOKIE_SCRIPT) ? SCRIPT_VALUES_COOKIE : 0);
}

int
script_fd (void)
{
  return script.on ? CHILD_FD_SCRIPTS : -1;
}

const char *
script_headers (const struct fetcher_config *cfg)
{
  return (script.which & SCRIPT_VALUES_HEADERS) && script.headers ? script.headers
                                                                 : cfg->headers;
}

const char *
script_cookie (const struct fetcher_config *cfg)
{
  return (script.which & SCRIPT_VALUES_COOKIE) && script.cookie ? script.cookie
                                                               : cfg->cookie;
}

/* Read one message from the supervisor.  Returns 1 when one was taken,
 * 0 when none is there; the supervisor's end closing, or anything
 * malformed, ends the fetcher (its scripts would never be renewed). */
static int
receive (void)
{
  static uint8_t payload[SCRIPT_VALUES_MAX_PAYLOAD];
  struct ipc_header h;
  struct script_values_wire w;
  struct reader r;
  char *headers = NULL, *cookie = NULL;

  if (ipc_recv_datagram (CHILD_FD_SCRIPTS, &h, payload, sizeof payload) == -1) {
    if (errno == EAGAIN || errno == EINTR)
      return 0;
    if (errno == 0) {
      debug ("the supervisor closed the script channel; exiting");
      exit (EXIT_FAILURE);
    }
    fatal ("a malformed message on the script channel");
  }
  if (h.type != IPC_SCRIPT_VALUES)
    fatal ("unexpected message type %u on the script channel", h.type);
  if (ipc_check (&h, 0, ROLE_SUPERVISOR, ROLE_FETCHER) != NULL)
    fatal ("a malformed script %s message", h.error != 0 ? "failure" : "values");
  if (h.error != 0) {
    /* The run failed: reads waiting for it fail (below). */
    script.renewing = false;
    script.pending = false;
    return -(int) h.error;
  }
  if (h.flags != script.which || h.id <= script.generation)
    fatal ("script values for the wrong scripts or an old generation");
  reader_init (&r, payload, h.payload_len);
  if (reader_get_u32_ne (&r, &w.headers_len) == -1 ||
      reader_get_u32_ne (&r, &w.cookie_len) == -1 ||
      w.headers_len > MAX_EXTRA_HEADER_BYTES || w.cookie_len > MAX_COOKIE_LENGTH ||
      (w.headers_len > 0 && !(script.which & SCRIPT_VALUES_HEADERS)) ||
      (w.cookie_len > 0 && !(script.which & SCRIPT_VALUES_COOKIE)))
    fatal ("malformed script values");
  headers = malloc (w.headers_len + 1);
  cookie = malloc (w.cookie_len + 1);
  if (headers == NULL || cookie == NULL)
    fatal_errno ("malloc");
  /* NUL bytes refused; the supervisor checked each line as header= and
   * cookie= are checked, and the lines keep their "\r\n" ends. */
  if (reader_get_string (&r, headers, w.headers_len, MAX_EXTRA_HEADER_BYTES) == -1 ||
      reader_get_string (&r, cookie, w.cookie_len, MAX_COOKIE_LENGTH) == -1 ||
      reader_end (&r) == -1 ||
      (w.headers_len > 0 && (w.headers_len < 2 ||
                             memcmp (headers + w.headers_len - 2, "\r\n", 2) != 0)) ||
      strchr (cookie, '\r') || strchr (cookie, '\n'))
    fatal ("malformed script values");
  explicit_bzero (payload, h.payload_len);
  free_secret (&script.new_headers);
  free_secret (&script.new_cookie);
  script.new_headers = headers;
  script.new_cookie = cookie;
  script.new_generation = h.id;
  script.pending = true;
  script.renewing = false;
  return 1;
}

/* Wait up to the scripts' time limit and some for a message. */
static int
receive_blocking (void)
{
  const uint64_t end = monotonic_ms () + (uint64_t) (SCRIPT_TIMEOUT + 10) * 1000;

  for (;;) {
    struct pollfd p = { .fd = CHILD_FD_SCRIPTS, .events = POLLIN };
    uint64_t now = monotonic_ms ();
    int r;

    if (now >= end)
      return -ETIMEDOUT;
    if (poll (&p, 1, (int) (end - now)) == -1 && errno != EINTR)
      fatal_errno ("poll");
    r = receive ();
    if (r != 0)
      return r;
  }
}

/* The pending values become the ones in use. */
static void
take (void)
{
  free_secret (&script.headers);
  free_secret (&script.cookie);
  script.headers = script.new_headers;
  script.cookie = script.new_cookie;
  script.new_headers = script.new_cookie = NULL;
  script.generation = script.new_generation;
  script.pending = false;
}

int
script_wait_first (struct fetcher *f)
{
  int r;

  if (!script.on)
    return 0;
  r = receive_blocking ();
  if (r == 1) {
    take ();
    return 0;
  }
  /* The front-end logs it and tells the client (IPC_FETCHER_OPENED). */
  snprintf (f->open_failure, sizeof f->open_failure, "%s",
            r == -ETIMEDOUT ? "no answer from the supervisor's scripts"
                            : "its header-script or cookie-script failed (the "
                              "server's log says why)");
  debug ("export \"%s\": cannot open %s: %s", f->export_name, f->log_url,
         f->open_failure);
  return EACCES;
}

/* Ask the supervisor for a renewal of the values in use. */
static void
ask_renewal (void)
{
  const struct ipc_header h = { .type = IPC_SCRIPT_RENEW, .id = script.generation };

  if (script.renewing)
    return;
  if (ipc_send_datagram (CHILD_FD_SCRIPTS, &h, NULL) == -1)
    fatal_errno ("asking the supervisor to renew the scripts' values");
  script.renewing = true;
}

bool
script_renew_blocking (void)
{
  int r;

  if (!script.on)
    return false;
  debug ("the web server refused the open: renewing the scripts' values");
  ask_renewal ();
  r = receive_blocking ();
  if (r != 1)
    return false;
  take ();
  return true;
}

/* The parked reads fail. */
static void
fail_parked (const char *why)
{
  unsigned i;

  for (i = 0; i < script.nparked; i++) {
    warn ("export \"%s\" (%s): read of %" PRIu32 " bytes at offset %" PRIu64
          " failed: %s", http.f->export_name, http.f->log_url, script.parked[i].length,
          script.parked[i].offset, why);
    fetcher_reply (script.parked[i].id, EIO);
  }
  script.nparked = 0;
}

void
script_input (void)
{
  int r;

  /* Each message replaces the one before: a few at most. */
  while ((r = receive ()) != 0)
    if (r < 0)
      fail_parked ("refused by the web server, and the scripts' renewal failed "
                   "(see the supervisor's messages)");
}

bool
script_hold_reads (void)
{
  return script.renewing || script.pending;
}

bool
script_values_waiting (void)
{
  return script.pending;
}

void
script_take_values (void)
{
  take ();
  debug ("export \"%s\": new values from the scripts (generation %" PRIu64 "); "
         "%u refused reads go again", http.f->export_name, script.generation,
         script.nparked);
}

void
script_requeue (void)
{
  unsigned i, n;

  if (script.nparked == 0 || script_hold_reads ())
    return;
  /* Back at the queue's head, in their order, as many as fit; the others
   * at the next call (the queue drains). */
  n = QUEUE_SIZE - http.queue_len < script.nparked ? QUEUE_SIZE - http.queue_len
                                                   : script.nparked;
  for (i = n; i > 0; i--)
    queue_push_front (&script.parked[i - 1]);
  memmove (script.parked, script.parked + n, (script.nparked - n) * sizeof script.parked[0]);
  script.nparked -= n;
}

unsigned
script_parked (void)
{
  return script.nparked;
}

bool
script_park_refused (struct transfer *t)
{
  uint64_t offset = t->offset;
  unsigned i;

  if (!script.on || (t->reply.status != 401 && t->reply.status != 403) ||
      t->next_part != 0 || t->part_received != 0 ||
      QUEUE_SIZE - script.nparked < t->nparts)
    return false;
  for (i = 0; i < t->nparts; i++)
    if (t->parts[i].auth_retried) {
      warn ("export \"%s\": the web server refuses the scripts' new values too "
            "(HTTP %ld)", http.f->export_name, t->reply.status);
      return false;
    }
  debug ("export \"%s\": HTTP %ld for a read: renewing the scripts' values and "
         "trying it again", http.f->export_name, t->reply.status);
  for (i = 0; i < t->nparts; i++) {
    script.parked[script.nparked++] = (struct fetcher_request) {
      .type = IPC_READ, .id = t->parts[i].id, .offset = offset,
      .length = t->parts[i].length, .data = t->parts[i].data, .auth_retried = true,
    };
    offset += t->parts[i].length;
  }
  /* Asked once per generation: the reads refused meanwhile join these. */
  if (!script.pending)
    ask_renewal ();
  return true;
}
