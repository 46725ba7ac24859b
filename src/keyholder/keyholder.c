/*
 * keyholder.c: the key holder role.
 *
 * The only process that reads the TLS private key (server-key.pem) and
 * the PSK file.  The supervisor opens both and passes the descriptors
 * (KEYHOLDER_FD_KEY, KEYHOLDER_FD_PSK); the key holder reads them, closes
 * them, enters a sandbox without files or network, and then answers the
 * front-end, one request at a time:
 *
 *   IPC_KEY_SIGN  sign with one of the schemes of key-schemes.h that the
 *                 key makes (its kind, and for TLS 1.3's ECDSA schemes its
 *                 curve): the hash GnuTLS made of what a TLS 1.3 or 1.2
 *                 server signs (ECDSA, RSA), or for EdDSA the input
 *                 itself, which must have the form of a TLS 1.3 server
 *                 CertificateVerify or of TLS 1.2's ECDHE parameters
 *   IPC_KEY_PSK   the key of one PSK user name a client gave
 *
 * Both are rate-limited (KEY_OPS_BURST, KEY_OPS_PER_SECOND).  A front-end
 * that is taken over can thus have hashes signed while it lives (a hash
 * does not show what was hashed), and learn the keys of PSK user names it
 * guesses, slowly; it can never read the private key.  A malformed request
 * ends the key holder, and with it the server (the front-end is then
 * broken).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "child.h"
#include "child-fds.h"
#include "config.h"
#include "file-read.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "key-schemes.h"
#include "keyholder-parse.h"
#include "keyholder-wire.h"
#include "limits-keyholder.h"
#include "log.h"
#include "sandbox.h"
#include "tls-modes.h"
#include "token-bucket.h"

struct psk_entry {
  char user[MAX_PSK_USERNAME + 1];
  uint8_t key[MAX_PSK_KEY];
  size_t key_len;
};

static struct keyholder_config config;
static gnutls_privkey_t private_key;    /* NULL without KEYHOLDER_KEY */
static struct psk_entry *psks;
static size_t npsks;

/* KEY_OPS_BURST requests at once, then KEY_OPS_PER_SECOND (all zero:
 * full). */
static struct token_bucket key_ops;

static bool
take_rate_token (void)
{
  struct timespec now;

  clock_gettime (CLOCK_MONOTONIC, &now);
  return token_bucket_take (&key_ops, (uint64_t) now.tv_sec * 1000 + (uint64_t) now.tv_nsec / 1000000,
                            KEY_OPS_BURST, KEY_OPS_PER_SECOND);
}

/* Read a whole descriptor (a file passed by the supervisor) into buf;
 * returns the length, or fails when it exceeds cap. */
static size_t
read_secret_fd (int fd, uint8_t *buf, size_t cap, const char *what)
{
  ssize_t got = fd_read_all (fd, buf, cap - 1);

  if (got == -1 && errno == E2BIG)
    fatal ("%s is larger than %zu bytes", what, cap - 1);
  if (got == -1)
    fatal_errno ("reading %s", what);
  close (fd);
  return (size_t) got;
}

/* server-key.pem: import it, and check it belongs to the certificate the
 * front-end presents (the front-end cannot check: it never sees the key). */
static void
load_private_key (void)
{
  uint8_t *buf = malloc (MAX_TLS_FILE_SIZE + 1);
  gnutls_datum_t d;
  gnutls_x509_crt_t *crts = NULL;
  unsigned ncrts = 0;
  gnutls_pubkey_t from_cert = NULL, from_key = NULL;
  uint8_t id1[64], id2[64];
  size_t id1_len = sizeof id1, id2_len = sizeof id2;
  int r;

  if (buf == NULL)
    fatal_errno ("malloc");
  d.data = buf;
  d.size = (unsigned) read_secret_fd (KEYHOLDER_FD_KEY, buf, MAX_TLS_FILE_SIZE + 1,
                                      "server-key.pem");
  if ((r = gnutls_privkey_init (&private_key)) < 0 ||
      (r = gnutls_privkey_import_x509_raw (private_key, &d, GNUTLS_X509_FMT_PEM,
                                           NULL, 0)) < 0)
    fatal ("server-key.pem: %s (a PEM private key without a password is needed)",
           gnutls_strerror (r));
  explicit_bzero (buf, MAX_TLS_FILE_SIZE + 1);
  free (buf);

  d.data = (unsigned char *) config.cert;
  d.size = config.cert_len;
  if ((r = gnutls_x509_crt_list_import2 (&crts, &ncrts, &d, GNUTLS_X509_FMT_PEM, 0)) < 0 ||
      ncrts == 0)
    fatal ("server-cert.pem: %s", ncrts == 0 ? "no certificate" : gnutls_strerror (r));
  if ((r = gnutls_pubkey_init (&from_cert)) < 0 ||
      (r = gnutls_pubkey_import_x509 (from_cert, crts[0], 0)) < 0 ||
      (r = gnutls_pubkey_init (&from_key)) < 0 ||
      (r = gnutls_pubkey_import_privkey (from_key, private_key, 0, 0)) < 0 ||
      (r = gnutls_pubkey_get_key_id (from_cert, 0, id1, &id1_len)) < 0 ||
      (r = gnutls_pubkey_get_key_id (from_key, 0, id2, &id2_len)) < 0)
    fatal ("comparing server-key.pem with server-cert.pem: %s", gnutls_strerror (r));
  if (id1_len != id2_len || memcmp (id1, id2, id1_len) != 0)
    fatal ("server-key.pem is not the key of the first certificate in "
           "server-cert.pem: put the server's own certificate first");
  gnutls_pubkey_deinit (from_cert);
  gnutls_pubkey_deinit (from_key);
  for (unsigned i = 0; i < ncrts; i++)
    gnutls_x509_crt_deinit (crts[i]);
  gnutls_free (crts);
}

static int
hex_value (char ch)
{
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

/* --tls-psk FILE: lines "USERNAME:HEXKEY" (psktool's format).  Errors
 * name the line, never its contents. */
static void
load_psk_file (void)
{
  uint8_t *buf = malloc (MAX_PSK_FILE_SIZE + 1);
  size_t len, pos = 0, line = 0;

  if (buf == NULL)
    fatal_errno ("malloc");
  len = read_secret_fd (KEYHOLDER_FD_PSK, buf, MAX_PSK_FILE_SIZE + 1, "the --tls-psk file");
  while (pos < len) {
    uint8_t *start = buf + pos, *nl = memchr (start, '\n', len - pos), *colon;
    size_t llen = nl ? (size_t) (nl - start) : len - pos, ulen, hlen, i;
    struct psk_entry *e;

    pos += llen + (nl ? 1 : 0);
    line++;
    if (llen > 0 && start[llen - 1] == '\r')
      llen--;
    if (llen == 0 || start[0] == '#')
      continue;
    colon = memchr (start, ':', llen);
    if (colon == NULL)
      fatal ("--tls-psk file, line %zu: not USERNAME:HEXKEY", line);
    ulen = (size_t) (colon - start);
    hlen = llen - ulen - 1;
    if (ulen < 1 || ulen > MAX_PSK_USERNAME || memchr (start, '\0', ulen))
      fatal ("--tls-psk file, line %zu: the user name must be 1 to %u bytes",
             line, MAX_PSK_USERNAME);
    if (hlen < 2 || hlen % 2 != 0 || hlen / 2 > MAX_PSK_KEY)
      fatal ("--tls-psk file, line %zu: the key must be 1 to %u bytes in hex",
             line, MAX_PSK_KEY);
    e = realloc (psks, (npsks + 1) * sizeof *psks);
    if (e == NULL)
      fatal_errno ("realloc");
    psks = e;
    e = &psks[npsks];
    memcpy (e->user, start, ulen);
    e->user[ulen] = '\0';
    for (i = 0; i < npsks; i++)
      if (strcmp (psks[i].user, e->user) == 0)
        fatal ("--tls-psk file, line %zu: user name given twice", line);
    for (i = 0; i < hlen / 2; i++) {
      int hi = hex_value ((char) colon[1 + 2 * i]), lo = hex_value ((char) colon[2 + 2 * i]);
      if (hi < 0 || lo < 0)
        fatal ("--tls-psk file, line %zu: the key is not hexadecimal", line);
      e->key[i] = (uint8_t) (hi << 4 | lo);
    }
    e->key_len = hlen / 2;
    npsks++;
  }
  explicit_bzero (buf, len);
  free (buf);
  if (npsks == 0)
    fatal ("the --tls-psk file has no keys (lines USERNAME:HEXKEY, as psktool writes)");
  debug ("%zu PSK users", npsks);
}

static void
answer (uint16_t type, uint64_t id, uint32_t error, const void *payload, uint32_t len)
{
  struct ipc_header h = { .type = type, .id = id, .error = error, .payload_len = len };
  if (ipc_send_datagram (CHILD_FD_PEER, &h, payload) == -1)
    fatal_errno ("answering the front-end");
}

/* Whether the key makes this scheme's signatures: its kind of key, and
 * for ECDSA its curve (TLS 1.3 names the curve in the scheme).  GnuTLS
 * would sign a P-384 scheme's hash with a P-256 key, say: a signature
 * that is no signature of that scheme. */
static bool
key_makes (gnutls_sign_algorithm_t algo)
{
  gnutls_pk_algorithm_t pk;
  gnutls_ecc_curve_t curve = GNUTLS_ECC_CURVE_INVALID, want;

  pk = (gnutls_pk_algorithm_t) gnutls_privkey_get_pk_algorithm (private_key, NULL);

  if (!gnutls_sign_supports_pk_algorithm (algo, pk))
    return false;
  if (pk != GNUTLS_PK_ECDSA)
    return true;
  switch (algo) {
  case GNUTLS_SIGN_ECDSA_SHA256:
  case GNUTLS_SIGN_ECDSA_SHA384:
  case GNUTLS_SIGN_ECDSA_SHA512:
    return true;                        /* TLS 1.2's: any curve */
  case GNUTLS_SIGN_ECDSA_SECP256R1_SHA256: want = GNUTLS_ECC_CURVE_SECP256R1; break;
  case GNUTLS_SIGN_ECDSA_SECP384R1_SHA384: want = GNUTLS_ECC_CURVE_SECP384R1; break;
  case GNUTLS_SIGN_ECDSA_SECP521R1_SHA512: want = GNUTLS_ECC_CURVE_SECP521R1; break;
  default: return false;
  }
  /* The curve only: the private value is not copied. */
  return gnutls_privkey_export_ecc_raw2 (private_key, &curve, NULL, NULL, NULL, 0) >= 0 &&
         curve == want;
}

static void
handle_sign (const struct ipc_header *h, const uint8_t *data)
{
  gnutls_datum_t in = { .data = (unsigned char *) data, .size = h->payload_len };
  gnutls_datum_t sig = { NULL, 0 };
  gnutls_sign_algorithm_t algo = (gnutls_sign_algorithm_t) h->length;
  bool hashed = (h->flags & IPC_KEY_SIGN_HASHED) != 0;
  enum sign_request form;
  int r;

  /* Its header is checked (keyholder_dispatch), its payload here. */
  form = check_sign_request (h, data);
  if (private_key == NULL || form == SIGN_MALFORMED)
    fatal ("malformed signing request from the front-end: stopping");
  if (form == SIGN_REFUSED || !key_makes (algo)) {
    warn ("refusing to sign: not a TLS 1.2 or 1.3 server signature of this key (%s, %u bytes)",
          gnutls_sign_get_name (algo) ? gnutls_sign_get_name (algo) : "unknown scheme",
          h->payload_len);
    answer (IPC_KEY_SIGNATURE, h->id, EPERM, NULL, 0);
    return;
  }
  if (!take_rate_token ()) {
    warn ("refusing to sign: more than %u requests a second", KEY_OPS_PER_SECOND);
    answer (IPC_KEY_SIGNATURE, h->id, EAGAIN, NULL, 0);
    return;
  }
  r = hashed ? gnutls_privkey_sign_hash2 (private_key, algo, (unsigned) h->offset, &in, &sig)
             : gnutls_privkey_sign_data2 (private_key, algo, (unsigned) h->offset, &in, &sig);
  if (r < 0 || sig.size < 1 || sig.size > KEY_MAX_SIGNATURE) {
    warn ("signing with %s failed: %s", gnutls_sign_get_name (algo),
          r < 0 ? gnutls_strerror (r) : "signature too large");
    gnutls_free (sig.data);
    answer (IPC_KEY_SIGNATURE, h->id, EIO, NULL, 0);
    return;
  }
  debug ("signed with %s", gnutls_sign_get_name (algo));
  answer (IPC_KEY_SIGNATURE, h->id, 0, sig.data, sig.size);
  gnutls_free (sig.data);
}

static void
handle_psk (const struct ipc_header *h, const uint8_t *data)
{
  char user[MAX_PSK_USERNAME + 1];
  size_t i;

  if (psks == NULL || parse_psk_request (h, data, user) == -1)
    fatal ("malformed PSK request from the front-end: stopping");
  if (!take_rate_token ()) {
    warn ("refusing a PSK: more than %u requests a second", KEY_OPS_PER_SECOND);
    answer (IPC_KEY_PSK_KEY, h->id, EAGAIN, NULL, 0);
    return;
  }
  for (i = 0; i < npsks; i++)
    if (strcmp (psks[i].user, user) == 0) {
      answer (IPC_KEY_PSK_KEY, h->id, 0, psks[i].key, (uint32_t) psks[i].key_len);
      return;
    }
  answer (IPC_KEY_PSK_KEY, h->id, ENOENT, NULL, 0);
}

/* The front-end's requests; anything else ends us (and the server). */
static void
keyholder_dispatch (void)
{
  uint8_t payload[IPC_MAX_DATAGRAM_PAYLOAD];
  struct ipc_header h;
  const char *why;

  if (ipc_recv_datagram (CHILD_FD_PEER, &h, payload, KEY_MAX_SIGN_INPUT) == -1) {
    if (errno == EAGAIN || errno == EINTR)
      return;
    if (errno == 0) {
      /* SOCK_SEQPACKET reads an empty packet as 0 bytes, as it does the
       * end: only the end is the front-end gone, and no error. */
      struct pollfd pfd = { .fd = CHILD_FD_PEER, .events = POLLRDHUP };
      if (poll (&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLRDHUP)))
        exit (EXIT_SUCCESS);
      fatal ("empty message from the front-end: stopping");
    }
    fatal_errno ("bad message from the front-end");
  }
  why = ipc_check (&h, 0, ROLE_FRONTEND, ROLE_KEYHOLDER);
  if (why != NULL)
    fatal ("malformed message from the front-end (type %u: %s): stopping", h.type, why);
  switch (h.type) {
  case IPC_KEY_SIGN:
    handle_sign (&h, payload);
    break;
  case IPC_KEY_PSK:
    handle_psk (&h, payload);
    break;
  default:
    fatal ("unexpected message type %u from the front-end: stopping", h.type);
  }
  explicit_bzero (payload, sizeof payload);
}

int
keyholder_main (void)
{
  int r;

  child_start (ROLE_KEYHOLDER);
  config_recv_keyholder (CHILD_FD_CONFIG, &config);
  close (CHILD_FD_CONFIG);
  log_init (roles[ROLE_KEYHOLDER].name, (config.flags & KEYHOLDER_VERBOSE) != 0);
  /* The supervisor's environment sets GNUTLS_NO_IMPLICIT_INIT. */
  if ((r = gnutls_global_init ()) < 0)
    fatal ("GnuTLS: %s", gnutls_strerror (r));
  if (config.flags & KEYHOLDER_KEY)
    load_private_key ();
  else
    close (KEYHOLDER_FD_KEY);
  if (config.flags & KEYHOLDER_PSK)
    load_psk_file ();
  else
    close (KEYHOLDER_FD_PSK);

  /* Keys in memory, files closed: from here on no file, no network, no
   * privilege, and a filter that allows little more than answering. */
  {
    const struct sandbox_spec spec = {
      .role = roles[ROLE_KEYHOLDER].name,
      .rules = roles[ROLE_KEYHOLDER].rules, .nrules = *roles[ROLE_KEYHOLDER].nrules,
      .debug = (config.flags & KEYHOLDER_SANDBOX_DEBUG) != 0,
      .landlock = true,
      .new_netns = true, .new_ipc_uts = true,
      .nofile = 8,
      .no_file_writes = true,
    };
    sandbox_enter (&spec);
  }

  child_serve_peer (keyholder_dispatch);
}
