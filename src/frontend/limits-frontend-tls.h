/*
 * limits-frontend-tls.h: the front-end's side of NBD over TLS
 * (frontend-tls.c): how many handshakes each address may start, how a
 * handshake waits for the key holder, and how TLS output is staged.  The
 * modes and files are tls-modes.h's; what the key holder answers is
 * keyholder-wire.h's.
 */
#ifndef NBDCURLD_LIMITS_FRONTEND_TLS_H
#define NBDCURLD_LIMITS_FRONTEND_TLS_H

/* TLS handshakes (STARTTLS) each client address may begin: at most
 * TLS_STARTS_PER_ADDRESS_BURST at once, then
 * TLS_STARTS_PER_ADDRESS_PER_SECOND.  Each costs the key holder a
 * signature (or a PSK look-up) out of KEY_OPS_PER_SECOND for all: so a
 * flooding address spends its own share, not the others'
 * (frontend-tls-starts.c, tls_start_allowed).  Unix-socket and -s
 * clients, whom the socket's permissions admitted, have no address and
 * no such limit.  The front-end
 * remembers TLS_START_SHARES addresses; a full table forgets the one whose
 * bucket would be the fullest, which costs it at most a fresh burst. */
#define TLS_STARTS_PER_ADDRESS_BURST      64u
#define TLS_STARTS_PER_ADDRESS_PER_SECOND 32u
#define TLS_START_SHARES                  1024u
#define TLS_START_SHARE_PROBES            8u
/* How long a TLS handshake waits for one answer of the key holder (in a
 * fiber of its own: the loop goes on).  A signature is quick, so a key
 * holder that takes this long is stuck or flooded, and the handshake
 * fails.  Each handshake's fiber has a stack of HANDSHAKE_STACK_SIZE
 * (address space: GnuTLS's handshake touches a few tens of KiB of it),
 * from STARTTLS to the end of the handshake. */
#define HANDSHAKE_STACK_SIZE      (256u * 1024)
#define KEY_ANSWER_TIMEOUT_MS     2000u
/* Subject alternative names of a client certificate looked at for san:
 * rules. */
#define MAX_CLIENT_SANS           16u
/* A TLS client's output: plaintext copied into records a stage at a
 * time, and the records written at once from a wire buffer a little
 * larger (TLS 1.3 adds 22 bytes per 16 KiB record).  128 KiB: one read
 * of the data pipe and one write per stage. */
#define TLS_STAGE_SIZE            (128u * 1024)
#define TLS_WIRE_SIZE             (TLS_STAGE_SIZE + 4096u)

#endif
