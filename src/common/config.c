/* config.c: configuration messages from the supervisor to its children. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "access-rules.h"
#include "cache-layout.h"
#include "config.h"
#include "config-wire.h"
#include "data-path.h"
#include "fetcher-wire.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "keyholder-wire.h"
#include "limits-ca.h"
#include "limits-nbd.h"
#include "limits-readahead.h"
#include "limits-server.h"
#include "limits-strings.h"
#include "limits-web.h"
#include "log.h"
#include "tls-modes.h"
#include "url-check-wire.h"
#include "wire.h"

static int
send_message (int fd, uint16_t type, const void *payload, size_t len)
{
  struct ipc_header h = { .type = type, .payload_len = (uint32_t) len };
  if (len > IPC_MAX_CONFIG_PAYLOAD) {
    errno = E2BIG;
    return -1;
  }
  return ipc_send (fd, &h, payload);
}

/* Append a string to a payload under construction. */
static int
put_string (struct writer *w, const char *s)
{
  return writer_put_bytes (w, s, strlen (s));
}

static int
send_tls_settings (int fd, const struct tls_settings *t)
{
  struct tls_config_wire tw = {
    .mode = t->mode, .flags = t->flags,
    .priority_len = (uint32_t) strlen (t->priority),
    .cert_len = t->cert_len, .ca_len = t->ca_len, .crl_len = t->crl_len,
  };
  size_t cap = sizeof tw + MAX_TLS_PRIORITY + 3 * MAX_TLS_FILE_SIZE;
  uint8_t *buf = malloc (cap);
  struct writer w;
  int r;

  if (buf == NULL)
    return -1;
  writer_init (&w, buf, cap);
  if (writer_put_bytes (&w, &tw, sizeof tw) == -1 ||
      put_string (&w, t->priority) == -1 ||
      writer_put_bytes (&w, t->cert, t->cert_len) == -1 ||
      writer_put_bytes (&w, t->ca, t->ca_len) == -1 ||
      writer_put_bytes (&w, t->crl, t->crl_len) == -1) {
    free (buf);
    errno = E2BIG;
    return -1;
  }
  r = send_message (fd, IPC_CONFIG_TLS, buf, w.pos);
  free (buf);
  return r;
}

int
config_send_frontend (int fd, const struct frontend_config *c)
{
  struct frontend_config_wire fw = {
    .flags = c->flags,
    .handshake_timeout = c->handshake_timeout,
    .nexports = c->nexports,
    .nlisteners = c->nlisteners,
    .client_memory = c->client_memory,
    .max_clients = c->max_clients,
  };
  uint8_t buf[sizeof (struct export_config_wire) + 2 * NBD_MAX_STRING + MAX_LOG_URL_LENGTH];
  uint32_t i;

  if (send_message (fd, IPC_CONFIG_FRONTEND, &fw, sizeof fw) == -1)
    return -1;
  for (i = 0; i < c->nexports; i++) {
    const struct export_info *e = &c->exports[i];
    struct export_config_wire ew = {
      .flags = e->readonly ? EXPORT_READONLY : 0,
      .name_len = (uint32_t) strlen (e->name),
      .description_len = (uint32_t) strlen (e->description),
      .log_url_len = e->log_url ? (uint32_t) strlen (e->log_url) : 0,
    };
    struct writer w;
    writer_init (&w, buf, sizeof buf);
    if (writer_put_bytes (&w, &ew, sizeof ew) == -1 ||
        put_string (&w, e->name) == -1 ||
        put_string (&w, e->description) == -1 ||
        put_string (&w, e->log_url ? e->log_url : "") == -1) {
      errno = E2BIG;
      return -1;
    }
    if (send_message (fd, IPC_CONFIG_EXPORT, buf, w.pos) == -1)
      return -1;
  }
  for (i = 0; i < c->nrules; i++) {
    const struct access_rule *a = &c->rules[i];
    struct access_rule_wire aw = {
      .export_index = a->export_index, .kind = a->kind, .prefix = a->prefix,
      .name_len = a->name ? (uint32_t) strlen (a->name) : 0,
    };
    struct writer w;
    memcpy (aw.addr, a->addr, sizeof aw.addr);
    writer_init (&w, buf, sizeof buf);
    if (writer_put_bytes (&w, &aw, sizeof aw) == -1 ||
        (a->name && put_string (&w, a->name) == -1)) {
      errno = E2BIG;
      return -1;
    }
    if (send_message (fd, IPC_CONFIG_ACCESS, buf, w.pos) == -1)
      return -1;
  }
  if (c->tls.mode != TLS_OFF && send_tls_settings (fd, &c->tls) == -1)
    return -1;
  return send_message (fd, IPC_CONFIG_END, NULL, 0);
}

#define FETCHER_OWN_ROW(field, max, what)                                   \
  { offsetof (struct fetcher_config, field), max, what },
#define FETCHER_KEY_TEXT_ROW(name, field, check, max, fallback, sent, conf, help) \
  CURL_KEY_IF_SENT (sent, { offsetof (struct fetcher_config, field), max, name "=" },)
#define FETCHER_KEY_LIST_ROW(name, field, add, merge, max, sent, help)      \
  CURL_KEY_IF_SENT (sent, { offsetof (struct fetcher_config, field), max, name "=" },)
const struct fetcher_string fetcher_strings[] = {
  FETCHER_OWN_STRINGS (FETCHER_OWN_ROW)
  CURL_KEYS (FETCHER_KEY_TEXT_ROW, CURL_KEY_SKIP, CURL_KEY_SKIP, CURL_KEY_SKIP,
             CURL_KEY_SKIP, FETCHER_KEY_LIST_ROW, CURL_KEY_SKIP)
};
static_assert (sizeof fetcher_strings / sizeof fetcher_strings[0] == FETCHER_NSTRINGS,
               "FETCHER_NSTRINGS counts fetcher_strings");

/* The largest fetcher configuration message: every string at its limit.
 * It must fit in one message, or a long enough set of keys would stop
 * every fetcher of an export from starting. */
#define FETCHER_ADD_OWN_MAX(field, max, what) + (max)
#define FETCHER_ADD_KEY_TEXT_MAX(name, field, check, max, fallback, sent, conf, help) \
  CURL_KEY_IF_SENT (sent, + (max))
#define FETCHER_ADD_KEY_LIST_MAX(name, field, add, merge, max, sent, help)  \
  CURL_KEY_IF_SENT (sent, + (max))
#define FETCHER_CONFIG_MAX                                                  \
  (sizeof (struct fetcher_config_wire) + FETCHER_NSTRINGS * sizeof (uint32_t) \
   FETCHER_OWN_STRINGS (FETCHER_ADD_OWN_MAX)                                \
   CURL_KEYS (FETCHER_ADD_KEY_TEXT_MAX, CURL_KEY_SKIP, CURL_KEY_SKIP,       \
              CURL_KEY_SKIP, CURL_KEY_SKIP, FETCHER_ADD_KEY_LIST_MAX,        \
              CURL_KEY_SKIP))
static_assert (FETCHER_CONFIG_MAX <= IPC_MAX_CONFIG_PAYLOAD,
               "the fetcher configuration does not fit in one message");

/* The strings' lengths, then their bytes. */
static int
put_fetcher_strings (struct writer *w, const struct fetcher_config *c)
{
  unsigned i;

  for (i = 0; i < FETCHER_NSTRINGS; i++) {
    uint32_t len = (uint32_t) strlen (fetcher_string_value (c, i));
    if (writer_put_bytes (w, &len, sizeof len) == -1)
      return -1;
  }
  for (i = 0; i < FETCHER_NSTRINGS; i++)
    if (put_string (w, fetcher_string_value (c, i)) == -1)
      return -1;
  return 0;
}

int
config_send_fetcher (int fd, const struct fetcher_config *c)
{
  struct fetcher_config_wire fw = {
    .flags = c->flags,
    .connections = c->connections,
    .connect_timeout = c->connect_timeout,
    .timeout = c->timeout,
    .stall_timeout = c->stall_timeout,
    .ca_bundle_len = c->ca_bundle_len,
    .ip_version = c->ip_version,
    .tls_min = c->tls_min,
    .http_version = c->http_version,
    .retries = c->retries,
    .retry_delay_ms = c->retry_delay_ms,
    .readahead = c->readahead,
    .cache_entries = c->cache_entries,
    .cache_block_size = c->cache_block_size,
    .cache_owner = c->cache_owner,
    .nstrings = FETCHER_NSTRINGS,
  };
  uint8_t buf[FETCHER_CONFIG_MAX];
  struct writer w;
  int r;

  memcpy (fw.allow_ports, c->allow_ports, sizeof fw.allow_ports);
  writer_init (&w, buf, sizeof buf);
  if (writer_put_bytes (&w, &fw, sizeof fw) == -1 || put_fetcher_strings (&w, c) == -1) {
    explicit_bzero (buf, sizeof buf);
    errno = E2BIG;
    return -1;
  }
  r = send_message (fd, IPC_CONFIG_FETCHER, buf, w.pos);
  explicit_bzero (buf, sizeof buf);     /* the URL, a password, cookies */
  if (r == -1)
    return -1;
  return send_message (fd, IPC_CONFIG_END, NULL, 0);
}

/* Read one configuration message of the expected type. */
static uint8_t *
recv_message (int fd, uint16_t want, uint32_t *len)
{
  struct ipc_header h;
  uint8_t *payload;

  if (ipc_recv (fd, &h, &payload, IPC_MAX_CONFIG_PAYLOAD) == -1)
    fatal_errno ("reading configuration from the supervisor");
  if (h.type != want)
    fatal ("configuration: expected message type %u, got %u", want, h.type);
  *len = h.payload_len;
  return payload;
}

/* A message that is exactly one fixed struct of size bytes, into wire. */
static void
recv_fixed (int fd, uint16_t type, void *wire, size_t size, const char *what)
{
  struct reader r;
  uint32_t len;
  uint8_t *p = recv_message (fd, type, &len);

  reader_init (&r, p, len);
  if (reader_get_bytes (&r, wire, size) == -1 || reader_end (&r) == -1)
    fatal ("configuration: bad %s message", what);
  free (p);
}

/* The end of the configuration: IPC_CONFIG_END, with nothing in it. */
static void
recv_end (int fd)
{
  uint32_t len;
  uint8_t *p = recv_message (fd, IPC_CONFIG_END, &len);

  if (len != 0)
    fatal ("configuration: bad end message");
  free (p);
}

static char *
get_string (struct reader *r, uint32_t len, uint32_t max, const char *what)
{
  char *s;

  /* Capped before the allocation, not only by reader_get_string. */
  if (len > max)
    fatal ("configuration: %s of %u bytes (at most %u)", what, len, max);
  s = malloc ((size_t) len + 1);
  if (s == NULL)
    fatal_errno ("malloc");
  if (reader_get_string (r, s, len, max) == -1)
    fatal ("configuration: bad %s", what);
  return s;
}

/* A --allow rule for one of nexports exports. */
static void
recv_access_rule (struct reader *r, uint32_t nexports, struct access_rule *a)
{
  struct access_rule_wire aw;
  bool identity;

  if (reader_get_bytes (r, &aw, sizeof aw) == -1)
    fatal ("configuration: bad access rule");
  static const uint8_t no_address[sizeof aw.addr];
  bool address;

  identity = aw.kind == ACCESS_PSK || aw.kind == ACCESS_CERT_DN || aw.kind == ACCESS_CERT_SAN;
  address = aw.kind == ACCESS_ADDRESS4 || aw.kind == ACCESS_ADDRESS6;
  if (aw.export_index >= nexports || aw.kind < ACCESS_ADDRESS4 || aw.kind > ACCESS_CERT_SAN ||
      aw.prefix > (aw.kind == ACCESS_ADDRESS4 ? 32u : address ? 128u : 0u) ||
      (aw.kind == ACCESS_ADDRESS4 && memcmp (aw.addr + 4, no_address, 12) != 0) ||
      (!address && memcmp (aw.addr, no_address, sizeof aw.addr) != 0) ||
      (identity ? aw.name_len < 1 : aw.name_len != 0))
    fatal ("configuration: bad access rule");
  a->export_index = aw.export_index;
  a->kind = aw.kind;
  a->prefix = aw.prefix;
  memcpy (a->addr, aw.addr, sizeof a->addr);
  a->name = identity ? get_string (r, aw.name_len, MAX_ACCESS_NAME, "access rule name") : NULL;
  if (reader_end (r) == -1)
    fatal ("configuration: trailing bytes in an access rule");
}

static void
recv_tls_settings (struct reader *r, struct tls_settings *t)
{
  struct tls_config_wire tw;

  if (reader_get_bytes (r, &tw, sizeof tw) == -1 ||
      (tw.mode != TLS_ON && tw.mode != TLS_REQUIRE) ||
      (tw.flags & ~(TLS_CERTIFICATES | TLS_PSK | TLS_VERIFY_PEER)) != 0 ||
      (tw.flags & (TLS_CERTIFICATES | TLS_PSK)) == 0 ||
      ((tw.flags & TLS_CERTIFICATES) != 0) != (tw.cert_len > 0) ||
      ((tw.flags & TLS_VERIFY_PEER) && tw.ca_len == 0))
    fatal ("configuration: bad TLS settings");
  t->mode = tw.mode;
  t->flags = tw.flags;
  t->priority = get_string (r, tw.priority_len, MAX_TLS_PRIORITY, "TLS priority");
  t->cert = get_string (r, tw.cert_len, MAX_TLS_FILE_SIZE, "certificate");
  t->ca = get_string (r, tw.ca_len, MAX_TLS_FILE_SIZE, "CA certificate");
  t->crl = get_string (r, tw.crl_len, MAX_TLS_FILE_SIZE, "CRL");
  t->cert_len = tw.cert_len;
  t->ca_len = tw.ca_len;
  t->crl_len = tw.crl_len;
  if (reader_end (r) == -1)
    fatal ("configuration: trailing bytes in TLS settings");
}

/* After the exports: access rules, then TLS settings, then the end. */
static void
recv_frontend_extras (int fd, struct frontend_config *c)
{
  for (;;) {
    struct ipc_header h;
    struct reader r;
    uint8_t *p;

    if (ipc_recv (fd, &h, &p, IPC_MAX_CONFIG_PAYLOAD) == -1)
      fatal_errno ("reading configuration from the supervisor");
    reader_init (&r, p, h.payload_len);
    if (h.type == IPC_CONFIG_END) {
      if (h.payload_len != 0)
        fatal ("configuration: bad end message");
      free (p);
      return;
    }
    if (h.type == IPC_CONFIG_ACCESS && c->tls.mode == TLS_OFF &&
        c->nrules < MAX_ACCESS_RULES) {
      struct access_rule *more = realloc (c->rules, (c->nrules + 1) * sizeof *more);
      if (more == NULL)
        fatal_errno ("realloc");
      c->rules = more;
      recv_access_rule (&r, c->nexports, &c->rules[c->nrules++]);
    }
    else if (h.type == IPC_CONFIG_TLS && c->tls.mode == TLS_OFF)
      recv_tls_settings (&r, &c->tls);
    else
      fatal ("configuration: unexpected message type %u", h.type);
    free (p);
  }
}

void
config_recv_frontend (int fd, struct frontend_config *c)
{
  struct frontend_config_wire fw;
  struct reader r;
  uint32_t len, i;
  uint8_t *p;

  recv_fixed (fd, IPC_CONFIG_FRONTEND, &fw, sizeof fw, "front-end");
  if (fw.nexports < 1 || fw.nexports > MAX_EXPORTS)
    fatal ("configuration: bad export count %u", fw.nexports);
  if (fw.client_memory < MIN_CLIENT_MEMORY || fw.client_memory > MAX_CLIENT_MEMORY)
    fatal ("configuration: bad client memory %u", fw.client_memory);
  if (fw.max_clients < 1 || fw.max_clients > MAX_MAX_CLIENTS)
    fatal ("configuration: bad client count %u", fw.max_clients);
  c->flags = fw.flags;
  c->handshake_timeout = fw.handshake_timeout;
  c->nlisteners = fw.nlisteners;
  c->client_memory = fw.client_memory;
  c->max_clients = fw.max_clients;
  c->nexports = fw.nexports;
  /* Until their messages come: no TLS, no rules. */
  c->tls = (struct tls_settings) { .mode = TLS_OFF };
  c->rules = NULL;
  c->nrules = 0;
  c->exports = calloc (fw.nexports, sizeof *c->exports);
  if (c->exports == NULL)
    fatal_errno ("calloc");

  for (i = 0; i < fw.nexports; i++) {
    struct export_config_wire ew;
    p = recv_message (fd, IPC_CONFIG_EXPORT, &len);
    reader_init (&r, p, len);
    if (reader_get_bytes (&r, &ew, sizeof ew) == -1)
      fatal ("configuration: bad export message");
    c->exports[i].name = get_string (&r, ew.name_len, NBD_MAX_STRING, "export name");
    c->exports[i].description =
      get_string (&r, ew.description_len, NBD_MAX_STRING, "export description");
    c->exports[i].log_url = get_string (&r, ew.log_url_len, MAX_LOG_URL_LENGTH, "export URL");
    c->exports[i].readonly = (ew.flags & EXPORT_READONLY) != 0;
    if (reader_end (&r) == -1)
      fatal ("configuration: trailing bytes in export message");
    free (p);
  }
  recv_frontend_extras (fd, c);
}

/* The strings' lengths, then the strings, each within its bound. */
static void
get_fetcher_strings (struct reader *r, uint32_t nstrings, struct fetcher_config *c)
{
  uint32_t len[FETCHER_NSTRINGS];
  unsigned i;

  if (nstrings != FETCHER_NSTRINGS || reader_get_bytes (r, len, sizeof len) == -1)
    fatal ("configuration: bad fetcher message");
  for (i = 0; i < FETCHER_NSTRINGS; i++)
    *fetcher_string (c, i) = get_string (r, len[i], fetcher_strings[i].max,
                                         fetcher_strings[i].what);
  if (c->url[0] == '\0')
    fatal ("configuration: bad fetcher parameters");
}

/* The numbers of a fetcher's configuration, checked. */
static void
get_fetcher_numbers (const struct fetcher_config_wire *fw, struct fetcher_config *c)
{
  if (fw->connections < 1 || fw->connections > MAX_CONNECTIONS)
    fatal ("configuration: bad fetcher parameters");
  if (fw->ca_bundle_len > CA_BUNDLE_MAX_BYTES)
    fatal ("configuration: CA certificates of %u bytes (at most %u)", fw->ca_bundle_len,
           CA_BUNDLE_MAX_BYTES);
  if (fw->ip_version != 0 && fw->ip_version != 4 && fw->ip_version != 6)
    fatal ("configuration: bad IP version %u", fw->ip_version);
  if (fw->tls_min != 0 && (fw->tls_min < 10 || fw->tls_min > 13))
    fatal ("configuration: bad TLS version %u", fw->tls_min);
  if (fw->http_version > FETCHER_HTTP_3ONLY)
    fatal ("configuration: bad HTTP version %u", fw->http_version);
  if (fw->readahead > READAHEAD_MAX_BYTES)
    fatal ("configuration: bad readahead store size %u", fw->readahead);
  if (fw->retries > MAX_RETRIES || fw->retry_delay_ms > RETRY_MAX_DELAY_MS)
    fatal ("configuration: bad retries (%u) or retry delay (%u ms)", fw->retries,
           fw->retry_delay_ms);
  if (fw->cache_entries != 0 && !cache_geometry_ok (fw->cache_entries, fw->cache_block_size))
    fatal ("configuration: bad cache of %u blocks of %u bytes", fw->cache_entries,
           fw->cache_block_size);
  c->flags = fw->flags;
  c->connections = fw->connections;
  c->connect_timeout = fw->connect_timeout;
  c->timeout = fw->timeout;
  c->stall_timeout = fw->stall_timeout;
  c->ca_bundle_len = fw->ca_bundle_len;
  c->ip_version = fw->ip_version;
  c->tls_min = fw->tls_min;
  c->http_version = fw->http_version;
  c->readahead = fw->readahead;
  memcpy (c->allow_ports, fw->allow_ports, sizeof c->allow_ports);
  c->retries = fw->retries;
  c->retry_delay_ms = fw->retry_delay_ms;
  c->cache_entries = fw->cache_entries;
  c->cache_block_size = fw->cache_block_size;
  c->cache_owner = fw->cache_owner;
}

void
config_recv_fetcher (int fd, struct fetcher_config *c)
{
  struct fetcher_config_wire fw;
  struct reader r;
  uint32_t len;
  uint8_t *p;

  p = recv_message (fd, IPC_CONFIG_FETCHER, &len);
  reader_init (&r, p, len);
  if (reader_get_bytes (&r, &fw, sizeof fw) == -1)
    fatal ("configuration: bad fetcher message");
  get_fetcher_numbers (&fw, c);
  get_fetcher_strings (&r, fw.nstrings, c);
  if (reader_end (&r) == -1)
    fatal ("configuration: trailing bytes in fetcher message");
  explicit_bzero (p, len);
  free (p);
  recv_end (fd);
}

int
config_send_keyholder (int fd, const struct keyholder_config *c)
{
  struct keyholder_config_wire kw = { .flags = c->flags, .cert_len = c->cert_len };
  uint8_t buf[sizeof kw + MAX_TLS_FILE_SIZE];
  struct writer w;

  writer_init (&w, buf, sizeof buf);
  if (writer_put_bytes (&w, &kw, sizeof kw) == -1 ||
      writer_put_bytes (&w, c->cert, c->cert_len) == -1) {
    errno = E2BIG;
    return -1;
  }
  if (send_message (fd, IPC_CONFIG_KEYHOLDER, buf, w.pos) == -1)
    return -1;
  return send_message (fd, IPC_CONFIG_END, NULL, 0);
}

void
config_recv_keyholder (int fd, struct keyholder_config *c)
{
  struct keyholder_config_wire kw;
  struct reader r;
  uint32_t len;
  uint8_t *p;

  p = recv_message (fd, IPC_CONFIG_KEYHOLDER, &len);
  reader_init (&r, p, len);
  if (reader_get_bytes (&r, &kw, sizeof kw) == -1 ||
      (kw.flags & ~(KEYHOLDER_KEY | KEYHOLDER_PSK | KEYHOLDER_VERBOSE |
                    KEYHOLDER_SANDBOX_DEBUG)) != 0 ||
      (kw.flags & (KEYHOLDER_KEY | KEYHOLDER_PSK)) == 0 ||
      ((kw.flags & KEYHOLDER_KEY) != 0) != (kw.cert_len > 0))
    fatal ("configuration: bad key holder message");
  c->flags = kw.flags;
  c->cert = get_string (&r, kw.cert_len, MAX_TLS_FILE_SIZE, "certificate");
  c->cert_len = kw.cert_len;
  if (reader_end (&r) == -1)
    fatal ("configuration: trailing bytes in the key holder message");
  free (p);
  recv_end (fd);
}

int
config_send_launcher (int fd, uint32_t flags)
{
  const struct launcher_config_wire lw = { .flags = flags };

  if (send_message (fd, IPC_CONFIG_LAUNCHER, &lw, sizeof lw) == -1)
    return -1;
  return send_message (fd, IPC_CONFIG_END, NULL, 0);
}

uint32_t
config_recv_launcher (int fd)
{
  struct launcher_config_wire lw;

  recv_fixed (fd, IPC_CONFIG_LAUNCHER, &lw, sizeof lw, "launcher");
  if ((lw.flags & ~(LAUNCHER_VERBOSE | LAUNCHER_SANDBOX_DEBUG)) != 0)
    fatal ("configuration: bad launcher flags");
  recv_end (fd);
  return lw.flags;
}

int
config_send_remover (int fd, const struct remover_config *c)
{
  const struct remover_config_wire rw = { .flags = c->flags, .nfiles = c->nfiles };
  uint8_t buf[sizeof rw + REMOVER_MAX_FILES * (sizeof (struct removed_file_wire) +
                                               MAX_PATH_LENGTH)];
  struct writer w;
  uint32_t i;

  writer_init (&w, buf, sizeof buf);
  if (c->nfiles > REMOVER_MAX_FILES || writer_put_bytes (&w, &rw, sizeof rw) == -1) {
    errno = E2BIG;
    return -1;
  }
  for (i = 0; i < c->nfiles; i++) {
    const struct removed_file_wire fw = {
      .dev = c->files[i].dev, .ino = c->files[i].ino,
      .path_len = (uint32_t) strlen (c->files[i].path),
    };
    if (writer_put_bytes (&w, &fw, sizeof fw) == -1 ||
        put_string (&w, c->files[i].path) == -1) {
      errno = E2BIG;
      return -1;
    }
  }
  if (send_message (fd, IPC_CONFIG_REMOVER, buf, w.pos) == -1)
    return -1;
  return send_message (fd, IPC_CONFIG_END, NULL, 0);
}

void
config_recv_remover (int fd, struct remover_config *c)
{
  struct remover_config_wire rw;
  struct reader r;
  uint32_t len, i;
  uint8_t *p = recv_message (fd, IPC_CONFIG_REMOVER, &len);

  reader_init (&r, p, len);
  if (reader_get_bytes (&r, &rw, sizeof rw) == -1 ||
      (rw.flags & ~(REMOVER_VERBOSE | REMOVER_SANDBOX_DEBUG)) != 0 ||
      rw.nfiles < 1 || rw.nfiles > REMOVER_MAX_FILES)
    fatal ("configuration: bad file remover message");
  c->flags = rw.flags;
  c->nfiles = rw.nfiles;
  for (i = 0; i < rw.nfiles; i++) {
    struct removed_file_wire fw;
    if (reader_get_bytes (&r, &fw, sizeof fw) == -1 || fw.reserved != 0 || fw.path_len < 2)
      fatal ("configuration: bad file in the file remover message");
    c->files[i].path = get_string (&r, fw.path_len, MAX_PATH_LENGTH, "path to remove");
    if (c->files[i].path[0] != '/')
      fatal ("configuration: a path to remove that is not absolute");
    c->files[i].dev = fw.dev;
    c->files[i].ino = fw.ino;
  }
  if (reader_end (&r) == -1)
    fatal ("configuration: trailing bytes in the file remover message");
  free (p);
  recv_end (fd);
}
