/* unit-keyholder-parse.c: the key holder's checks of the front-end's
 * requests (src/keyholder/keyholder-parse.c) against hostile ones, TAP
 * output.  The headers have passed the table of messages (flags, fields,
 * payload sizes of 1 to KEY_MAX_SIGN_INPUT); these are their payloads. */
#include <stdint.h>
#include <string.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include "ipc-messages.h"
#include "keyholder-parse.h"
#include "keyholder-wire.h"
#include "unit.h"

#define CONTEXT "TLS 1.3, server CertificateVerify"
#define PREFIX_LEN (64 + sizeof CONTEXT)      /* with its zero */
#define RANDOMS_LEN 64u                        /* a TLS 1.2 client's and server's */

static uint8_t data[KEY_MAX_SIGN_INPUT];

/* The request for the first len bytes of data, in a buffer of exactly
 * that size: under a sanitizer, a check that reads past it is reported
 * even where the verdict would not change. */
static enum sign_request
sign (gnutls_sign_algorithm_t algo, bool hashed, uint64_t flags, uint32_t len)
{
  const struct ipc_header h = {
    .type = IPC_KEY_SIGN, .flags = hashed ? IPC_KEY_SIGN_HASHED : 0, .id = 1,
    .length = (uint32_t) algo, .offset = flags, .payload_len = len,
  };
  uint8_t *exact = malloc (len);
  enum sign_request r;

  if (exact == NULL) {
    printf ("Bail out! malloc\n");
    exit (1);
  }
  memcpy (exact, data, len);
  r = check_sign_request (&h, exact);
  free (exact);
  return r;
}

/* What TLS 1.3 signs, with a transcript hash of hash bytes; its length. */
static uint32_t
tls13_input (uint32_t hash)
{
  memset (data, ' ', 64);
  memcpy (data + 64, CONTEXT, sizeof CONTEXT);
  memset (data + PREFIX_LEN, 0xab, hash);
  return (uint32_t) PREFIX_LEN + hash;
}

/* TLS 1.2's randoms and ECDHE parameters: a named curve, the group, and
 * a point of point_len bytes starting with first; its length. */
static uint32_t
tls12_input (uint16_t group, uint8_t point_len, uint8_t first)
{
  memset (data, 0x5a, RANDOMS_LEN);
  data[RANDOMS_LEN] = 3;
  data[RANDOMS_LEN + 1] = (uint8_t) (group >> 8);
  data[RANDOMS_LEN + 2] = (uint8_t) group;
  data[RANDOMS_LEN + 3] = point_len;
  memset (data + RANDOMS_LEN + 4, 0x11, point_len);
  data[RANDOMS_LEN + 4] = first;
  return RANDOMS_LEN + 4 + point_len;
}

static void
hashed (void)
{
  CHECK (sign (GNUTLS_SIGN_ECDSA_SECP256R1_SHA256, true, 0, 32) == SIGN_ACCEPTABLE,
         "P-256 SHA-256 hash accepted");
  CHECK (sign (GNUTLS_SIGN_RSA_PSS_RSAE_SHA384, true, GNUTLS_PRIVKEY_SIGN_FLAG_RSA_PSS, 48) ==
         SIGN_ACCEPTABLE, "RSA-PSS SHA-384 hash with GnuTLS's PSS flag accepted");
  CHECK (sign (GNUTLS_SIGN_RSA_SHA512, true, 0, 64) == SIGN_ACCEPTABLE,
         "RSA SHA-512 hash accepted");
  CHECK (sign (GNUTLS_SIGN_ECDSA_SECP256R1_SHA256, true, 0, 31) == SIGN_REFUSED,
         "hash a byte short refused");
  CHECK (sign (GNUTLS_SIGN_ECDSA_SECP256R1_SHA256, true, 0, 33) == SIGN_REFUSED,
         "hash a byte long refused");
  CHECK (sign (GNUTLS_SIGN_RSA_SHA512, true, 0, 32) == SIGN_REFUSED,
         "hash of another hash's size refused");
  CHECK (sign (GNUTLS_SIGN_RSA_SHA1, true, 0, 20) == SIGN_REFUSED, "SHA-1 scheme refused");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, true, 0, 32) == SIGN_REFUSED,
         "hash for EdDSA refused");
  CHECK (sign ((gnutls_sign_algorithm_t) 0x7777, true, 0, 32) == SIGN_REFUSED,
         "unknown scheme refused");
}

/* GnuTLS's sign flags: the PSS one only, never from the front-end's
 * choice of anything else. */
static void
sign_flags (void)
{
  CHECK (sign (GNUTLS_SIGN_ECDSA_SECP256R1_SHA256, true, 1, 32) == SIGN_MALFORMED,
         "another GnuTLS flag is malformed");
  CHECK (sign (GNUTLS_SIGN_ECDSA_SECP256R1_SHA256, true,
               GNUTLS_PRIVKEY_SIGN_FLAG_RSA_PSS | (1ull << 32), 32) == SIGN_MALFORMED,
         "a flag past 32 bits is malformed");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, UINT64_MAX, tls13_input (32)) == SIGN_MALFORMED,
         "every flag is malformed, before the form is looked at");
}

static void
tls13 (void)
{
  uint32_t len;

  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, tls13_input (32)) == SIGN_ACCEPTABLE,
         "TLS 1.3 input with a SHA-256 transcript accepted");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED448, false, 0, tls13_input (48)) == SIGN_ACCEPTABLE,
         "TLS 1.3 input with a SHA-384 transcript accepted");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, tls13_input (64)) == SIGN_ACCEPTABLE,
         "TLS 1.3 input with a SHA-512 transcript accepted");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, tls13_input (33)) == SIGN_REFUSED,
         "transcript hash of no hash's size refused");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, tls13_input (0)) == SIGN_REFUSED,
         "prefix without a transcript hash refused");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, 63) == SIGN_REFUSED,
         "input shorter than the prefix refused");
  len = tls13_input (32);
  data[10] = 'x';
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, len) == SIGN_REFUSED,
         "damaged spaces refused");
  len = tls13_input (32);
  data[64 + 9] = 'c';                   /* "client" */
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, len) == SIGN_REFUSED,
         "another context refused");
  len = tls13_input (32);
  data[PREFIX_LEN - 1] = 1;
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, len) == SIGN_REFUSED,
         "context without its zero refused");
  CHECK (sign (GNUTLS_SIGN_ECDSA_SECP256R1_SHA256, false, 0, tls13_input (32)) == SIGN_REFUSED,
         "whole input for a hashed scheme refused");
}

static void
tls12 (void)
{
  uint32_t len;

  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, tls12_input (29, 32, 0x42)) ==
         SIGN_ACCEPTABLE, "x25519 parameters accepted");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, tls12_input (23, 65, 4)) ==
         SIGN_ACCEPTABLE, "uncompressed P-256 parameters accepted");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED448, false, 0, tls12_input (25, 133, 4)) ==
         SIGN_ACCEPTABLE, "uncompressed P-521 parameters accepted");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, tls12_input (23, 65, 2)) == SIGN_REFUSED,
         "compressed P-256 point refused");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, tls12_input (23, 32, 4)) == SIGN_REFUSED,
         "point of another group's size refused");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, tls12_input (0x7777, 32, 4)) ==
         SIGN_REFUSED, "unknown group refused");
  len = tls12_input (29, 32, 0x42);
  data[RANDOMS_LEN] = 1;
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, len) == SIGN_REFUSED,
         "curve not named refused");
  len = tls12_input (29, 32, 0x42);
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, len + 1) == SIGN_REFUSED,
         "byte after the point refused");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, len - 1) == SIGN_REFUSED,
         "point cut short refused");
  CHECK (sign (GNUTLS_SIGN_EDDSA_ED25519, false, 0, RANDOMS_LEN + 3) == SIGN_REFUSED,
         "parameters without a point length refused");
}

static int
psk (const char *name, uint32_t len, char user[MAX_PSK_USERNAME + 1])
{
  const struct ipc_header h = { .type = IPC_KEY_PSK, .id = 1, .payload_len = len };
  return parse_psk_request (&h, (const uint8_t *) name, user);
}

static void
psk_names (void)
{
  static char longest[MAX_PSK_USERNAME + 2];
  char user[MAX_PSK_USERNAME + 1];

  CHECK (psk ("alice", 5, user) == 0 && strcmp (user, "alice") == 0, "user name");
  CHECK (psk ("alice", 3, user) == 0 && strcmp (user, "ali") == 0,
         "user name as long as the payload");
  CHECK (psk ("al\0ce", 5, user) == -1, "NUL inside refused");
  CHECK (psk ("alice\0", 6, user) == -1, "NUL terminator refused");
  memset (longest, 'u', MAX_PSK_USERNAME + 1);
  CHECK (psk (longest, MAX_PSK_USERNAME, user) == 0 && strlen (user) == MAX_PSK_USERNAME,
         "longest user name");
  CHECK (psk (longest, MAX_PSK_USERNAME + 1, user) == -1, "user name over the limit refused");
}

int
main (void)
{
  hashed ();
  sign_flags ();
  tls13 ();
  tls12 ();
  psk_names ();
  return UNIT_END ();
}
