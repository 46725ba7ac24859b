/*
 * limits-keyholder.h: the key holder's own bounds (keyholder.c): the PSK
 * file it reads and how fast it answers.  What it may be asked is
 * keyholder-wire.h's.
 */
#ifndef NBDCURLD_LIMITS_KEYHOLDER_H
#define NBDCURLD_LIMITS_KEYHOLDER_H

/* The PSK file (--tls-psk), read by the key holder only: room for
 * thousands of "user:hexkey" lines. */
#define MAX_PSK_FILE_SIZE         (1024u * 1024)
/* The key holder answers at most KEY_OPS_BURST requests at once, then
 * KEY_OPS_PER_SECOND: a taken-over front-end gets a slow signing oracle
 * (TLS 1.3 signature schemes only), never the key.  The burst is twice
 * DEFAULT_MAX_CLIENTS, so that every client connecting at once is served
 * without waiting. */
#define KEY_OPS_BURST             512u
#define KEY_OPS_PER_SECOND        256u

#endif
