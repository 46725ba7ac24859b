/*
 * keyholder-wire.h: what passes between the key holder and its peers.
 * The supervisor configures it (IPC_CONFIG_KEYHOLDER, below; the key and
 * the PSK file are descriptors, child-fds.h); the front-end asks it to
 * sign or to look up a PSK (IPC_KEY_*, ipc-messages.h), within the bounds
 * below, which both sides and ipc-table.c check.
 */
#ifndef NBDCURLD_KEYHOLDER_WIRE_H
#define NBDCURLD_KEYHOLDER_WIRE_H

#include <stdint.h>

/* The key holder: a private key at KEYHOLDER_FD_KEY and/or a PSK file at
 * KEYHOLDER_FD_PSK, and the certificate chain the key must match. */
struct keyholder_config_wire {
  uint32_t flags;              /* KEYHOLDER_* */
  uint32_t cert_len;           /* 0 .. MAX_TLS_FILE_SIZE */
};
#define KEYHOLDER_KEY           (1u << 0)
#define KEYHOLDER_PSK           (1u << 1)
#define KEYHOLDER_VERBOSE       (1u << 2)
#define KEYHOLDER_SANDBOX_DEBUG (1u << 3)

/* PSK identities and keys (--tls-psk), as GnuTLS bounds them: a user name
 * of at most 255 bytes, a key of at most 512 bits. */
#define MAX_PSK_USERNAME          255u     /* bytes */
#define MAX_PSK_KEY               64u      /* bytes */
/* What the front-end may ask the key holder to sign: a hash for ECDSA and
 * RSA-PSS, or for EdDSA a TLS 1.3 server CertificateVerify input (64
 * spaces, the context string, a zero, a transcript hash of at most 64
 * bytes): 162 bytes at most.  A signature is at most as long as the
 * largest RSA key GnuTLS accepts (8192 bits). */
#define KEY_MAX_SIGN_INPUT        256u
#define KEY_MAX_SIGNATURE         1024u

#endif
