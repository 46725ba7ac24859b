/*
 * access.c: who may use which export (--allow), decided in the front-end
 * before LIST, INFO, GO or EXPORT_NAME reveal or open anything.
 *
 * An export's rules are of two kinds.  Where the client is: addresses
 * with a prefix length, and "unix" (a Unix-socket client, or -s).  Who
 * the client is: a PSK user name, or the subject or a subject alternative
 * name of a client certificate GnuTLS has verified.  With rules of a kind,
 * the client must match one of them; with both kinds, one of each.  An
 * export without rules is open to every client that got this far (through
 * TLS, when it is required).
 */
#include <string.h>
#include <sys/socket.h>

#include "access-rules.h"
#include "frontend.h"

/* Do the first `bits` bits of a and b agree? */
static bool
prefix_matches (const uint8_t *a, const uint8_t *b, uint32_t bits)
{
  uint32_t whole = bits / 8, rest = bits % 8;

  if (memcmp (a, b, whole) != 0)
    return false;
  if (rest == 0)
    return true;
  return ((a[whole] ^ b[whole]) & (uint8_t) (0xff << (8 - rest))) == 0;
}

static bool
address_matches (const struct access_rule *a, const struct client_address *from)
{
  static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

  switch (a->kind) {
  case ACCESS_ADDRESS4:
    if (from->family == AF_INET)
      return prefix_matches (a->addr, from->addr, a->prefix);
    /* An IPv4 client on a dual-stack listener: ::ffff:a.b.c.d. */
    return from->family == AF_INET6 && memcmp (from->addr, v4_mapped, 12) == 0 &&
           prefix_matches (a->addr, from->addr + 12, a->prefix);
  case ACCESS_ADDRESS6:
    return from->family == AF_INET6 && prefix_matches (a->addr, from->addr, a->prefix);
  case ACCESS_UNIX:
    return from->family == AF_UNIX || from->family == 0;    /* 0: -s */
  default:
    return false;
  }
}

static bool
identity_matches (const struct access_rule *a, const struct client *c)
{
  const char *have;

  switch (a->kind) {
  case ACCESS_PSK:
    have = tls_psk_user (c);
    return have != NULL && strcmp (have, a->name) == 0;
  case ACCESS_CERT_DN:
    have = tls_cert_dn (c);
    return have != NULL && strcmp (have, a->name) == 0;
  case ACCESS_CERT_SAN:
    return tls_cert_has_san (c, a->name);
  default:
    return false;
  }
}

bool
export_allowed (const struct client *c, uint32_t export_index)
{
  bool where_rules = false, where_ok = false, who_rules = false, who_ok = false;
  uint32_t i;

  for (i = 0; i < fe.config.nrules; i++) {
    const struct access_rule *a = &fe.config.rules[i];
    if (a->export_index != export_index)
      continue;
    if (a->kind == ACCESS_ADDRESS4 || a->kind == ACCESS_ADDRESS6 || a->kind == ACCESS_UNIX) {
      where_rules = true;
      where_ok = where_ok || address_matches (a, &c->from);
    }
    else {
      who_rules = true;
      who_ok = who_ok || identity_matches (a, c);
    }
  }
  return (!where_rules || where_ok) && (!who_rules || who_ok);
}
