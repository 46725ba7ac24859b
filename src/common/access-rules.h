/*
 * access-rules.h: --allow, the rules that say which clients may use which
 * export: as the supervisor parses them (options.c), sends them
 * (IPC_CONFIG_ACCESS, one rule a message) and the front-end checks them
 * (access.c, frontend-tls.c for the TLS identities).
 */
#ifndef NBDCURLD_ACCESS_RULES_H
#define NBDCURLD_ACCESS_RULES_H

#include <stdint.h>

/* One --allow rule. */
struct access_rule_wire {
  uint32_t export_index;       /* < nexports */
  uint32_t kind;               /* ACCESS_* */
  uint32_t prefix;             /* ACCESS_ADDRESS: bits, <= 32 or 128 */
  uint32_t name_len;           /* identities: 1 .. MAX_ACCESS_NAME; else 0 */
  uint8_t addr[16];            /* ACCESS_ADDRESS: IPv4 (4 bytes) or IPv6 */
  /* then the name */
};
#define ACCESS_ADDRESS4     1u
#define ACCESS_ADDRESS6     2u
#define ACCESS_UNIX         3u
#define ACCESS_PSK          4u         /* PSK user name */
#define ACCESS_CERT_DN      5u         /* certificate subject, RFC 4514 */
#define ACCESS_CERT_SAN     6u         /* DNS name or e-mail address */

/* Access rules over all exports: a rule is looked at for each new client
 * of its export, so the count bounds that work as well as the memory. */
#define MAX_ACCESS_RULES          256u
#define MAX_ACCESS_NAME           1024u    /* a DN, SAN or PSK user name */

#endif
