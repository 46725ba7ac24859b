/*
 * keyholder-parse.c: the payloads of the front-end's requests to the key
 * holder, checked for what they must be.  The front-end speaks to every
 * client, so a request is untrusted: a signing request must be one of the
 * schemes of key-schemes.h, with a hash of its size or the exact form of
 * what a TLS server signs, and a PSK request a user name.
 */
#include <stdbool.h>
#include <string.h>

#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "key-schemes.h"
#include "keyholder-parse.h"
#include "wire.h"

/* What TLS 1.3 signs in a server's CertificateVerify (RFC 8446, 4.4.3):
 * 64 spaces, this context string, a zero byte, then the transcript hash. */
#define TLS13_SERVER_CONTEXT "TLS 1.3, server CertificateVerify"
#define TLS13_PREFIX_LEN (64 + sizeof TLS13_SERVER_CONTEXT)   /* with the zero */
/* A TLS 1.2 hello's random. */
#define TLS12_RANDOM_LEN 32u

/* What a TLS 1.3 server signs, with a transcript hash of a size a TLS 1.3
 * hash has. */
static bool
is_tls13_server_verify (const uint8_t *data, uint32_t len)
{
  uint32_t hash = len - (uint32_t) TLS13_PREFIX_LEN, i;

  if (len <= TLS13_PREFIX_LEN || (hash != 32 && hash != 48 && hash != 64))
    return false;
  for (i = 0; i < 64; i++)
    if (data[i] != 0x20)
      return false;
  return memcmp (data + 64, TLS13_SERVER_CONTEXT, sizeof TLS13_SERVER_CONTEXT) == 0;
}

/* What a TLS 1.2 server signs in an ECDHE ServerKeyExchange (RFC 8422,
 * 5.4): the client's and the server's randoms (32 bytes each), then the
 * parameters: curve type 3 (a named curve), the group, and its public
 * value with a length byte, of that group's size. */
static bool
is_tls12_server_params (const uint8_t *data, uint32_t len)
{
  static const struct { uint16_t group; uint8_t point_len; bool uncompressed; } groups[] = {
    { 23, 65, true },               /* secp256r1 */
    { 24, 97, true },               /* secp384r1 */
    { 25, 133, true },              /* secp521r1 */
    { 29, 32, false },              /* x25519 */
    { 30, 56, false },              /* x448 */
  };
  const uint32_t params = 2 * TLS12_RANDOM_LEN;
  uint16_t group;
  uint8_t point_len;
  size_t i;

  if (len < params + 4 || data[params] != 3)
    return false;
  group = (uint16_t) (data[params + 1] << 8 | data[params + 2]);
  point_len = data[params + 3];
  if (len != params + 4 + point_len)
    return false;
  for (i = 0; i < sizeof groups / sizeof groups[0]; i++)
    if (groups[i].group == group)
      return point_len == groups[i].point_len &&
             (!groups[i].uncompressed || data[params + 4] == 4);
  return false;
}

enum sign_request
check_sign_request (const struct ipc_header *h, const uint8_t *data)
{
  gnutls_sign_algorithm_t algo = (gnutls_sign_algorithm_t) h->length;
  bool hashed = (h->flags & IPC_KEY_SIGN_HASHED) != 0;

  /* GnuTLS's flags are ours: the front-end's GnuTLS sets no other. */
  if ((h->offset & ~(uint64_t) GNUTLS_PRIVKEY_SIGN_FLAG_RSA_PSS) != 0)
    return SIGN_MALFORMED;
  if (hashed ? key_scheme_input (algo) != KEY_SCHEME_HASHED ||
               h->payload_len != (uint32_t) gnutls_hash_get_len (
                 (gnutls_digest_algorithm_t) gnutls_sign_get_hash_algorithm (algo))
             : key_scheme_input (algo) != KEY_SCHEME_WHOLE ||
               !(is_tls13_server_verify (data, h->payload_len) ||
                 is_tls12_server_params (data, h->payload_len)))
    return SIGN_REFUSED;
  return SIGN_ACCEPTABLE;
}

int
parse_psk_request (const struct ipc_header *h, const uint8_t *data,
                   char user[MAX_PSK_USERNAME + 1])
{
  struct reader r;

  reader_init (&r, data, h->payload_len);
  return reader_get_string (&r, user, h->payload_len, MAX_PSK_USERNAME);
}
