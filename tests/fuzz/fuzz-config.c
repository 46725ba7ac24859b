/*
 * fuzz-config: the children's configuration readers (config.c):
 * config_recv_frontend and config_recv_fetcher, reading the messages the
 * supervisor writes on CHILD_FD_CONFIG.
 *
 * The supervisor is the only writer, so a malformed configuration is
 * fatal (the child exits) by design; fatal() returns here.  Input: a byte
 * choosing the reader, then the stream.
 *
 * Checked: what a reader accepts is within every documented bound, and
 * survives a round trip: written back by config_send_* and read again, it
 * is the same configuration.  Run with ASAN_OPTIONS=detect_leaks=0: a reader that
 * ends in fatal() leaves its allocations (the process would be gone),
 * and libFuzzer would leak-check every such input, slowly.
 */
#include <string.h>
#include <unistd.h>

#include "access-rules.h"
#include "config.h"
#include "data-path.h"
#include "fetcher-wire.h"
#include "fuzz.h"
#include "ipc-messages.h"
#include "limits-ca.h"
#include "limits-nbd.h"
#include "limits-readahead.h"
#include "limits-server.h"
#include "limits-web.h"
#include "tls-modes.h"

static int fd_in = -1, fd_out = -1;

/* Run one reader; false if it ended in fatal(). */
static bool
read_config (bool fetcher_config, void *c)
{
  jmp_buf jump;
  volatile bool ok = false;

  fuzz_exit_jump = &jump;
  if (setjmp (jump) == 0) {
    if (fetcher_config)
      config_recv_fetcher (fd_in, c);
    else
      config_recv_frontend (fd_in, c);
    ok = true;
  }
  fuzz_exit_jump = NULL;
  return ok;
}

/* What config_send_* wrote to fd_out becomes the next input. */
static void
rewind_output (void)
{
  off_t end = lseek (fd_out, 0, SEEK_CUR);
  static uint8_t buf[2 * IPC_MAX_CONFIG_PAYLOAD * 2];
  FUZZ_CHECK (end >= 0 && (size_t) end <= sizeof buf &&
              pread (fd_out, buf, (size_t) end, 0) == end, "configuration written");
  fuzz_memfd_fill (fd_in, buf, (size_t) end);
}

/* Send an accepted configuration `sent` the way the supervisor does and
 * read it back into `back`, as its child would: both must work. */
static void
round_trip (bool fetcher_config, const void *sent, void *back)
{
  fuzz_memfd_fill (fd_out, NULL, 0);
  FUZZ_CHECK ((fetcher_config ? config_send_fetcher (fd_out, sent)
                              : config_send_frontend (fd_out, sent)) == 0,
              "an accepted configuration cannot be sent");
  rewind_output ();
  FUZZ_CHECK (read_config (fetcher_config, back),
              "a configuration sent cannot be read back");
}

static void
check_string (const char *s, size_t max, const char *what)
{
  FUZZ_CHECK (s != NULL && strlen (s) <= max, "%s of %zu bytes", what, s ? strlen (s) : 0);
}

static void
frontend (void)
{
  struct frontend_config a, b;
  uint32_t i;

  if (!read_config (false, &a))
    return;
  FUZZ_CHECK (a.nexports >= 1 && a.nexports <= MAX_EXPORTS && a.exports != NULL,
              "%u exports", a.nexports);
  FUZZ_CHECK (a.client_memory >= MIN_CLIENT_MEMORY && a.client_memory <= MAX_CLIENT_MEMORY,
              "client memory %u", a.client_memory);
  FUZZ_CHECK (a.max_clients >= 1 && a.max_clients <= MAX_MAX_CLIENTS, "%u clients",
              a.max_clients);
  for (i = 0; i < a.nexports; i++) {
    check_string (a.exports[i].name, NBD_MAX_STRING, "export name");
    check_string (a.exports[i].description, NBD_MAX_STRING, "export description");
  }
  FUZZ_CHECK (a.nrules <= MAX_ACCESS_RULES, "%u access rules", a.nrules);
  for (i = 0; i < a.nrules; i++) {
    const struct access_rule *r = &a.rules[i];
    bool identity = r->kind == ACCESS_PSK || r->kind == ACCESS_CERT_DN ||
                    r->kind == ACCESS_CERT_SAN;
    FUZZ_CHECK (r->export_index < a.nexports && r->kind >= ACCESS_ADDRESS4 &&
                r->kind <= ACCESS_CERT_SAN &&
                r->prefix <= (r->kind == ACCESS_ADDRESS4 ? 32u :
                              r->kind == ACCESS_ADDRESS6 ? 128u : 0u) &&
                (identity ? r->name != NULL && r->name[0] != '\0' : r->name == NULL),
                "access rule %u: export %u, kind %u, prefix %u", i, r->export_index,
                r->kind, r->prefix);
    if (identity)
      check_string (r->name, MAX_ACCESS_NAME, "access rule name");
  }
  if (a.tls.mode != TLS_OFF) {
    FUZZ_CHECK (a.tls.mode == TLS_ON || a.tls.mode == TLS_REQUIRE, "TLS mode %u", a.tls.mode);
    FUZZ_CHECK ((a.tls.flags & (TLS_CERTIFICATES | TLS_PSK)) != 0 &&
                ((a.tls.flags & TLS_CERTIFICATES) != 0) == (a.tls.cert_len > 0) &&
                (!(a.tls.flags & TLS_VERIFY_PEER) || a.tls.ca_len > 0),
                "TLS flags 0x%x with a %u-byte chain and a %u-byte CA", a.tls.flags,
                a.tls.cert_len, a.tls.ca_len);
    check_string (a.tls.priority, MAX_TLS_PRIORITY, "TLS priority");
    FUZZ_CHECK (a.tls.cert_len <= MAX_TLS_FILE_SIZE && a.tls.ca_len <= MAX_TLS_FILE_SIZE &&
                a.tls.crl_len <= MAX_TLS_FILE_SIZE, "TLS file sizes");
  }
  round_trip (false, &a, &b);
  FUZZ_CHECK (a.flags == b.flags && a.handshake_timeout == b.handshake_timeout &&
              a.nlisteners == b.nlisteners && a.client_memory == b.client_memory &&
              a.max_clients == b.max_clients && a.nexports == b.nexports &&
              a.nrules == b.nrules && a.tls.mode == b.tls.mode,
              "configuration changed in a round trip");
  for (i = 0; i < a.nrules; i++)
    FUZZ_CHECK (a.rules[i].export_index == b.rules[i].export_index &&
                a.rules[i].kind == b.rules[i].kind && a.rules[i].prefix == b.rules[i].prefix &&
                memcmp (a.rules[i].addr, b.rules[i].addr, sizeof a.rules[i].addr) == 0 &&
                (a.rules[i].name == NULL) == (b.rules[i].name == NULL) &&
                (a.rules[i].name == NULL || strcmp (a.rules[i].name, b.rules[i].name) == 0),
                "access rule %u changed in a round trip", i);
  if (a.tls.mode != TLS_OFF)
    FUZZ_CHECK (a.tls.flags == b.tls.flags && strcmp (a.tls.priority, b.tls.priority) == 0 &&
                a.tls.cert_len == b.tls.cert_len && a.tls.ca_len == b.tls.ca_len &&
                a.tls.crl_len == b.tls.crl_len &&
                memcmp (a.tls.cert, b.tls.cert, a.tls.cert_len) == 0 &&
                memcmp (a.tls.ca, b.tls.ca, a.tls.ca_len) == 0 &&
                memcmp (a.tls.crl, b.tls.crl, a.tls.crl_len) == 0,
                "TLS settings changed in a round trip");
  for (i = 0; i < a.nexports; i++) {
    FUZZ_CHECK (strcmp (a.exports[i].name, b.exports[i].name) == 0 &&
                strcmp (a.exports[i].description, b.exports[i].description) == 0 &&
                a.exports[i].readonly == b.exports[i].readonly,
                "export %u changed in a round trip", i);
    free (a.exports[i].name);
    free (a.exports[i].description);
    free (b.exports[i].name);
    free (b.exports[i].description);
  }
  free (a.exports);
  free (b.exports);
}

static void
fetcher (void)
{
  struct fetcher_config a, b;
  unsigned i;

  if (!read_config (true, &a))
    return;
  FUZZ_CHECK (a.connections >= 1 && a.connections <= MAX_CONNECTIONS, "%u connections",
              a.connections);
  FUZZ_CHECK (a.url[0] != '\0', "empty URL");
  FUZZ_CHECK (a.retries <= MAX_RETRIES && a.retry_delay_ms <= RETRY_MAX_DELAY_MS,
              "%u retries, a delay of %u ms", a.retries, a.retry_delay_ms);
  for (i = 0; i < FETCHER_NSTRINGS; i++)
    check_string (*fetcher_string (&a, i), fetcher_strings[i].max, fetcher_strings[i].what);
  round_trip (true, &a, &b);
  FUZZ_CHECK (a.flags == b.flags && a.connections == b.connections &&
              a.connect_timeout == b.connect_timeout && a.timeout == b.timeout &&
              a.stall_timeout == b.stall_timeout && a.ip_version == b.ip_version &&
              a.tls_min == b.tls_min && a.http_version == b.http_version &&
              a.http_version <= FETCHER_HTTP_3ONLY && a.retries == b.retries &&
              a.retry_delay_ms == b.retry_delay_ms &&
              a.readahead == b.readahead && a.readahead <= READAHEAD_MAX_BYTES &&
              a.ca_bundle_len == b.ca_bundle_len && a.ca_bundle_len <= CA_BUNDLE_MAX_BYTES &&
              memcmp (a.allow_ports, b.allow_ports, sizeof a.allow_ports) == 0,
              "configuration changed in a round trip");
  for (i = 0; i < FETCHER_NSTRINGS; i++) {
    FUZZ_CHECK (strcmp (*fetcher_string (&a, i), *fetcher_string (&b, i)) == 0,
                "%s changed in a round trip", fetcher_strings[i].what);
    free (*fetcher_string (&a, i));
    free (*fetcher_string (&b, i));
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (fd_in == -1) {
    fd_in = fuzz_memfd ("config-in");
    fd_out = fuzz_memfd ("config-out");
  }
  if (size < 1)
    return 0;
  fuzz_memfd_fill (fd_in, data + 1, size - 1);
  if (data[0] & 1)
    fetcher ();
  else
    frontend ();
  return 0;
}
