/*
 * keyholder-parse.h: the front-end's requests to the key holder, their
 * payloads checked (keyholder-parse.c) after their headers passed the
 * table of messages.  Nothing here holds a key: keyholder.c decides
 * whether its key makes a scheme, and answers.
 */
#ifndef NBDCURLD_KEYHOLDER_PARSE_H
#define NBDCURLD_KEYHOLDER_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "ipc-messages.h"
#include "keyholder-wire.h"


/* IPC_KEY_SIGN: length the scheme, offset GnuTLS's sign flags, the
 * payload a hash of the scheme's hash size (IPC_KEY_SIGN_HASHED) or, for
 * EdDSA, what a TLS 1.3 or 1.2 server signs. */
enum sign_request {
  SIGN_MALFORMED,             /* flags no honest front-end sends */
  SIGN_REFUSED,               /* no TLS server signature of a scheme we make */
  SIGN_ACCEPTABLE,            /* if the key makes the scheme */
};
enum sign_request check_sign_request (const struct ipc_header *h, const uint8_t *data);

/* IPC_KEY_PSK: the payload is a user name, without NUL.  0 with user set,
 * or -1. */
int parse_psk_request (const struct ipc_header *h, const uint8_t *data,
                       char user[MAX_PSK_USERNAME + 1]);

#endif
