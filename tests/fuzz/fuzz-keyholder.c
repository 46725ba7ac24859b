/*
 * fuzz-keyholder: the key holder's reading of the front-end's requests
 * (keyholder_dispatch in src/keyholder/keyholder.c, static, so keyholder.c is
 * compiled into this file; the payload checks of keyholder-parse.c are
 * linked, and unit-keyholder-parse tests them alone).  The front-end
 * speaks to every client: the key holder treats its requests as
 * untrusted.  The real keyholder_dispatch reads real SOCK_SEQPACKET
 * packets, the harness's socketpair, and answers on it.
 *
 * Made once: an ECDSA P-256, an RSA 2048 and an Ed25519 key (GnuTLS), and
 * a PSK table read by the real load_psk_file from a file written here.
 *
 * Input: a setup byte (bits 0-1 the key loaded: none, ECDSA, RSA,
 * Ed25519; bit 2 no PSK file; bits 3-5 the rate-limit tokens at the
 * start, 7 for a full bucket), then up to 32 operations, each a byte
 * whose value mod 7 picks it:
 *   0  a signing request for a hash: algorithm choice, changes (below),
 *      then a length choice (0: the scheme's hash size) and the bytes
 *   1  a signing request for EdDSA: algorithm choice, changes, a hash
 *      size choice (0xf0 and up: TLS 1.2's ECDHE parameters instead, of
 *      one group or a wrong one, of the right length or one off), a byte
 *      of the TLS 1.3 prefix (or of TLS 1.2's parameters) to damage (0:
 *      none)
 *   2  a PSK request: a user choice (a known user, one a byte longer or
 *      shorter, else a length and the name's bytes), then changes
 *   3  a raw packet: its length (16 bits), the bytes, a count of
 *      descriptors to attach
 *   4  a wake-up with nothing to read
 *   5  time passing: 16 bits of 1/256 s (the clock is the harness's)
 *   6  the front-end closing its end (the last operation)
 * The changes byte: bit 0 flips IPC_KEY_SIGN_HASHED, bit 1 sets GnuTLS's
 * RSA-PSS sign flag, bits 2-4 damage one header field (flags, error,
 * area_offset, offset, length, payload_len one more or one less), bit 5
 * attaches a descriptor, bits 6-7 change the type.  An algorithm choice
 * of 0x80 or more takes the algorithm from the next two bytes.
 *
 * Checked, against expectations written here from ipc-messages.h,
 * keyholder-wire.h and RFC 8446 (not from keyholder.c): fatal() exactly
 * for a malformed request, an empty packet too (and nothing answered),
 * exit (EXIT_SUCCESS) exactly when the front-end is gone, descriptors
 * sent along closed; else
 * exactly one answer, of the right type, with the request's id, every
 * other field zero: EPERM for anything but a TLS 1.3 or 1.2 server
 * signature the loaded key can make (its kind of key and, for TLS 1.3's
 * ECDSA schemes, its curve),
 * EAGAIN exactly when the token bucket (modelled here) is empty, EIO
 * for GnuTLS's RSA-PSS flag with a key that is not RSA, else a signature
 * that the key's public half verifies; a PSK user's exact key, or
 * ENOENT.  At most 2 RSA signatures per input (each takes a millisecond
 * or two): a request that would make a third is not sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "child-fds.h"
#include "fuzz.h"
#include "ipc-messages.h"
#include "keyholder-wire.h"
#include "limits-keyholder.h"
#include "roles.h"

/* keyholder.c's socket to the front-end, its clock and its exit() (at
 * end of file) are the harness's. */
static int kh_fd = -1, fe_fd = -1, null_fd = -1;
#undef CHILD_FD_PEER
#define CHILD_FD_PEER kh_fd

static uint64_t fake_now_ms;                 /* the key holder's clock */

static int
fake_clock_gettime (clockid_t id, struct timespec *ts)
{
  (void) id;
  ts->tv_sec = (time_t) (fake_now_ms / 1000);
  ts->tv_nsec = (long) (fake_now_ms % 1000) * 1000000L;
  return 0;
}
#define clock_gettime fake_clock_gettime

static bool exited;
__attribute__((noreturn)) static void
fake_exit (int status)
{
  FUZZ_CHECK (status == EXIT_SUCCESS && fuzz_exit_jump != NULL, "exit (%d)", status);
  exited = true;
  longjmp (*fuzz_exit_jump, 1);
}
#define exit(status) fake_exit (status)

#include "keyholder.c"

#undef exit
#undef clock_gettime

/* ---- Stand-ins for what keyholder_main calls (never called here). ---- */

void
child_start (enum role_id id)
{
  (void) id;
  abort ();
}

void
sandbox_enter (const struct sandbox_spec *s)
{
  (void) s;
  abort ();
}

/* ---- What is known before any input. ---- */

enum key_kind { NO_KEY, ECDSA_P256, RSA_2048, ED25519, NKEYS };
static gnutls_privkey_t priv[NKEYS];
static gnutls_pubkey_t pub[NKEYS];

struct user {
  const char *name;
  const char *hex;
};
static const struct user users[] = {
  { "alice", "00112233445566778899aabbccddeeff" },
  { "bob", "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789ABCDEF" },
  { "x", "7f" },
  { "with space", "deadbeef" },
  { NULL, NULL },               /* a 255-byte name, a 64-byte key (made below) */
};
#define NUSERS (sizeof users / sizeof users[0])
static char long_name[MAX_PSK_USERNAME + 1];
static char long_hex[2 * MAX_PSK_KEY + 1];
static struct psk_entry *all_psks;
static size_t all_npsks;

static const char *
user_name (size_t i)
{
  return users[i].name ? users[i].name : long_name;
}

static const char *
user_hex (size_t i)
{
  return users[i].hex ? users[i].hex : long_hex;
}

static int
nibble (char c)
{
  return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* The PSK file, in psktool's format with a comment, a blank line and a
 * CRLF line, read by the real load_psk_file; its table must be ours. */
static void
load_psks (void)
{
  char text[4096];
  size_t len = 0, i, k;
  int fd = fuzz_memfd ("psk-file"), saved;

  memset (long_name, 'u', MAX_PSK_USERNAME);
  for (i = 0; i < 2 * MAX_PSK_KEY; i++)
    long_hex[i] = "0123456789abcdef"[(i * 7) % 16];
  len += (size_t) snprintf (text + len, sizeof text - len, "# made by fuzz-keyholder\n\n");
  for (i = 0; i < NUSERS; i++)
    len += (size_t) snprintf (text + len, sizeof text - len, "%s:%s%s", user_name (i),
                              user_hex (i), i == 1 ? "\r\n" : "\n");
  FUZZ_CHECK (len < sizeof text, "PSK file size");
  fuzz_memfd_fill (fd, text, len);
  saved = fcntl (KEYHOLDER_FD_PSK, F_GETFD) != -1 ? dup (KEYHOLDER_FD_PSK) : -1;
  FUZZ_CHECK (dup2 (fd, KEYHOLDER_FD_PSK) == KEYHOLDER_FD_PSK, "dup2");
  close (fd);
  load_psk_file ();             /* closes KEYHOLDER_FD_PSK */
  if (saved != -1) {
    dup2 (saved, KEYHOLDER_FD_PSK);
    close (saved);
  }
  FUZZ_CHECK (npsks == NUSERS, "%zu PSK users read", npsks);
  for (i = 0; i < NUSERS; i++) {
    const char *hex = user_hex (i);
    FUZZ_CHECK (strcmp (psks[i].user, user_name (i)) == 0 &&
                psks[i].key_len == strlen (hex) / 2, "PSK user %zu", i);
    for (k = 0; k < psks[i].key_len; k++)
      FUZZ_CHECK (psks[i].key[k] == (nibble (hex[2 * k]) << 4 | nibble (hex[2 * k + 1])),
                  "PSK user %zu, key byte %zu", i, k);
  }
  all_psks = psks;
  all_npsks = npsks;
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  int sv[2], r;

  (void) argc, (void) argv;
  FUZZ_CHECK (gnutls_global_init () >= 0, "gnutls_global_init");
  for (int k = ECDSA_P256; k < NKEYS; k++) {
    gnutls_pk_algorithm_t pk = k == ECDSA_P256 ? GNUTLS_PK_ECDSA
                             : k == RSA_2048 ? GNUTLS_PK_RSA : GNUTLS_PK_EDDSA_ED25519;
    unsigned bits = k == ECDSA_P256 ? GNUTLS_CURVE_TO_BITS (GNUTLS_ECC_CURVE_SECP256R1)
                  : k == RSA_2048 ? 2048 : 256;
    r = gnutls_privkey_init (&priv[k]);
    if (r >= 0)
      r = gnutls_privkey_generate (priv[k], pk, bits, 0);
    if (r >= 0)
      r = gnutls_pubkey_init (&pub[k]);
    if (r >= 0)
      r = gnutls_pubkey_import_privkey (pub[k], priv[k], 0, 0);
    FUZZ_CHECK (r >= 0, "key %d: %s", k, gnutls_strerror (r));
  }
  load_psks ();
  null_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  FUZZ_CHECK (null_fd >= 0, "/dev/null");
  FUZZ_CHECK (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
  kh_fd = sv[0];
  fe_fd = sv[1];
  return 0;
}


/* ---- The expectations. ---- */

/* TLS 1.3's signature schemes (RFC 8446, 4.2.3), then TLS 1.2's ECDSA
 * (any curve) and RSA PKCS#1 v1.5 ones of SHA-2 (RFC 5246, 7.4.1.4.1),
 * and the hash size each signs; 0 for EdDSA, which signs the whole
 * input. */
static const struct scheme {
  gnutls_sign_algorithm_t algo;
  uint32_t hash;
} tls13[] = {
  { GNUTLS_SIGN_ECDSA_SECP256R1_SHA256, 32 }, { GNUTLS_SIGN_ECDSA_SECP384R1_SHA384, 48 },
  { GNUTLS_SIGN_ECDSA_SECP521R1_SHA512, 64 },
  { GNUTLS_SIGN_RSA_PSS_RSAE_SHA256, 32 }, { GNUTLS_SIGN_RSA_PSS_RSAE_SHA384, 48 },
  { GNUTLS_SIGN_RSA_PSS_RSAE_SHA512, 64 },
  { GNUTLS_SIGN_RSA_PSS_SHA256, 32 }, { GNUTLS_SIGN_RSA_PSS_SHA384, 48 },
  { GNUTLS_SIGN_RSA_PSS_SHA512, 64 },
  { GNUTLS_SIGN_EDDSA_ED25519, 0 }, { GNUTLS_SIGN_EDDSA_ED448, 0 },
  { GNUTLS_SIGN_ECDSA_SHA256, 32 }, { GNUTLS_SIGN_ECDSA_SHA384, 48 },
  { GNUTLS_SIGN_ECDSA_SHA512, 64 },
  { GNUTLS_SIGN_RSA_SHA256, 32 }, { GNUTLS_SIGN_RSA_SHA384, 48 },
  { GNUTLS_SIGN_RSA_SHA512, 64 },
};
#define NTLS13 (sizeof tls13 / sizeof tls13[0])
/* The algorithm choices: those, then others no TLS server here signs
 * with (SHA-1, MD5, raw RSA of TLS 1.0 and 1.1, DSA). */
static const gnutls_sign_algorithm_t others[] = {
  GNUTLS_SIGN_UNKNOWN, GNUTLS_SIGN_RSA_SHA1, GNUTLS_SIGN_ECDSA_SHA1, GNUTLS_SIGN_RSA_MD5,
  GNUTLS_SIGN_DSA_SHA256, GNUTLS_SIGN_RSA_RAW, GNUTLS_SIGN_RSA_SHA224,
};

static const struct scheme *
find_scheme (gnutls_sign_algorithm_t algo)
{
  for (size_t i = 0; i < NTLS13; i++)
    if (tls13[i].algo == algo)
      return &tls13[i];
  return NULL;
}

static bool
is_ecdsa_scheme (gnutls_sign_algorithm_t algo)
{
  return algo == GNUTLS_SIGN_ECDSA_SECP256R1_SHA256 ||
         algo == GNUTLS_SIGN_ECDSA_SECP384R1_SHA384 ||
         algo == GNUTLS_SIGN_ECDSA_SECP521R1_SHA512 || algo == GNUTLS_SIGN_ECDSA_SHA256 ||
         algo == GNUTLS_SIGN_ECDSA_SHA384 || algo == GNUTLS_SIGN_ECDSA_SHA512;
}

/* Which schemes each key makes (a TLS 1.3 ECDSA scheme names its curve,
 * TLS 1.2's do not; GnuTLS signs RSA-PSS with an rsaEncryption key for
 * both). */
static bool
scheme_of_key (enum key_kind k, gnutls_sign_algorithm_t algo)
{
  switch (k) {
  case ECDSA_P256:
    return algo == GNUTLS_SIGN_ECDSA_SECP256R1_SHA256 || algo == GNUTLS_SIGN_ECDSA_SHA256 ||
           algo == GNUTLS_SIGN_ECDSA_SHA384 || algo == GNUTLS_SIGN_ECDSA_SHA512;
  case RSA_2048:
    return find_scheme (algo) != NULL && find_scheme (algo)->hash != 0 &&
           !is_ecdsa_scheme (algo);
  case ED25519:
    return algo == GNUTLS_SIGN_EDDSA_ED25519;
  default:
    return false;
  }
}

/* RFC 8446, 4.4.3: 64 spaces, the server's context string, a zero byte,
 * and a transcript hash (SHA-256, -384 or -512). */
static const char server_context[] = "TLS 1.3, server CertificateVerify";
#define CONTEXT_LEN 33u
#define VERIFY_PREFIX (64u + CONTEXT_LEN + 1u)
static_assert (sizeof server_context == CONTEXT_LEN + 1, "context string");

static bool
is_server_verify (const uint8_t *p, uint32_t len)
{
  uint32_t i;

  if (len != VERIFY_PREFIX + 32 && len != VERIFY_PREFIX + 48 && len != VERIFY_PREFIX + 64)
    return false;
  for (i = 0; i < 64; i++)
    if (p[i] != ' ')
      return false;
  return memcmp (p + 64, server_context, CONTEXT_LEN) == 0 && p[64 + CONTEXT_LEN] == 0;
}

/* RFC 8422, 5.4: what a TLS 1.2 server signs for ECDHE: two 32-byte
 * randoms, curve type 3, a named group, and the group's public value
 * behind its length byte (uncompressed, 0x04 first, for NIST curves). */
#define TLS12_RANDOMS 64u
static const struct { uint16_t group; uint8_t len; } tls12_groups[] = {
  { 23, 65 }, { 24, 97 }, { 25, 133 }, { 29, 32 }, { 30, 56 },
};
#define NGROUPS (sizeof tls12_groups / sizeof tls12_groups[0])

static bool
is_tls12_params (const uint8_t *p, uint32_t len)
{
  uint16_t group;

  if (len < TLS12_RANDOMS + 4 || p[TLS12_RANDOMS] != 3)
    return false;
  group = (uint16_t) (p[TLS12_RANDOMS + 1] << 8 | p[TLS12_RANDOMS + 2]);
  for (size_t i = 0; i < NGROUPS; i++)
    if (tls12_groups[i].group == group)
      return p[TLS12_RANDOMS + 3] == tls12_groups[i].len &&
             len == TLS12_RANDOMS + 4 + tls12_groups[i].len &&
             (group > 25 || p[TLS12_RANDOMS + 4] == 4);
  return false;
}

enum outcome { FATAL, ENDS, NOTHING, ANSWER };

struct expect {
  enum outcome outcome;
  uint16_t type;                /* of the answer */
  uint32_t error;
  bool takes_token;             /* asks the rate limit first */
  bool signs;                   /* a signature, if a token is left */
  const struct psk_entry *psk;  /* the key answered, if a token is left */
};

struct state {
  enum key_kind key;
  bool have_psk;
  uint64_t millitokens;         /* the bucket, modelled, in thousandths */
  uint64_t last_take;           /* when the key holder last looked at it */
  unsigned rsa_signs;
};

/* What the key holder must do with this packet (n bytes, nfds
 * descriptors along): the header at p, per ipc-messages.h's layout. */
static struct expect
expected (const struct state *s, const uint8_t *p, size_t n, unsigned nfds)
{
  struct expect e = { .outcome = FATAL };
  struct ipc_header h;
  uint16_t type, flags;
  uint32_t plen, length;
  uint64_t offset;
  const uint8_t *pl = p + 40;

  if (nfds > 0 || n < 40 || n > 40 + 1024)
    return e;
  memcpy (&h, p, 40);
  type = h.type;
  flags = h.flags;
  plen = h.payload_len;
  offset = h.offset;
  length = h.length;
  if (plen != n - 40 || plen > KEY_MAX_SIGN_INPUT || plen < 1 || h.error != 0 ||
      h.area_offset != 0)
    return e;
  if (type == IPC_KEY_SIGN) {
    gnutls_sign_algorithm_t algo = (gnutls_sign_algorithm_t) length;
    const struct scheme *sc = find_scheme (algo);
    bool hashed = flags & IPC_KEY_SIGN_HASHED;

    if (s->key == NO_KEY || (flags & ~IPC_KEY_SIGN_HASHED) ||
        (offset & ~(uint64_t) GNUTLS_PRIVKEY_SIGN_FLAG_RSA_PSS))
      return e;
    e.outcome = ANSWER;
    e.type = IPC_KEY_SIGNATURE;
    if (sc == NULL || (sc->hash != 0) != hashed ||
        (hashed ? plen != sc->hash
                : !is_server_verify (pl, plen) && !is_tls12_params (pl, plen)) ||
        !scheme_of_key (s->key, algo)) {
      e.error = EPERM;
      return e;
    }
    e.takes_token = true;
    if (offset != 0 && s->key != RSA_2048)
      e.error = EIO;
    else
      e.signs = true;
    return e;
  }
  if (type == IPC_KEY_PSK) {
    if (!s->have_psk || flags != 0 || offset != 0 || length != 0 ||
        plen > MAX_PSK_USERNAME || memchr (pl, 0, plen) != NULL)
      return e;
    e.outcome = ANSWER;
    e.type = IPC_KEY_PSK_KEY;
    e.takes_token = true;
    e.error = ENOENT;
    for (size_t i = 0; i < all_npsks; i++)
      if (strlen (all_psks[i].user) == plen && memcmp (all_psks[i].user, pl, plen) == 0) {
        e.error = 0;
        e.psk = &all_psks[i];
      }
    return e;
  }
  return e;
}

/* The bucket: refilled by the time since the key holder last looked,
 * KEY_OPS_PER_SECOND a second (as many thousandths each millisecond),
 * up to KEY_OPS_BURST; a request takes a whole token. */
static uint64_t
model_millitokens_now (const struct state *s)
{
  uint64_t t = s->millitokens + (fake_now_ms - s->last_take) * KEY_OPS_PER_SECOND;
  return t > KEY_OPS_BURST * 1000ull ? KEY_OPS_BURST * 1000ull : t;
}

static bool
model_take_token (struct state *s)
{
  s->millitokens = model_millitokens_now (s);
  s->last_take = fake_now_ms;
  if (s->millitokens < 1000)
    return false;
  s->millitokens -= 1000;
  return true;
}

/* ---- Driving the key holder. ---- */

static int
lowest_free_fd (void)
{
  int fd = dup (0);
  FUZZ_CHECK (fd >= 0, "dup");
  close (fd);
  return fd;
}

static void
send_packet (const uint8_t *p, size_t n, unsigned nfds)
{
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE (sizeof (int) * 4)];
  } control;
  struct iovec iov = { .iov_base = (void *) p, .iov_len = n };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

  if (nfds > 0) {
    struct cmsghdr *cm;
    memset (&control, 0, sizeof control);
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE (sizeof (int) * nfds);
    cm = CMSG_FIRSTHDR (&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN (sizeof (int) * nfds);
    for (unsigned i = 0; i < nfds; i++)
      memcpy (CMSG_DATA (cm) + i * sizeof (int), &null_fd, sizeof (int));
  }
  FUZZ_CHECK (sendmsg (fe_fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t) n,
              "sending %zu bytes: %s", n, strerror (errno));
}

/* One call of keyholder_dispatch: how it ended. */
static enum outcome
dispatch (void)
{
  jmp_buf jump;
  volatile enum outcome how = NOTHING;

  exited = false;
  fuzz_exit_jump = &jump;
  if (setjmp (jump) == 0)
    keyholder_dispatch ();
  else
    how = exited ? ENDS : FATAL;
  fuzz_exit_jump = NULL;
  return how;
}

/* The key holder's answer, if any: its length, or -1. */
static ssize_t
take_answer (uint8_t *buf, size_t cap)
{
  ssize_t n = recv (fe_fd, buf, cap, MSG_DONTWAIT);
  FUZZ_CHECK (n >= 0 || errno == EAGAIN, "recv: %s", strerror (errno));
  return n;
}

static bool
verify (enum key_kind k, gnutls_sign_algorithm_t algo, bool hashed,
        const uint8_t *in, uint32_t in_len, const uint8_t *sig, uint32_t sig_len)
{
  gnutls_datum_t d = { (unsigned char *) in, in_len }, s = { (unsigned char *) sig, sig_len };
  return (hashed ? gnutls_pubkey_verify_hash2 (pub[k], algo, 0, &d, &s)
                 : gnutls_pubkey_verify_data2 (pub[k], algo, 0, &d, &s)) >= 0;
}

/* Send one packet, let the key holder read it, and check what it did;
 * false when the key holder ended. */
static bool
exchange (struct state *s, const uint8_t *p, size_t n, unsigned nfds)
{
  struct expect e = expected (s, p, n, nfds);
  uint8_t ans[40 + 2048];
  enum outcome got;
  ssize_t an;
  int free_fd;

  /* Would this be a third RSA signature?  Then skip it: slow. */
  if (e.signs && s->key == RSA_2048 && model_millitokens_now (s) >= 1000 && s->rsa_signs >= 2)
    return true;
  free_fd = lowest_free_fd ();
  send_packet (p, n, nfds);
  got = dispatch ();
  an = take_answer (ans, sizeof ans);
  FUZZ_CHECK (lowest_free_fd () == free_fd, "a descriptor sent along was kept");
  if (e.outcome == FATAL || e.outcome == ENDS) {
    FUZZ_CHECK (got != NOTHING, "a packet of %zu bytes (type %u) was served", n,
                n >= 2 ? p[0] | p[1] << 8 : 0);
    FUZZ_CHECK (got == FATAL, "exit() on a malformed request (%zu bytes)", n);
    FUZZ_CHECK (an == -1, "an answer before the end");
    return false;
  }
  FUZZ_CHECK (got == NOTHING, "%s on a well-formed request: %s",
              got == ENDS ? "exit()" : "fatal()", fuzz_fatal_message);
  FUZZ_CHECK (an >= 40, "answer of %zd bytes", an);
  {
    struct ipc_header h, req;
    uint16_t want_type = e.type;
    uint32_t want_error = e.error;
    const uint8_t *pl = ans + 40;

    memcpy (&h, ans, 40);
    memcpy (&req, p, 40);
    if (e.takes_token && !model_take_token (s))
      want_error = EAGAIN;
    FUZZ_CHECK (h.type == want_type && h.flags == 0 && h.id == req.id &&
                h.offset == 0 && h.length == 0 && h.area_offset == 0 &&
                h.payload_len == (size_t) an - 40,
                "answer header: type %u, id %llu, payload %u of %zd bytes", h.type,
                (unsigned long long) h.id, h.payload_len, an);
    FUZZ_CHECK (h.error == want_error, "answer error %u, expected %u", h.error, want_error);
    if (want_error != 0)
      FUZZ_CHECK (h.payload_len == 0, "a payload with error %u", h.error);
    else if (e.signs) {
      FUZZ_CHECK (h.payload_len >= 1 && h.payload_len <= KEY_MAX_SIGNATURE,
                  "signature of %u bytes", h.payload_len);
      FUZZ_CHECK (verify (s->key, (gnutls_sign_algorithm_t) req.length,
                          req.flags & IPC_KEY_SIGN_HASHED, p + 40, (uint32_t) n - 40, pl,
                          h.payload_len), "a signature that does not verify (%s, key %d)",
                  gnutls_sign_get_name ((gnutls_sign_algorithm_t) req.length), s->key);
      if (s->key == RSA_2048)
        s->rsa_signs++;
    } else
      FUZZ_CHECK (e.psk != NULL && h.payload_len == e.psk->key_len &&
                  memcmp (pl, e.psk->key, e.psk->key_len) == 0, "PSK of user answered");
  }
  FUZZ_CHECK (take_answer (ans, sizeof ans) == -1, "two answers to one request");
  return true;
}

/* The front-end closes its end: the key holder must end, as its
 * supervisor expects, with no error; then a new pair. */
static void
front_end_goes (void)
{
  int sv[2];

  close (fe_fd);
  FUZZ_CHECK (dispatch () == ENDS, "%s when the front-end went",
              fuzz_fatal_message[0] ? fuzz_fatal_message : "nothing");
  close (kh_fd);
  FUZZ_CHECK (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
  kh_fd = sv[0];
  fe_fd = sv[1];
}

/* ---- Building packets from the input. ---- */

static uint8_t packet[40 + 1200];

static void
put_header (uint16_t type, uint16_t flags, uint32_t plen, uint64_t id, uint64_t offset,
            uint32_t length)
{
  struct ipc_header h = { .type = type, .flags = flags, .payload_len = plen, .id = id,
                          .offset = offset, .length = length };
  memcpy (packet, &h, 40);
}

static gnutls_sign_algorithm_t
take_algorithm (struct fuzz_input *in)
{
  uint8_t c = fuzz_u8 (in);
  size_t nothers = sizeof others / sizeof others[0];

  if (c >= 0x80)
    return (gnutls_sign_algorithm_t) fuzz_u16 (in);
  c %= (uint8_t) (NTLS13 + nothers);
  return c < NTLS13 ? tls13[c].algo : others[c - NTLS13];
}

/* The changes byte (see the opening comment) on the packet built, of
 * payload length plen: the length sent; *nfds the descriptors along. */
static size_t
apply_changes (uint8_t ch, uint32_t plen, unsigned *nfds)
{
  struct ipc_header h;

  memcpy (&h, packet, 40);
  if (ch & 1)
    h.flags ^= IPC_KEY_SIGN_HASHED;
  if (ch & 2)
    h.offset |= GNUTLS_PRIVKEY_SIGN_FLAG_RSA_PSS;
  switch ((ch >> 2) & 7) {
  case 1: h.flags |= (uint16_t) (2u << (ch & 3)); break;
  case 2: h.error = EIO; break;
  case 3: h.area_offset = 4096; break;
  case 4: h.offset |= 1u << 20; break;
  case 5: h.length ^= 1; break;
  case 6: h.payload_len++; break;
  case 7: h.payload_len--; break;
  default: break;
  }
  *nfds = (ch & 0x20) ? 1 : 0;
  switch (ch >> 6) {
  case 1: h.type = IPC_KEY_SIGNATURE; break;
  case 2: h.type = 0; break;
  case 3: h.type = h.type == IPC_KEY_SIGN ? IPC_KEY_PSK : IPC_KEY_SIGN; break;
  default: break;
  }
  memcpy (packet, &h, 40);
  return 40 + (size_t) plen;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct fuzz_input in = { data, size, 0 };
  uint8_t setup = fuzz_u8 (&in), drain[2048];
  struct state s = { .key = (enum key_kind) (setup & 3), .have_psk = !(setup & 4) };
  unsigned t = (setup >> 3) & 7, ops;
  uint64_t id = 0;

  /* Nothing left over from an input before. */
  while (recv (kh_fd, drain, sizeof drain, MSG_DONTWAIT) >= 0 ||
         recv (fe_fd, drain, sizeof drain, MSG_DONTWAIT) >= 0)
    ;
  private_key = s.key == NO_KEY ? NULL : priv[s.key];
  psks = s.have_psk ? all_psks : NULL;
  npsks = s.have_psk ? all_npsks : 0;
  fake_now_ms += 3600 * 1000;        /* an hour later: each input starts afresh */
  s.millitokens = 1000ull * (t == 7 ? KEY_OPS_BURST : t);
  key_ops = (struct token_bucket) { .millitokens = s.millitokens, .filled_ms = fake_now_ms };
  s.last_take = fake_now_ms;
  fuzz_fatal_message[0] = '\0';

  for (ops = 0; ops < 32 && fuzz_left (&in) > 0; ops++) {
    uint8_t op = fuzz_u8 (&in) % 7;
    const uint8_t *p;
    size_t n = 0, len, k;
    unsigned nfds = 0;

    id++;
    switch (op) {
    case 0: {                   /* a hash to sign */
      gnutls_sign_algorithm_t algo = take_algorithm (&in);
      const struct scheme *sc = find_scheme (algo);
      uint8_t ch = fuzz_u8 (&in), lc = fuzz_u8 (&in);
      len = lc == 0 ? (sc && sc->hash ? sc->hash : 32) : lc;
      memset (packet + 40, 0, len);
      k = fuzz_span (&in, len, &p);
      memcpy (packet + 40, p, k);
      put_header (IPC_KEY_SIGN, IPC_KEY_SIGN_HASHED, (uint32_t) len, id, 0, algo);
      n = apply_changes (ch, (uint32_t) len, &nfds);
      break;
    }
    case 1: {                   /* an EdDSA input */
      gnutls_sign_algorithm_t algo = take_algorithm (&in);
      uint8_t ch = fuzz_u8 (&in), hc = fuzz_u8 (&in), damage = fuzz_u8 (&in);
      size_t hash = hc < 3 ? 32u + 16u * hc : hc;
      if (hc >= 0xf0) {
        /* TLS 1.2's ECDHE parameters: a group of the list (or one
         * past it), its public value's length, one more or less. */
        size_t g = (hc & 7) % (NGROUPS + 1);
        uint16_t group = g < NGROUPS ? tls12_groups[g].group : 0x1d1d;
        uint8_t plen1 = g < NGROUPS ? tls12_groups[g].len : 32;
        len = TLS12_RANDOMS + 4 + plen1;
        memset (packet + 40, (int) id, len);
        packet[40 + TLS12_RANDOMS] = 3;
        packet[40 + TLS12_RANDOMS + 1] = (uint8_t) (group >> 8);
        packet[40 + TLS12_RANDOMS + 2] = (uint8_t) group;
        packet[40 + TLS12_RANDOMS + 3] = plen1;
        packet[40 + TLS12_RANDOMS + 4] = 4;
        if (hc & 8)
          len = (damage & 1) ? len + 1 : len - 1;
        else if (damage > 0)
          packet[40 + TLS12_RANDOMS + (damage - 1) % 5] ^= 1;
      } else {
        len = VERIFY_PREFIX + hash;
        if (len > KEY_MAX_SIGN_INPUT + 1)
          len = KEY_MAX_SIGN_INPUT + 1;
        memset (packet + 40, ' ', 64);
        memcpy (packet + 40 + 64, server_context, CONTEXT_LEN + 1);
        memset (packet + 40 + VERIFY_PREFIX, (int) id, len - VERIFY_PREFIX);
        if (damage > 0)
          packet[40 + (damage - 1) % VERIFY_PREFIX] ^= 1;
      }
      put_header (IPC_KEY_SIGN, 0, (uint32_t) len, id, 0, algo);
      n = apply_changes (ch, (uint32_t) len, &nfds);
      break;
    }
    case 2: {                   /* a PSK user */
      uint8_t uc = fuzz_u8 (&in), ch;
      if (uc < 3 * NUSERS) {
        const char *name = user_name (uc % NUSERS);
        len = strlen (name);
        memcpy (packet + 40, name, len);
        if (uc / NUSERS == 1)
          packet[40 + len++] = 'z';
        else if (uc / NUSERS == 2)
          len--;
      } else {
        len = fuzz_u8 (&in);
        memset (packet + 40, 'a', len);
        k = fuzz_span (&in, len, &p);
        memcpy (packet + 40, p, k);
      }
      ch = fuzz_u8 (&in);
      put_header (IPC_KEY_PSK, 0, (uint32_t) len, id, 0, 0);
      n = apply_changes (ch, (uint32_t) len, &nfds);
      break;
    }
    case 3:                     /* raw bytes */
      n = fuzz_u16 (&in) % (sizeof packet + 1);
      memset (packet, 0, n);
      k = fuzz_span (&in, n, &p);
      memcpy (packet, p, k);
      nfds = fuzz_u8 (&in) % 5;
      if (n == 0)
        nfds = 0;               /* (not sent with nothing, and not read) */
      break;
    case 4:                     /* nothing to read */
      FUZZ_CHECK (dispatch () == NOTHING, "fatal() with nothing to read");
      FUZZ_CHECK (take_answer (drain, sizeof drain) == -1, "an answer to nothing");
      continue;
    case 5:
      fake_now_ms += fuzz_u16 (&in) / 4;  /* up to 16 s */
      continue;
    default:                    /* the front-end goes */
      front_end_goes ();
      return 0;
    }
    if (!exchange (&s, packet, n, nfds))
      break;
  }
  fuzz_exit_jump = NULL;
  return 0;
}
