/*
 * key-schemes.h: the signature schemes the key holder makes for the
 * front-end's TLS handshakes, one list read by both: the front-end offers
 * GnuTLS no other (key_info), and the key holder refuses any other.
 *
 * Hashed schemes get a hash of the scheme's hash size (GnuTLS hashed what
 * it signs: the TLS 1.3 CertificateVerify input, or TLS 1.2's randoms and
 * key exchange parameters); EdDSA gets the whole input, whose form the key
 * holder checks.  Left out: SHA-1 and MD5 signatures, raw RSA (TLS 1.0
 * and 1.1), DSA, and every decryption (no RSA key exchange is offered).
 */
#ifndef NBDCURLD_KEY_SCHEMES_H
#define NBDCURLD_KEY_SCHEMES_H

#include <gnutls/gnutls.h>

enum key_scheme_input {
  KEY_SCHEME_REFUSED,
  KEY_SCHEME_HASHED,            /* a hash of the scheme's hash's size */
  KEY_SCHEME_WHOLE,             /* the signed input itself (EdDSA) */
};

static inline enum key_scheme_input
key_scheme_input (gnutls_sign_algorithm_t algo)
{
  switch (algo) {
  /* TLS 1.3 and 1.2: ECDSA bound to its curve, RSA-PSS. */
  case GNUTLS_SIGN_ECDSA_SECP256R1_SHA256:
  case GNUTLS_SIGN_ECDSA_SECP384R1_SHA384:
  case GNUTLS_SIGN_ECDSA_SECP521R1_SHA512:
  case GNUTLS_SIGN_RSA_PSS_RSAE_SHA256:
  case GNUTLS_SIGN_RSA_PSS_RSAE_SHA384:
  case GNUTLS_SIGN_RSA_PSS_RSAE_SHA512:
  case GNUTLS_SIGN_RSA_PSS_SHA256:
  case GNUTLS_SIGN_RSA_PSS_SHA384:
  case GNUTLS_SIGN_RSA_PSS_SHA512:
  /* TLS 1.2 only: ECDSA with any curve, RSA PKCS#1 v1.5. */
  case GNUTLS_SIGN_ECDSA_SHA256:
  case GNUTLS_SIGN_ECDSA_SHA384:
  case GNUTLS_SIGN_ECDSA_SHA512:
  case GNUTLS_SIGN_RSA_SHA256:
  case GNUTLS_SIGN_RSA_SHA384:
  case GNUTLS_SIGN_RSA_SHA512:
    return KEY_SCHEME_HASHED;
  case GNUTLS_SIGN_EDDSA_ED25519:
  case GNUTLS_SIGN_EDDSA_ED448:
    return KEY_SCHEME_WHOLE;
  default:
    return KEY_SCHEME_REFUSED;
  }
}

#endif /* NBDCURLD_KEY_SCHEMES_H */
