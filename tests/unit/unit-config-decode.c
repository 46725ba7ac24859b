/*
 * unit-config-decode.c: the children's readers of their configuration
 * (config_recv_* in src/common/config.c) against good messages, as
 * config_send_* writes them, and bad ones, TAP output.
 *
 * The supervisor is the only writer, so a reader ends the child (fatal)
 * on anything malformed: here fatal() returns to the test instead, and a
 * case says whether the reader accepted.  What a refused reader had
 * allocated is left (the child would be gone).  Every check of the
 * readers changes a verdict here but two that the bounded reader repeats:
 * a string's cap before its allocation, and a fixed struct cut short.
 */
/* config.c and ipc.c are built with malloc, calloc, realloc and free as
 * unit_malloc... (meson.build): this file's own are the real ones. */
#undef malloc
#undef calloc
#undef realloc
#undef free

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "access-rules.h"
#include "config-wire.h"
#include "config.h"
#include "cache-layout.h"
#include "data-path.h"
#include "fetcher-wire.h"
#include "ipc-messages.h"
#include "ipc.h"
#include "keyholder-wire.h"
#include "limits-ca.h"
#include "limits-nbd.h"
#include "limits-readahead.h"
#include "limits-server.h"
#include "limits-strings.h"
#include "limits-web.h"
#include "url-check-wire.h"
#include "log.h"
#include "tls-modes.h"
#include "unit.h"

static int fd;

/* The configuration structs hold char *: the tests' literals are only
 * read. */
#define TEXT(literal) ((char *) (literal))
static jmp_buf jump;

/* log.c's fatal and fatal_errno, for the readers. */
void
fatal (const char *fmt, ...)
{
  (void) fmt;
  longjmp (jump, 1);
}
void
fatal_errno (const char *fmt, ...)
{
  (void) fmt;
  longjmp (jump, 1);
}

/* ---- What the readers allocate ----
 * A reader that ends in fatal() leaves what it had allocated, as the
 * child would when it exits: it is freed before the next read, so that
 * the leak check of a valgrind run (meson test --setup valgrind) holds. */

#define MAX_BLOCKS 4096
static void *blocks[MAX_BLOCKS];
static size_t nblocks;

void *unit_malloc (size_t n);
void *unit_calloc (size_t n, size_t size);
void *unit_realloc (void *old, size_t n);
void unit_free (void *p);

static void
track (void *p)
{
  if (p == NULL)
    return;
  if (nblocks == MAX_BLOCKS)
    abort ();
  blocks[nblocks++] = p;
}

static void
untrack (void *p)
{
  size_t i;

  for (i = 0; i < nblocks; i++)
    if (blocks[i] == p) {
      blocks[i] = blocks[--nblocks];
      return;
    }
}

void *
unit_malloc (size_t n)
{
  void *p = malloc (n);
  track (p);
  return p;
}

void *
unit_calloc (size_t n, size_t size)
{
  void *p = calloc (n, size);
  track (p);
  return p;
}

void *
unit_realloc (void *old, size_t n)
{
  void *p;

  untrack (old);
  p = realloc (old, n);
  track (p != NULL ? p : old);
  return p;
}

void
unit_free (void *p)
{
  untrack (p);
  free (p);
}

static void
release_all (void)
{
  while (nblocks > 0)
    free (blocks[--nblocks]);
}

/* One message: a fixed struct a of alen bytes, then b's blen bytes. */
static void
put (uint16_t type, const void *a, size_t alen, const void *b, size_t blen)
{
  static uint8_t payload[IPC_MAX_CONFIG_PAYLOAD + 16];
  struct ipc_header h = { .type = type, .payload_len = (uint32_t) (alen + blen) };

  if (alen + blen > sizeof payload)
    abort ();
  /* The pointer tests too: GCC's -O3 clone of put for end () (NULL, 0)
   * warns of a NULL memcpy source that the lengths alone rule out. */
  if (alen > 0 && a != NULL)
    memcpy (payload, a, alen);
  if (blen > 0 && b != NULL)
    memcpy (payload + alen, b, blen);
  if (ipc_send (fd, &h, payload) == -1)
    abort ();
}

static void
end (void)
{
  put (IPC_CONFIG_END, NULL, 0, NULL, 0);
}

enum reader { FRONTEND, FETCHER, KEYHOLDER, LAUNCHER, REMOVER };
static struct frontend_config fe;
static struct fetcher_config fet;
static struct keyholder_config kh;
static struct remover_config rem;
static uint32_t launcher_flags;

/* Run one reader over what was put since the last; false if it ended in
 * fatal(). */
static bool
reads (enum reader which)
{
  volatile bool ok = false;

  release_all ();             /* the last read's: its results are checked */
  if (lseek (fd, 0, SEEK_SET) != 0)
    abort ();
  if (setjmp (jump) == 0) {
    switch (which) {
    case FRONTEND: config_recv_frontend (fd, &fe); break;
    case FETCHER: config_recv_fetcher (fd, &fet); break;
    case KEYHOLDER: config_recv_keyholder (fd, &kh); break;
    case LAUNCHER: launcher_flags = config_recv_launcher (fd); break;
    case REMOVER: config_recv_remover (fd, &rem); break;
    }
    ok = true;
  }
  if (ftruncate (fd, 0) == -1 || lseek (fd, 0, SEEK_SET) != 0)
    abort ();
  return ok;
}

/* ---- The front-end's ---- */

static const struct frontend_config_wire good_fe = {
  .nexports = 1, .client_memory = MIN_CLIENT_MEMORY, .max_clients = 1,
};

static void
put_export (uint32_t name_len, const char *bytes, size_t n)
{
  const struct export_config_wire ew = { .name_len = name_len };
  put (IPC_CONFIG_EXPORT, &ew, sizeof ew, bytes, n);
}

/* The front-end's message and one export "disk". */
static void
put_frontend (const struct frontend_config_wire *fw)
{
  put (IPC_CONFIG_FRONTEND, fw, sizeof *fw, NULL, 0);
  put_export (4, "disk", 4);
}

/* The front-end's message, n exports "disk" and the end. */
static bool
reads_frontend (const struct frontend_config_wire *fw, unsigned n)
{
  unsigned i;

  put (IPC_CONFIG_FRONTEND, fw, sizeof *fw, NULL, 0);
  for (i = 0; i < n; i++)
    put_export (4, "disk", 4);
  end ();
  return reads (FRONTEND);
}

static void
frontend_round_trip (void)
{
  struct export_info exports[2] = {
    { TEXT ("a"), TEXT ("first"), TEXT ("https://host/a.img?..."), false },
    { TEXT ("b"), TEXT (""), NULL, true } };
  struct access_rule rules[2] = {
    { .export_index = 1, .kind = ACCESS_ADDRESS4, .prefix = 8, .addr = { 10 } },
    { .export_index = 0, .kind = ACCESS_PSK, .name = TEXT ("alice") },
  };
  struct frontend_config c = {
    .flags = FRONTEND_VERBOSE, .handshake_timeout = 10, .client_memory = MIN_CLIENT_MEMORY,
    .max_clients = 3, .nexports = 2, .exports = exports, .rules = rules, .nrules = 2,
    .tls = { .mode = TLS_REQUIRE, .flags = TLS_CERTIFICATES | TLS_PSK, .priority = TEXT ("NORMAL"),
             .cert = TEXT ("CERT"), .cert_len = 4, .ca = TEXT (""),
             .crl = TEXT ("") },
  };

  CHECK (config_send_frontend (fd, &c) == 0 && reads (FRONTEND) && fe.nexports == 2 &&
         strcmp (fe.exports[0].description, "first") == 0 && fe.exports[1].readonly &&
         strcmp (fe.exports[0].log_url, "https://host/a.img?...") == 0 &&
         strcmp (fe.exports[1].log_url, "") == 0 &&
         fe.nrules == 2 && fe.rules[0].prefix == 8 && strcmp (fe.rules[1].name, "alice") == 0 &&
         fe.tls.mode == TLS_REQUIRE && fe.tls.cert_len == 4 &&
         strcmp (fe.tls.priority, "NORMAL") == 0, "front-end configuration read back");
  c.nrules = 0;
  c.tls.mode = TLS_OFF;
  CHECK (config_send_frontend (fd, &c) == 0 && reads (FRONTEND) && fe.nrules == 0 &&
         fe.tls.mode == TLS_OFF, "without rules or TLS");
}

static void
frontend_numbers (void)
{
  struct frontend_config_wire fw;

  CHECK (reads_frontend (&good_fe, 1), "smallest front-end configuration accepted");
  fw = good_fe, fw.nexports = 0;
  CHECK (!reads_frontend (&fw, 0), "no exports refused");
  fw = good_fe, fw.nexports = MAX_EXPORTS;
  CHECK (reads_frontend (&fw, MAX_EXPORTS) && fe.nexports == MAX_EXPORTS,
         "the most exports accepted");
  fw = good_fe, fw.nexports = MAX_EXPORTS + 1;
  CHECK (!reads_frontend (&fw, MAX_EXPORTS + 1), "one export over the most refused");
  fw = good_fe, fw.client_memory = MIN_CLIENT_MEMORY - 1;
  CHECK (!reads_frontend (&fw, 1), "client memory under the least refused");
  fw = good_fe, fw.client_memory = MAX_CLIENT_MEMORY + 1;
  CHECK (!reads_frontend (&fw, 1), "client memory over the most refused");
  fw = good_fe, fw.max_clients = 0;
  CHECK (!reads_frontend (&fw, 1), "no clients refused");
  fw = good_fe, fw.max_clients = MAX_MAX_CLIENTS + 1;
  CHECK (!reads_frontend (&fw, 1), "too many clients refused");

  put (IPC_CONFIG_FRONTEND, &good_fe, sizeof good_fe - 1, NULL, 0);
  CHECK (!reads (FRONTEND), "short front-end message refused");
  put (IPC_CONFIG_FRONTEND, &good_fe, sizeof good_fe, "x", 1);
  CHECK (!reads (FRONTEND), "front-end message with a trailing byte refused");
  put (IPC_CONFIG_FETCHER, &good_fe, sizeof good_fe, NULL, 0);
  CHECK (!reads (FRONTEND), "another type first refused");
  put (IPC_CONFIG_FRONTEND, &good_fe, sizeof good_fe, NULL, 0);
  CHECK (!reads (FRONTEND), "end of file before the export refused");
}

static void
frontend_exports (void)
{
  static char longest[NBD_MAX_STRING + 1];
  struct export_config_wire ew = { .name_len = 1, .description_len = 2 };

  put (IPC_CONFIG_FRONTEND, &good_fe, sizeof good_fe, NULL, 0);
  put_export (100, "disk", 4);
  end ();
  CHECK (!reads (FRONTEND), "export name past the end refused");
  put (IPC_CONFIG_FRONTEND, &good_fe, sizeof good_fe, NULL, 0);
  put_export (2, "disk", 4);
  end ();
  CHECK (!reads (FRONTEND), "export message with trailing bytes refused");
  put (IPC_CONFIG_FRONTEND, &good_fe, sizeof good_fe, NULL, 0);
  put_export (4, "d\0sk", 4);
  end ();
  CHECK (!reads (FRONTEND), "NUL in an export name refused");
  memset (longest, 'n', sizeof longest);
  put (IPC_CONFIG_FRONTEND, &good_fe, sizeof good_fe, NULL, 0);
  put_export (NBD_MAX_STRING, longest, NBD_MAX_STRING);
  end ();
  CHECK (reads (FRONTEND) && strlen (fe.exports[0].name) == NBD_MAX_STRING,
         "longest export name accepted");
  put (IPC_CONFIG_FRONTEND, &good_fe, sizeof good_fe, NULL, 0);
  put_export (NBD_MAX_STRING + 1, longest, NBD_MAX_STRING + 1);
  end ();
  CHECK (!reads (FRONTEND), "export name over the limit refused");
  put (IPC_CONFIG_FRONTEND, &good_fe, sizeof good_fe, NULL, 0);
  put (IPC_CONFIG_EXPORT, &ew, sizeof ew, "abc", 3);
  end ();
  CHECK (reads (FRONTEND) && strcmp (fe.exports[0].name, "a") == 0 &&
         strcmp (fe.exports[0].description, "bc") == 0, "name and description");
  put (IPC_CONFIG_FRONTEND, &good_fe, sizeof good_fe, NULL, 0);
  put (IPC_CONFIG_EXPORT, &ew, sizeof ew - 1, NULL, 0);
  end ();
  CHECK (!reads (FRONTEND), "short export message refused");
  {
    struct export_config_wire lw = { .name_len = 1, .log_url_len = MAX_LOG_URL_LENGTH + 1 };
    put (IPC_CONFIG_FRONTEND, &good_fe, sizeof good_fe, NULL, 0);
    put (IPC_CONFIG_EXPORT, &lw, sizeof lw, "a", 1);
    end ();
    CHECK (!reads (FRONTEND), "export URL over the limit refused");
  }
}

/* One message of type after the front-end's message and its export, and
 * the end: its struct w, then bytes. */
static bool
reads_after_export (uint16_t type, const void *w, size_t wlen, const char *bytes, size_t n)
{
  put_frontend (&good_fe);
  put (type, w, wlen, bytes, n);
  end ();
  return reads (FRONTEND);
}

/* An access rule, its name after it. */
static bool
reads_rule (const struct access_rule_wire *aw, const char *name, size_t n)
{
  return reads_after_export (IPC_CONFIG_ACCESS, aw, sizeof *aw, name, n);
}

/* Rules each with one thing wrong, and their names' bytes. */
#define RULE_V4 .kind = ACCESS_ADDRESS4, .prefix = 32, .addr = { 1, 2, 3, 4 }
static const struct {
  struct access_rule_wire aw;
  const char *name;
  size_t n;
  const char *what;
} bad_rules[] = {
  { { RULE_V4, .export_index = 1 }, NULL, 0, "rule for an export that is not refused" },
  { { .kind = 0 }, NULL, 0, "rule kind 0 refused" },
  { { .kind = ACCESS_CERT_SAN + 1 }, NULL, 0, "unknown rule kind refused" },
  { { .kind = ACCESS_ADDRESS4, .prefix = 33 }, NULL, 0, "IPv4 prefix over 32 refused" },
  { { .kind = ACCESS_ADDRESS6, .prefix = 129 }, NULL, 0, "IPv6 prefix over 128 refused" },
  { { .kind = ACCESS_UNIX, .prefix = 1 }, NULL, 0,
    "prefix for a rule without an address refused" },
  { { .kind = ACCESS_ADDRESS4, .addr = { [4] = 1 } }, NULL, 0,
    "IPv4 address longer than 4 bytes refused" },
  { { .kind = ACCESS_CERT_DN, .name_len = 4, .addr = { 1 } }, "CN=a", 4,
    "address in a certificate rule refused" },
  { { .kind = ACCESS_CERT_DN }, NULL, 0, "certificate rule without a name refused" },
  { { RULE_V4, .name_len = 1 }, "x", 1, "address rule with a name refused" },
  { { RULE_V4 }, "x", 1, "rule with a trailing byte refused" },
  { { .kind = ACCESS_CERT_DN, .name_len = 5 }, "CN=a", 4, "rule name past the end refused" },
  { { .kind = ACCESS_CERT_DN, .name_len = 4 }, "CN\0a", 4, "NUL in a rule name refused" },
};
#undef RULE_V4

static void
frontend_rules (void)
{
  const struct access_rule_wire v4 = { .kind = ACCESS_ADDRESS4, .prefix = 32, .addr = { 1, 2, 3, 4 } };
  const struct access_rule_wire v6 = { .kind = ACCESS_ADDRESS6, .prefix = 128, .addr = { [15] = 1 } };
  const struct access_rule_wire dn = { .kind = ACCESS_CERT_DN, .name_len = 4 };
  const struct access_rule_wire unix_rule = { .kind = ACCESS_UNIX };
  unsigned i;
  size_t r;

  CHECK (reads_rule (&v4, NULL, 0) && fe.nrules == 1 && fe.rules[0].addr[3] == 4 &&
         fe.rules[0].name == NULL, "IPv4 rule accepted");
  CHECK (reads_rule (&v6, NULL, 0) && fe.rules[0].prefix == 128, "IPv6 rule accepted");
  CHECK (reads_rule (&dn, "CN=a", 4) && strcmp (fe.rules[0].name, "CN=a") == 0,
         "certificate rule accepted");
  CHECK (reads_rule (&unix_rule, NULL, 0), "Unix socket rule accepted");
  for (r = 0; r < sizeof bad_rules / sizeof bad_rules[0]; r++)
    CHECK (!reads_rule (&bad_rules[r].aw, bad_rules[r].name, bad_rules[r].n),
           bad_rules[r].what);

  put_frontend (&good_fe);
  for (i = 0; i < MAX_ACCESS_RULES; i++)
    put (IPC_CONFIG_ACCESS, &unix_rule, sizeof unix_rule, NULL, 0);
  end ();
  CHECK (reads (FRONTEND) && fe.nrules == MAX_ACCESS_RULES, "the most rules accepted");
  put_frontend (&good_fe);
  for (i = 0; i <= MAX_ACCESS_RULES; i++)
    put (IPC_CONFIG_ACCESS, &unix_rule, sizeof unix_rule, NULL, 0);
  end ();
  CHECK (!reads (FRONTEND), "one rule over the most refused");
}

/* TLS settings, their strings in bytes, the priority's first. */
static bool
reads_tls (const struct tls_config_wire *tw, const char *bytes, size_t n)
{
  return reads_after_export (IPC_CONFIG_TLS, tw, sizeof *tw, bytes, n);
}

/* TLS settings each with one thing wrong, and their strings' bytes. */
static const struct {
  struct tls_config_wire tw;
  const char *bytes;
  size_t n;
  const char *what;
} bad_tls[] = {
  { { .mode = TLS_OFF, .flags = TLS_PSK }, NULL, 0, "TLS settings of TLS off refused" },
  { { .mode = TLS_REQUIRE + 1, .flags = TLS_PSK }, NULL, 0, "unknown TLS mode refused" },
  { { .mode = TLS_ON, .flags = TLS_PSK | (1u << 3) }, NULL, 0, "unknown TLS flag refused" },
  { { .mode = TLS_ON }, NULL, 0, "neither certificates nor PSK refused" },
  { { .mode = TLS_ON, .flags = TLS_CERTIFICATES }, NULL, 0,
    "certificates without a chain refused" },
  { { .mode = TLS_ON, .flags = TLS_PSK, .cert_len = 4 }, "CERT", 4,
    "a chain without certificates refused" },
  { { .mode = TLS_ON, .flags = TLS_CERTIFICATES | TLS_VERIFY_PEER, .cert_len = 4 }, "CERT", 4,
    "verifying peers without a CA refused" },
  { { .mode = TLS_ON, .flags = TLS_CERTIFICATES, .cert_len = 4 }, "CERTS", 5,
    "TLS settings with a trailing byte refused" },
  { { .mode = TLS_ON, .flags = TLS_CERTIFICATES, .cert_len = 4 }, "CER", 3,
    "chain past the end refused" },
  { { .mode = TLS_ON, .flags = TLS_PSK, .priority_len = MAX_TLS_PRIORITY + 1 }, NULL, 0,
    "priority over the limit refused" },
};

static void
frontend_tls (void)
{
  const struct tls_config_wire cert = { .mode = TLS_ON, .flags = TLS_CERTIFICATES, .cert_len = 4 };
  const struct tls_config_wire psk = { .mode = TLS_REQUIRE, .flags = TLS_PSK };
  const struct access_rule_wire unix_rule = { .kind = ACCESS_UNIX };
  struct tls_config_wire tw;
  size_t i;

  CHECK (reads_tls (&cert, "CERT", 4) && fe.tls.mode == TLS_ON &&
         strcmp (fe.tls.cert, "CERT") == 0, "certificate settings accepted");
  CHECK (reads_tls (&psk, NULL, 0) && fe.tls.flags == TLS_PSK, "PSK settings accepted");
  tw = cert, tw.flags |= TLS_VERIFY_PEER, tw.ca_len = 2, tw.crl_len = 1, tw.priority_len = 1;
  CHECK (reads_tls (&tw, "PCERTCAL", 8) && strcmp (fe.tls.priority, "P") == 0 &&
         strcmp (fe.tls.ca, "CA") == 0 && strcmp (fe.tls.crl, "L") == 0,
         "every string where its length says");
  for (i = 0; i < sizeof bad_tls / sizeof bad_tls[0]; i++)
    CHECK (!reads_tls (&bad_tls[i].tw, bad_tls[i].bytes, bad_tls[i].n), bad_tls[i].what);

  put_frontend (&good_fe);
  put (IPC_CONFIG_TLS, &psk, sizeof psk, NULL, 0);
  put (IPC_CONFIG_TLS, &psk, sizeof psk, NULL, 0);
  end ();
  CHECK (!reads (FRONTEND), "TLS settings twice refused");
  put_frontend (&good_fe);
  put (IPC_CONFIG_TLS, &psk, sizeof psk, NULL, 0);
  put (IPC_CONFIG_ACCESS, &unix_rule, sizeof unix_rule, NULL, 0);
  end ();
  CHECK (!reads (FRONTEND), "a rule after the TLS settings refused");
  put_frontend (&good_fe);
  put (IPC_CONFIG_EXPORT, &psk, sizeof psk, NULL, 0);
  end ();
  CHECK (!reads (FRONTEND), "an export more than counted refused");
  put_frontend (&good_fe);
  put (0x7777, NULL, 0, NULL, 0);
  CHECK (!reads (FRONTEND), "unknown type refused");
  put_frontend (&good_fe);
  put (IPC_CONFIG_END, "x", 1, NULL, 0);
  CHECK (!reads (FRONTEND), "end message with a payload refused");
  put_frontend (&good_fe);
  CHECK (!reads (FRONTEND), "end of file before the end message refused");
}

/* ---- A fetcher's ---- */

static const struct fetcher_config_wire good_fet = {
  .connections = 1, .nstrings = FETCHER_NSTRINGS,
};
#define URL "http://host/disk"

/* The fetcher's message: fw, the strings' lengths (the URL's first, every
 * other 0 but string `other`, of other_len), then bytes. */
static void
put_fetcher (const struct fetcher_config_wire *fw, uint32_t url_len, unsigned other,
             uint32_t other_len, const void *bytes, size_t n)
{
  uint8_t payload[sizeof *fw + FETCHER_NSTRINGS * sizeof (uint32_t) + 64 * 1024];
  uint32_t len[FETCHER_NSTRINGS] = { url_len };

  if (n > 64 * 1024)
    abort ();
  if (other > 0)
    len[other] = other_len;
  memcpy (payload, fw, sizeof *fw);
  memcpy (payload + sizeof *fw, len, sizeof len);
  if (n > 0)
    memcpy (payload + sizeof *fw + sizeof len, bytes, n);
  put (IPC_CONFIG_FETCHER, payload, sizeof *fw + sizeof len + n, NULL, 0);
}

static bool
reads_fetcher (const struct fetcher_config_wire *fw)
{
  put_fetcher (fw, strlen (URL), 0, 0, URL, strlen (URL));
  end ();
  return reads (FETCHER);
}

static void
fetcher_round_trip (void)
{
  struct fetcher_config c = { .connections = 4, .ip_version = 6, .tls_min = 12,
                              .retries = 3, .readahead = 4096, .allow_ports = { 8080 } };
  unsigned i;

  for (i = 0; i < FETCHER_NSTRINGS; i++)
    *fetcher_string (&c, i) = TEXT ("");
  c.url = TEXT (URL);
  c.cookie = TEXT ("a=b");
  CHECK (config_send_fetcher (fd, &c) == 0 && reads (FETCHER) && fet.connections == 4 &&
         fet.ip_version == 6 && fet.tls_min == 12 && fet.retries == 3 &&
         fet.readahead == 4096 && fet.allow_ports[0] == 8080 && strcmp (fet.url, URL) == 0 &&
         strcmp (fet.cookie, "a=b") == 0 && fet.proxy[0] == '\0',
         "fetcher configuration read back");
}

static void
fetcher_numbers (void)
{
  struct fetcher_config_wire fw;

  CHECK (reads_fetcher (&good_fet), "smallest fetcher configuration accepted");
#define REFUSED(field, value, name) \
  fw = good_fet, fw.field = (value); CHECK (!reads_fetcher (&fw), name)
  REFUSED (connections, 0, "no connections refused");
  REFUSED (connections, MAX_CONNECTIONS + 1, "too many connections refused");
  REFUSED (ca_bundle_len, CA_BUNDLE_MAX_BYTES + 1, "CA bundle over the limit refused");
  REFUSED (ip_version, 5, "IP version 5 refused");
  REFUSED (tls_min, 9, "TLS version under 1.0 refused");
  REFUSED (tls_min, 14, "TLS version over 1.3 refused");
  REFUSED (http_version, FETCHER_HTTP_3ONLY + 1, "unknown HTTP version refused");
  REFUSED (readahead, READAHEAD_MAX_BYTES + 1, "readahead over the limit refused");
  REFUSED (retries, MAX_RETRIES + 1, "too many retries refused");
  REFUSED (retry_delay_ms, RETRY_MAX_DELAY_MS + 1, "retry delay over the limit refused");
  fw = good_fet, fw.cache_entries = CACHE_WAYS, fw.cache_block_size = CACHE_DEFAULT_BLOCK_SIZE;
  CHECK (reads_fetcher (&fw), "a cache of one set accepted");
  fw.cache_entries = CACHE_WAYS + 1;
  CHECK (!reads_fetcher (&fw), "a cache of part of a set refused");
  fw.cache_entries = CACHE_WAYS, fw.cache_block_size = CACHE_DEFAULT_BLOCK_SIZE + 4096;
  CHECK (!reads_fetcher (&fw), "a cache block size not a power of two refused");
  fw.cache_block_size = CACHE_MAX_BLOCK_SIZE * 2;
  CHECK (!reads_fetcher (&fw), "a cache block over the limit refused");
  fw.cache_block_size = CACHE_MAX_BLOCK_SIZE, fw.cache_entries = UINT32_MAX / CACHE_WAYS * CACHE_WAYS;
  CHECK (!reads_fetcher (&fw), "a cache over CACHE_MAX_BYTES refused");
  REFUSED (nstrings, FETCHER_NSTRINGS - 1, "one string fewer refused");
  REFUSED (nstrings, FETCHER_NSTRINGS + 1, "one string more refused");
#undef REFUSED
  fw = good_fet, fw.ip_version = 4, fw.tls_min = 13, fw.http_version = FETCHER_HTTP_3ONLY,
    fw.readahead = READAHEAD_MAX_BYTES, fw.retries = MAX_RETRIES,
    fw.retry_delay_ms = RETRY_MAX_DELAY_MS, fw.ca_bundle_len = CA_BUNDLE_MAX_BYTES,
    fw.connections = MAX_CONNECTIONS;
  CHECK (reads_fetcher (&fw), "every number at its limit accepted");
}

static void
fetcher_strings_checked (void)
{
  /* The URL, then an export name one byte over the limit. */
  static char longest[sizeof URL - 1 + NBD_MAX_STRING + 1];

  put_fetcher (&good_fet, 0, 0, 0, NULL, 0);
  end ();
  CHECK (!reads (FETCHER), "empty URL refused");
  put_fetcher (&good_fet, strlen (URL) + 1, 0, 0, URL, strlen (URL));
  end ();
  CHECK (!reads (FETCHER), "URL past the end refused");
  put_fetcher (&good_fet, strlen (URL), 0, 0, URL "x", strlen (URL) + 1);
  end ();
  CHECK (!reads (FETCHER), "trailing byte refused");
  put_fetcher (&good_fet, 4, 0, 0, "ht\0p", 4);
  end ();
  CHECK (!reads (FETCHER), "NUL in the URL refused");
  memcpy (longest, URL, strlen (URL));
  memset (longest + strlen (URL), 'n', sizeof longest - strlen (URL));
  put_fetcher (&good_fet, strlen (URL), 1, NBD_MAX_STRING, longest, strlen (URL) + NBD_MAX_STRING);
  end ();
  CHECK (reads (FETCHER) && strlen (fet.export_name) == NBD_MAX_STRING,
         "longest export name accepted");
  put_fetcher (&good_fet, strlen (URL), 1, NBD_MAX_STRING + 1, longest,
               strlen (URL) + NBD_MAX_STRING + 1);
  end ();
  CHECK (!reads (FETCHER), "export name over the limit refused");
  put_fetcher (&good_fet, strlen (URL), 1, UINT32_MAX, URL, strlen (URL));
  end ();
  CHECK (!reads (FETCHER), "string length 2^32-1 refused");
  put (IPC_CONFIG_FETCHER, &good_fet, sizeof good_fet, NULL, 0);
  end ();
  CHECK (!reads (FETCHER), "no string lengths refused");
  put (IPC_CONFIG_FETCHER, &good_fet, sizeof good_fet - 1, NULL, 0);
  CHECK (!reads (FETCHER), "short fetcher message refused");
  put_fetcher (&good_fet, strlen (URL), 0, 0, URL, strlen (URL));
  CHECK (!reads (FETCHER), "end of file before the end message refused");
  put_fetcher (&good_fet, strlen (URL), 0, 0, URL, strlen (URL));
  put (IPC_CONFIG_END, "x", 1, NULL, 0);
  CHECK (!reads (FETCHER), "end message with a payload refused");
  put_fetcher (&good_fet, strlen (URL), 0, 0, URL, strlen (URL));
  put (IPC_CONFIG_FRONTEND, NULL, 0, NULL, 0);
  CHECK (!reads (FETCHER), "another type in place of the end refused");
}

/* ---- The key holder's, the launcher's, the file remover's ---- */

static bool
reads_keyholder (uint32_t flags, uint32_t cert_len, const char *cert, size_t n)
{
  const struct keyholder_config_wire kw = { .flags = flags, .cert_len = cert_len };

  put (IPC_CONFIG_KEYHOLDER, &kw, sizeof kw, cert, n);
  end ();
  return reads (KEYHOLDER);
}

static void
keyholder (void)
{
  const struct keyholder_config c = { .flags = KEYHOLDER_KEY | KEYHOLDER_VERBOSE,
                                      .cert = TEXT ("CERT"), .cert_len = 4 };

  CHECK (config_send_keyholder (fd, &c) == 0 && reads (KEYHOLDER) &&
         kh.flags == (KEYHOLDER_KEY | KEYHOLDER_VERBOSE) && strcmp (kh.cert, "CERT") == 0,
         "key holder configuration read back");
  CHECK (reads_keyholder (KEYHOLDER_PSK | KEYHOLDER_SANDBOX_DEBUG, 0, NULL, 0) &&
         kh.cert[0] == '\0', "PSK only accepted");
  CHECK (!reads_keyholder (KEYHOLDER_PSK | (1u << 4), 0, NULL, 0), "unknown flag refused");
  CHECK (!reads_keyholder (KEYHOLDER_VERBOSE, 0, NULL, 0), "neither key nor PSK refused");
  CHECK (!reads_keyholder (KEYHOLDER_KEY, 0, NULL, 0), "key without a chain refused");
  CHECK (!reads_keyholder (KEYHOLDER_PSK, 4, "CERT", 4), "chain without a key refused");
  CHECK (!reads_keyholder (KEYHOLDER_KEY, 4, "CERTS", 5), "trailing byte refused");
  CHECK (!reads_keyholder (KEYHOLDER_KEY, 5, "CERT", 4), "chain past the end refused");
  CHECK (!reads_keyholder (KEYHOLDER_KEY, MAX_TLS_FILE_SIZE + 1, "CERT", 4),
         "chain over the limit refused");
}

static void
launcher (void)
{
  struct launcher_config_wire lw = { .flags = LAUNCHER_VERBOSE | LAUNCHER_SANDBOX_DEBUG };

  CHECK (config_send_launcher (fd, LAUNCHER_SANDBOX_DEBUG) == 0 && reads (LAUNCHER) &&
         launcher_flags == LAUNCHER_SANDBOX_DEBUG, "launcher configuration read back");
  put (IPC_CONFIG_LAUNCHER, &lw, sizeof lw, NULL, 0);
  end ();
  CHECK (reads (LAUNCHER) && launcher_flags == lw.flags, "every launcher flag accepted");
  lw.flags = 1u << 2;
  put (IPC_CONFIG_LAUNCHER, &lw, sizeof lw, NULL, 0);
  end ();
  CHECK (!reads (LAUNCHER), "unknown launcher flag refused");
  put (IPC_CONFIG_LAUNCHER, &lw, sizeof lw - 1, NULL, 0);
  end ();
  CHECK (!reads (LAUNCHER), "short launcher message refused");
  lw.flags = 0;
  put (IPC_CONFIG_LAUNCHER, &lw, sizeof lw, "x", 1);
  end ();
  CHECK (!reads (LAUNCHER), "launcher message with a trailing byte refused");
  put (IPC_CONFIG_LAUNCHER, &lw, sizeof lw, NULL, 0);
  CHECK (!reads (LAUNCHER), "end of file before the end message refused");
}

/* The file remover's message with nfiles files, each a path of path_len
 * bytes from path. */
static bool
reads_remover (uint32_t flags, uint32_t nfiles, unsigned count, uint32_t reserved,
               uint32_t path_len, const char *path)
{
  uint8_t payload[sizeof (struct remover_config_wire) +
                  REMOVER_MAX_FILES * 2 * (sizeof (struct removed_file_wire) + 64)];
  const struct remover_config_wire rw = { .flags = flags, .nfiles = nfiles };
  const struct removed_file_wire f = { .dev = 1, .ino = 2, .path_len = path_len,
                                       .reserved = reserved };
  size_t pos = sizeof rw, n = strlen (path);
  unsigned i;

  memcpy (payload, &rw, sizeof rw);
  for (i = 0; i < count; i++) {
    memcpy (payload + pos, &f, sizeof f);
    memcpy (payload + pos + sizeof f, path, n);
    pos += sizeof f + n;
  }
  put (IPC_CONFIG_REMOVER, payload, pos, NULL, 0);
  end ();
  return reads (REMOVER);
}

static void
remover (void)
{
  const struct remover_config c = { .flags = REMOVER_VERBOSE, .nfiles = 2,
    .files = { { TEXT ("/run/a.sock"), 3, 4 }, { TEXT ("/run/a.pid"), 5, 6 } } };

  CHECK (config_send_remover (fd, &c) == 0 && reads (REMOVER) && rem.nfiles == 2 &&
         strcmp (rem.files[1].path, "/run/a.pid") == 0 && rem.files[1].ino == 6,
         "file remover configuration read back");
  CHECK (reads_remover (REMOVER_SANDBOX_DEBUG, 1, 1, 0, 2, "/a"), "shortest path accepted");
  CHECK (!reads_remover (1u << 2, 1, 1, 0, 2, "/a"), "unknown flag refused");
  CHECK (!reads_remover (0, 0, 0, 0, 2, "/a"), "no files refused");
  CHECK (!reads_remover (0, REMOVER_MAX_FILES + 1, REMOVER_MAX_FILES + 1, 0, 2, "/a"),
         "too many files refused");
  CHECK (!reads_remover (0, 1, 1, 1, 2, "/a"), "reserved field refused");
  CHECK (!reads_remover (0, 1, 1, 0, 1, "/"), "path of one byte refused");
  CHECK (!reads_remover (0, 1, 1, 0, 2, "a/"), "relative path refused");
  CHECK (!reads_remover (0, 1, 1, 0, 3, "/a"), "path past the end refused");
  CHECK (!reads_remover (0, 1, 2, 0, 2, "/a"), "a file more than counted refused");
  CHECK (!reads_remover (0, 2, 1, 0, 2, "/a"), "a file fewer than counted refused");
  CHECK (!reads_remover (0, 1, 1, 0, MAX_PATH_LENGTH + 1, "/a"), "path over the limit refused");
  CHECK (!reads_remover (0, 1, 1, 0, 2, "/\0"), "NUL in a path refused");
}

int
main (void)
{
  fd = memfd_create ("unit-config-decode", MFD_CLOEXEC);
  if (fd == -1) {
    printf ("Bail out! memfd_create\n");
    return 1;
  }
  frontend_round_trip ();
  frontend_numbers ();
  frontend_exports ();
  frontend_rules ();
  frontend_tls ();
  fetcher_round_trip ();
  fetcher_numbers ();
  fetcher_strings_checked ();
  keyholder ();
  launcher ();
  remover ();
  release_all ();
  close (fd);
  return UNIT_END ();
}
