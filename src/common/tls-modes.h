/*
 * tls-modes.h: NBD over TLS as the front-end is configured for it
 * (--tls, --tls-certificates, --tls-psk, --tls-verify-peer): the modes,
 * the configuration message (IPC_CONFIG_TLS), and the bounds of the
 * public files the supervisor reads for it.  The front-end runs the
 * handshakes (frontend-tls.c); the private key and the PSKs stay with the
 * key holder (keyholder-wire.h).
 */
#ifndef NBDCURLD_TLS_MODES_H
#define NBDCURLD_TLS_MODES_H

#include <stdint.h>

/* --tls: what the front-end offers and needs. */
struct tls_config_wire {
  uint32_t mode;               /* TLS_ON or TLS_REQUIRE */
  uint32_t flags;              /* TLS_* below */
  uint32_t priority_len;       /* 0 .. MAX_TLS_PRIORITY: "" = the default */
  uint32_t cert_len;           /* 0 .. MAX_TLS_FILE_SIZE: server-cert.pem */
  uint32_t ca_len;             /* 0 .. MAX_TLS_FILE_SIZE: ca-cert.pem */
  uint32_t crl_len;            /* 0 .. MAX_TLS_FILE_SIZE: ca-crl.pem */
  /* then the priority string, the chain, the CA and the CRL */
};
#define TLS_OFF             0u
#define TLS_ON              1u
#define TLS_REQUIRE         2u
#define TLS_CERTIFICATES    (1u << 0)  /* X.509: the key holder signs */
#define TLS_PSK             (1u << 1)  /* PSK: the key holder knows the keys */
#define TLS_VERIFY_PEER     (1u << 2)  /* client certificates required */

/* Files read by the supervisor for the front-end and the key holder: the
 * certificate chain, the CA and the CRL (public), each at most this big:
 * room for a chain of a few certificates with long keys.  Three of them
 * and a priority string fit one configuration message
 * (IPC_MAX_CONFIG_PAYLOAD). */
#define MAX_TLS_FILE_SIZE         (20u * 1024)
#define MAX_TLS_PRIORITY          1024u

#endif
