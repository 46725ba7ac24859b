/*
 * handshake.c: newstyle negotiation, one client at a time: fixed newstyle,
 * and plain newstyle (EXPORT_NAME alone) for clients that do not set the
 * fixed-newstyle flag.
 *
 * Order of checks for every option: the header's length is capped before
 * anything is buffered (NBD_MAX_OPTION_LENGTH), the option count is capped
 * (NBD_MAX_OPTIONS), and the option's data is then parsed with the bounded
 * reader, which must consume it exactly (handshake-parse.c).  No backend work happens until a
 * client names an export that exists: only then is a fetcher requested.
 *
 * With --tls=require, nothing but STARTTLS and ABORT is answered before
 * TLS is up; with --allow, an export a client may not use is left out of
 * its LIST and answered as if it did not exist (access.c,
 * find_usable_export).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-wire.h"
#include "frontend.h"
#include "handshake-parse.h"
#include "ipc-messages.h"
#include "limits-handshake.h"
#include "limits-nbd.h"
#include "limits-server.h"
#include "log.h"
#include "wire.h"

#ifdef NBDCURLD_TEST_HOOKS
void sandbox_probe (const char *probe);
#endif

/* The only meta context: base:allocation, with this id. */
#define META_CONTEXT_ID_BASE_ALLOCATION 1u

void
handshake_start (struct client *c)
{
  uint8_t buf[NBD_GREETING_SIZE];
  struct writer w;

  writer_init (&w, buf, sizeof buf);
  if (writer_put_u64_be (&w, NBD_MAGIC) == -1 ||
      writer_put_u64_be (&w, NBD_IHAVEOPT) == -1 ||
      writer_put_u16_be (&w, NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES) == -1)
    fatal ("greeting does not fit");           /* sizes are constants */
  outq_push_copy (&c->out, buf, w.pos);
  c->state = CLIENT_GREETING;
}

/* Queue an option reply with an optional payload. */
static void
send_reply (struct client *c, uint32_t option, uint32_t reply,
            const void *payload, size_t len)
{
  uint8_t hdr[NBD_OPTION_REPLY_HEADER_SIZE];
  struct writer w;

  writer_init (&w, hdr, sizeof hdr);
  if (writer_put_u64_be (&w, NBD_REP_MAGIC) == -1 ||
      writer_put_u32_be (&w, option) == -1 ||
      writer_put_u32_be (&w, reply) == -1 ||
      writer_put_u32_be (&w, (uint32_t) len) == -1)
    fatal ("option reply header does not fit");
  outq_push_copy (&c->out, hdr, w.pos);
  if (len > 0)
    outq_push_copy (&c->out, payload, len);
}

/* An error reply with a message for the client's user. */
static void
send_error (struct client *c, uint32_t option, uint32_t reply, const char *msg)
{
  debug ("client %s: option %u: %s", c->peer, option, msg);
  send_reply (c, option, reply, msg, strlen (msg));
}

/* Find an export by name.  An empty name means the first export. */
static int
find_export (const char *name, uint32_t *index)
{
  uint32_t i;

  for (i = 0; i < fe.config.nexports; i++)
    if (strcmp (fe.config.exports[i].name, name) == 0) {
      *index = i;
      return 0;
    }
  if (name[0] == '\0') {
    *index = 0;
    return 0;
  }
  return -1;
}

/* The export of that name this client may use.  One it may not use is
 * answered exactly as one that does not exist (the same reply, the same
 * message, no work before it that the missing one skips), so that --allow
 * does not tell a client which names exist; the server's log says which
 * it was.  -1 for both. */
static int
find_usable_export (struct client *c, const char *name, uint32_t *index)
{
  if (find_export (name, index) == -1)
    return -1;
  if (!export_allowed (c, *index)) {
    warn ("client %s: not allowed to use export \"%.64s\" (--allow): answered as "
          "if it did not exist", c->peer, fe.config.exports[*index].name);
    return -1;
  }
  return 0;
}

/* What a client that names an export it cannot have is told, whether the
 * export is missing or forbidden to it. */
static void
send_no_such_export (struct client *c, uint32_t option, const char *name)
{
  char msg[128];

  snprintf (msg, sizeof msg, "no export named \"%.64s\": list them with "
            "nbdinfo --list", name);
  send_error (c, option, NBD_REP_ERR_UNKNOWN, msg);
}

/* Transmission flags for the chosen export. */
static uint16_t
export_flags (const struct client *c, uint32_t caps)
{
  uint16_t f = NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_CACHE;

  if (c->structured)
    f |= NBD_FLAG_SEND_DF;     /* a read is always one chunk */
  if (fe.config.exports[c->export_index].readonly || !(caps & FETCHER_CAN_WRITE))
    f |= NBD_FLAG_READ_ONLY;
  else {
    if (caps & FETCHER_CAN_FLUSH)
      f |= NBD_FLAG_SEND_FLUSH;
    if (caps & FETCHER_CAN_FUA)
      f |= NBD_FLAG_SEND_FUA;
  }
  if (fe.config.flags & FRONTEND_MULTI_CONN)
    f |= NBD_FLAG_CAN_MULTI_CONN;
  return f;
}

/* Leave negotiation: from here on bytes are requests. */
static void
enter_transmission (struct client *c)
{
  c->state = CLIENT_TRANSMISSION;
  c->deadline_ms = 0;
  stats_client_serving (c);
  /* A context chosen for another export does not apply to this one. */
  if (c->meta_export != c->export_index)
    c->meta_base_allocation = false;
  debug ("client %s: serving export \"%s\" (%llu bytes, flags 0x%x)", c->peer,
         fe.config.exports[c->export_index].name,
         (unsigned long long) c->export_size, c->eflags);
}

static void
send_info (struct client *c, uint16_t type, const void *data, size_t len)
{
  uint8_t buf[2 + NBD_MAX_STRING];
  struct writer w;

  writer_init (&w, buf, sizeof buf);
  if (writer_put_u16_be (&w, type) == -1 || writer_put_bytes (&w, data, len) == -1)
    fatal ("info reply does not fit");          /* strings <= NBD_MAX_STRING */
  send_reply (c, c->pending_option, NBD_REP_INFO, buf, w.pos);
}

/* A fetcher's reason for a failed open, made safe to log and to send: its
 * bytes are untrusted (a fetcher may be a hostile web server's), so
 * anything but printable ASCII becomes '?'. */
static void
printable_reason (const uint8_t *reason, uint32_t len, char *out, size_t size)
{
  size_t i;

  for (i = 0; i < len && i + 1 < size; i++)
    out[i] = reason[i] >= 0x20 && reason[i] < 0x7f ? (char) reason[i] : '?';
  out[i] = '\0';
}

/* Why exports failed to open, logged once per cause rather than once per
 * client: again when the reason changes, or after
 * OPEN_FAILURE_LOG_INTERVAL seconds with the count of failures since. */
static struct {
  char reason[MAX_OPEN_FAILURE_MESSAGE + 1];
  uint64_t logged_ms;
  unsigned since;
} open_failures[MAX_EXPORTS];

static void
log_open_failure (uint32_t idx, uint32_t error, const char *why)
{
  const char *name, *url;
  uint64_t now = now_ms ();

  if (idx >= fe.config.nexports || idx >= MAX_EXPORTS)
    return;
  name = fe.config.exports[idx].name;
  url = fe.config.exports[idx].log_url && fe.config.exports[idx].log_url[0]
    ? fe.config.exports[idx].log_url : "(URL)";
  if (strcmp (open_failures[idx].reason, why) == 0 && open_failures[idx].logged_ms != 0 &&
      now - open_failures[idx].logged_ms < OPEN_FAILURE_LOG_INTERVAL * 1000ull) {
    open_failures[idx].since++;
    return;
  }
  if (open_failures[idx].since > 0 && strcmp (open_failures[idx].reason, why) == 0)
    warn ("export \"%s\" cannot be opened: %s: %s (%s; %u more clients since it was "
          "last logged)", name, url, why[0] ? why : "no reason given",
          strerror ((int) error), open_failures[idx].since);
  else
    warn ("export \"%s\" cannot be opened: %s: %s (%s)", name, url,
          why[0] ? why : "no reason given", strerror ((int) error));
  snprintf (open_failures[idx].reason, sizeof open_failures[idx].reason, "%s", why);
  open_failures[idx].logged_ms = now;
  open_failures[idx].since = 0;
}

/* Answer the pending INFO, GO or EXPORT_NAME once the export is open. */
static void
answer_pending (struct client *c)
{
  const struct export_info *e = &fe.config.exports[c->export_index];
  uint8_t buf[8 + 2 + 4 * 3];
  struct writer w;

  /* Computed now: structured replies (and so DF) may have been negotiated
   * since an earlier INFO. */
  c->eflags = export_flags (c, c->fetcher_caps);

  if (c->pending_option == NBD_OPT_EXPORT_NAME) {
    static const uint8_t zeroes[NBD_EXPORT_NAME_ZEROES];
    writer_init (&w, buf, sizeof buf);
    if (writer_put_u64_be (&w, c->export_size) == -1 ||
        writer_put_u16_be (&w, c->eflags) == -1)
      fatal ("export reply does not fit");
    outq_push_copy (&c->out, buf, w.pos);
    if (!c->no_zeroes)
      outq_push_copy (&c->out, zeroes, sizeof zeroes);
    enter_transmission (c);
    return;
  }

  writer_init (&w, buf, sizeof buf);
  if (writer_put_u64_be (&w, c->export_size) == -1 ||
      writer_put_u16_be (&w, c->eflags) == -1)
    fatal ("info reply does not fit");
  send_info (c, NBD_INFO_EXPORT, buf, w.pos);
  if (c->want_name)
    send_info (c, NBD_INFO_NAME, e->name, strlen (e->name));
  if (c->want_description && e->description[0] != '\0')
    send_info (c, NBD_INFO_DESCRIPTION, e->description, strlen (e->description));
  /* Always sent: minimum 1 imposes nothing, and the maximum is the size
   * every client may use unasked. */
  writer_init (&w, buf, sizeof buf);
  if (writer_put_u32_be (&w, NBD_MIN_BLOCK_SIZE) == -1 ||
      writer_put_u32_be (&w, NBD_PREFERRED_BLOCK_SIZE) == -1 ||
      writer_put_u32_be (&w, NBD_MAX_REQUEST_SIZE) == -1)
    fatal ("block size reply does not fit");
  send_info (c, NBD_INFO_BLOCK_SIZE, buf, w.pos);
  send_reply (c, c->pending_option, NBD_REP_ACK, NULL, 0);

  if (c->pending_option == NBD_OPT_GO)
    enter_transmission (c);
  else
    c->state = CLIENT_OPTIONS;
}

void
handshake_fetcher_opened (struct client *c, uint32_t error,
                          const uint8_t *reason, uint32_t reason_len)
{
  char why[MAX_OPEN_FAILURE_MESSAGE + 1], message[MAX_OPEN_FAILURE_MESSAGE + 64];

  if (c->state != CLIENT_WAIT_FETCHER)
    return;
  /* The handshake timer restarts: opening a URL is the server's time,
   * not the client's (request_fetcher stopped it). */
  c->deadline_ms = now_ms () + (uint64_t) fe.config.handshake_timeout * 1000;
  if (error != 0) {
    printable_reason (reason, reason_len, why, sizeof why);
    log_open_failure (c->export_index, error, why);
    drop_fetcher (c);
    if (c->pending_option == NBD_OPT_EXPORT_NAME) {
      /* EXPORT_NAME has no way to report an error: close. */
      client_close (c, "export could not be opened");
      return;
    }
    /* A client that may use the export (access.c let it this far) learns
     * why it cannot: the reason names no credential, and no more of the
     * URL than a redirect's target or a host name. */
    snprintf (message, sizeof message, "the export could not be opened: %s",
              why[0] ? why : "see the server's log");
    /* The spec's "not available"; refused credentials are the policy's. */
    send_error (c, c->pending_option,
                error == EACCES || error == EPERM ? NBD_REP_ERR_POLICY : NBD_REP_ERR_UNKNOWN,
                message);
    c->state = CLIENT_OPTIONS;
    return;
  }
  answer_pending (c);
}

/* Open export idx for the pending option: reuse the fetcher an earlier
 * INFO made for it, or ask the supervisor for one. */
static void
open_export (struct client *c, uint32_t option, uint32_t idx)
{
  c->pending_option = option;
  c->pending_export = idx;
  if (c->fetcher_fd >= 0 && c->fetcher_open && !c->fetcher_failed &&
      c->export_index == idx) {
    c->state = CLIENT_WAIT_FETCHER;
    handshake_fetcher_opened (c, 0, NULL, 0);
    return;
  }
  drop_fetcher (c);
  if (c->fetcher_spawns >= NBD_MAX_FETCHER_SPAWNS) {
    if (option == NBD_OPT_EXPORT_NAME) {
      client_close (c, "too many exports opened during the handshake");
      return;
    }
    send_error (c, option, NBD_REP_ERR_POLICY,
                "too many exports opened during this handshake");
    return;
  }
  c->export_index = idx;
  c->state = CLIENT_WAIT_FETCHER;
  request_fetcher (c, idx);
}

/* NBD_OPT_EXPORT_NAME: the data is the name, nothing else. */
static void
option_export_name (struct client *c, const uint8_t *data, uint32_t len)
{
  char name[NBD_MAX_STRING + 1];
  uint32_t idx;

  if (parse_export_name (data, len, name) == -1) {
    client_close (c, "EXPORT_NAME: name too long or not a string");
    return;
  }
  if (find_usable_export (c, name, &idx) == -1) {
    warn ("client %s: no export \"%.64s\" for it: closing (clients should use "
          "NBD_OPT_GO to get an error reply)", c->peer, name);
    client_close (c, NULL);
    return;
  }
  open_export (c, NBD_OPT_EXPORT_NAME, idx);
}

static void
option_list (struct client *c, uint32_t option, struct reader *r)
{
  uint32_t i;

  if (reader_end (r) == -1) {
    send_error (c, option, NBD_REP_ERR_INVALID, "LIST takes no data");
    return;
  }
  for (i = 0; i < fe.config.nexports; i++) {
    const struct export_info *e = &fe.config.exports[i];
    uint8_t buf[4 + 2 * NBD_MAX_STRING];
    struct writer w;
    size_t nl = strlen (e->name);

    if (!export_allowed (c, i))
      continue;                         /* not even its name */
    writer_init (&w, buf, sizeof buf);
    if (writer_put_u32_be (&w, (uint32_t) nl) == -1 ||
        writer_put_bytes (&w, e->name, nl) == -1 ||
        writer_put_bytes (&w, e->description, strlen (e->description)) == -1)
      fatal ("LIST reply does not fit");
    send_reply (c, option, NBD_REP_SERVER, buf, w.pos);
  }
  send_reply (c, option, NBD_REP_ACK, NULL, 0);
}

/* NBD_OPT_INFO and NBD_OPT_GO (handshake-parse.h). */
static void
option_info_go (struct client *c, uint32_t option, const uint8_t *data, uint32_t len)
{
  struct info_go_request req;
  const char *name = req.name;
  uint32_t idx;

  if (parse_info_go (data, len, &req) == -1) {
    send_error (c, option, NBD_REP_ERR_INVALID,
                "malformed request: name or information list length is wrong");
    return;
  }
  c->want_name = req.want_name;
  c->want_description = req.want_description;
#ifdef NBDCURLD_TEST_HOOKS
  /* Test binary only (tests/hooks/sandbox-probe.c): try what the sandbox must
   * refuse, from inside the real front-end. */
  if (strncmp (name, "probe:", 6) == 0)
    sandbox_probe (name + 6);
#endif
  if (find_usable_export (c, name, &idx) == -1) {
    send_no_such_export (c, option, name);
    return;
  }
  open_export (c, option, idx);
}

/* NBD_OPT_LIST_META_CONTEXT / SET_META_CONTEXT (handshake-parse.h). */
static void
option_meta_context (struct client *c, uint32_t option, const uint8_t *data, uint32_t len)
{
  struct meta_context_request req;
  uint32_t idx;

  if (option == NBD_OPT_SET_META_CONTEXT && !c->structured) {
    send_error (c, option, NBD_REP_ERR_INVALID,
                "negotiate structured replies before setting a meta context");
    return;
  }
  switch (parse_meta_context (data, len, option == NBD_OPT_LIST_META_CONTEXT, &req)) {
  case META_BAD_REQUEST:
    send_error (c, option, NBD_REP_ERR_INVALID, "malformed meta context request");
    return;
  case META_BAD_QUERY:
    send_error (c, option, NBD_REP_ERR_INVALID, "malformed meta context query");
    return;
  case META_TRAILING:
    send_error (c, option, NBD_REP_ERR_INVALID,
                "meta context request longer than its queries");
    return;
  case META_COMPLETE:
    break;
  }
  if (find_usable_export (c, req.name, &idx) == -1) {
    send_no_such_export (c, option, req.name);
    return;
  }
  if (req.base_allocation) {
    uint8_t buf[4 + sizeof NBD_META_BASE_ALLOCATION];
    struct writer w;
    writer_init (&w, buf, sizeof buf);
    if (writer_put_u32_be (&w, META_CONTEXT_ID_BASE_ALLOCATION) == -1 ||
        writer_put_bytes (&w, NBD_META_BASE_ALLOCATION,
                          strlen (NBD_META_BASE_ALLOCATION)) == -1)
      fatal ("meta context reply does not fit");
    send_reply (c, option, NBD_REP_META_CONTEXT, buf, w.pos);
  }
  if (option == NBD_OPT_SET_META_CONTEXT) {
    c->meta_base_allocation = req.base_allocation;
    c->meta_export = idx;
  }
  send_reply (c, option, NBD_REP_ACK, NULL, 0);
}

/* NBD_OPT_STARTTLS: no data; answered in clear, then the TLS handshake.
 * Whatever the client sent after it in clear is dropped unread
 * (client_process_input). */
static void
option_starttls (struct client *c, uint32_t option, struct reader *r)
{
  if (!tls_offered ()) {
    /* Without TLS nothing changes mode: the bytes after it are read as
     * plaintext options, in order. */
    send_error (c, option, NBD_REP_ERR_UNSUP,
                "TLS is not enabled on this server (nbdcurld --tls)");
    return;
  }
  if (reader_end (r) == -1) {
    send_error (c, option, NBD_REP_ERR_INVALID, "STARTTLS takes no data");
    return;
  }
  if (c->tls != NULL) {
    send_error (c, option, NBD_REP_ERR_INVALID, "TLS is in use already");
    return;
  }
  if (tls_start (c) == -1) {
    /* Over its address's share: refused in clear, before any
     * cryptography (the client may try again later); else closed. */
    if (errno == EAGAIN)
      send_error (c, option, NBD_REP_ERR_POLICY,
                  "too many TLS handshakes from this address: try again in a second");
    else
      client_close (c, NULL);
    return;
  }
  send_reply (c, option, NBD_REP_ACK, NULL, 0);
  c->state = CLIENT_TLS_HANDSHAKE;
}

void
handshake_tls_done (struct client *c)
{
  /* The spec: what was negotiated in clear does not carry over. */
  c->structured = false;
  c->meta_base_allocation = false;
  c->meta_export = 0;
  c->want_name = c->want_description = false;
  drop_fetcher (c);                     /* an INFO's, opened in clear */
  c->state = CLIENT_OPTIONS;
}

/* One whole option: header fields and exactly `len` bytes of data. */
static void
handshake_dispatch_option (struct client *c, uint32_t option,
                           const uint8_t *data, uint32_t len)
{
  struct reader r;

  reader_init (&r, data, len);
  /* Plain newstyle has no option replies for the client to parse: any
   * option but EXPORT_NAME ends the connection unanswered. */
  if (!c->fixed_newstyle && option != NBD_OPT_EXPORT_NAME) {
    warn ("client %s: option %u from a plain-newstyle client, which may send "
          "only EXPORT_NAME: closing", c->peer, option);
    client_close (c, NULL);
    return;
  }
  /* --tls=require: before TLS, nothing is revealed or negotiated. */
  if (tls_required () && !client_in_tls (c) && option != NBD_OPT_STARTTLS &&
      option != NBD_OPT_ABORT) {
    if (option == NBD_OPT_EXPORT_NAME) {
      /* It has no error reply. */
      warn ("client %s: EXPORT_NAME without TLS, which this server requires: "
            "closing", c->peer);
      client_close (c, NULL);
      return;
    }
    send_error (c, option, NBD_REP_ERR_TLS_REQD,
                "this server requires TLS: connect with nbds:// (or STARTTLS)");
    return;
  }
  switch (option) {
  case NBD_OPT_STARTTLS:
    option_starttls (c, option, &r);
    break;
  case NBD_OPT_EXPORT_NAME:
    option_export_name (c, data, len);
    break;
  case NBD_OPT_ABORT:
    send_reply (c, option, NBD_REP_ACK, NULL, 0);
    c->state = CLIENT_CLOSING;
    break;
  case NBD_OPT_LIST:
    option_list (c, option, &r);
    break;
  case NBD_OPT_INFO:
  case NBD_OPT_GO:
    option_info_go (c, option, data, len);
    break;
  case NBD_OPT_STRUCTURED_REPLY:
    if (reader_end (&r) == -1) {
      send_error (c, option, NBD_REP_ERR_INVALID, "STRUCTURED_REPLY takes no data");
      break;
    }
    c->structured = true;
    send_reply (c, option, NBD_REP_ACK, NULL, 0);
    break;
  case NBD_OPT_LIST_META_CONTEXT:
  case NBD_OPT_SET_META_CONTEXT:
    option_meta_context (c, option, data, len);
    break;
  default:
    send_error (c, option, NBD_REP_ERR_UNSUP, "option not supported");
    break;
  }
}

/* The client's flags, after the greeting. */
static size_t
handshake_client_flags (struct client *c, const uint8_t *data, size_t len)
{
  struct reader r;
  uint32_t flags;

  reader_init (&r, data, len);
  if (reader_get_u32_be (&r, &flags) == -1)
    return 0;
  if (!client_flags_acceptable (flags)) {
    warn ("client %s: unknown client flags 0x%x (known: fixed newstyle 0x%x, "
          "no zeroes 0x%x): closing", c->peer, flags, NBD_FLAG_C_FIXED_NEWSTYLE,
          NBD_FLAG_C_NO_ZEROES);
    client_close (c, NULL);
    return 0;
  }
  c->fixed_newstyle = (flags & NBD_FLAG_C_FIXED_NEWSTYLE) != 0;
  /* Only fixed newstyle has STARTTLS (the spec: plain newstyle is NOTLS). */
  if (!c->fixed_newstyle && tls_required ()) {
    warn ("client %s: plain newstyle (no fixed-newstyle flag) cannot start TLS, "
          "which this server requires: closing", c->peer);
    client_close (c, NULL);
    return 0;
  }
  c->no_zeroes = (flags & NBD_FLAG_C_NO_ZEROES) != 0;
  c->state = CLIENT_OPTIONS;
  return r.pos;
}

/* One option, once it is all in (handshake-parse.c checks its framing). */
static size_t
handshake_option (struct client *c, const uint8_t *data, size_t len)
{
  struct client_option o;

  switch (parse_option (data, len, &o)) {
  case OPTION_INCOMPLETE:
    return 0;                           /* wait for the rest */
  case OPTION_BAD_MAGIC:
    client_close (c, "bad option magic");
    return 0;
  case OPTION_TOO_LONG:
    warn ("client %s: option %u is %u bytes long (at most %u): closing",
          c->peer, o.option, o.length, NBD_MAX_OPTION_LENGTH);
    client_close (c, NULL);
    return 0;
  case OPTION_COMPLETE:
    break;
  }
  if (++c->options_seen > NBD_MAX_OPTIONS) {
    warn ("client %s: more than %u options: closing", c->peer, NBD_MAX_OPTIONS);
    client_close (c, NULL);
    return 0;
  }
  handshake_dispatch_option (c, o.option, o.data, o.length);
  return o.size;
}

size_t
handshake_consume (struct client *c, const uint8_t *data, size_t len)
{
  if (c->state == CLIENT_GREETING)
    return handshake_client_flags (c, data, len);
  if (c->state == CLIENT_OPTIONS)
    return handshake_option (c, data, len);
  return 0;
}
