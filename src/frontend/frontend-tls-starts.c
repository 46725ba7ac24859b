/*
 * frontend-tls-starts.c: each client address's share of the key holder.
 *
 * Every TLS handshake with a certificate or a PSK costs the key holder a
 * request, so the front-end lets each address begin only so many
 * (TLS_STARTS_PER_ADDRESS_*, a token bucket per address) before
 * tls_start (frontend-tls.c) refuses it with EAGAIN: one address cannot
 * keep the key holder busy for all the others.  The buckets are a small
 * fixed table, TLS_START_SHARES slots probed by the address's hash.
 */
#include <string.h>
#include <sys/socket.h>

#include "clock.h"
#include "frontend.h"
#include "limits-frontend-tls.h"
#include "token-bucket.h"

struct tls_start_share {
  struct client_address from;
  struct token_bucket starts;
};

static struct tls_start_share start_shares[TLS_START_SHARES];

static uint32_t
address_hash (const struct client_address *a)
{
  uint32_t h = 2166136261u ^ (uint32_t) a->family;   /* FNV-1a */
  size_t i;

  for (i = 0; i < sizeof a->addr; i++)
    h = (h ^ a->addr[i]) * 16777619u;
  return h;
}

/* May this client begin a TLS handshake now?  Its address's bucket
 * (TLS_STARTS_PER_ADDRESS_*), found among TLS_START_SHARE_PROBES slots
 * or put in the one of them whose bucket is the fullest (an unused one is
 * full).  Clients without an address (Unix socket, -s) always may. */
bool
tls_start_allowed (const struct client *c)
{
  const uint64_t now = monotonic_ms ();
  uint32_t h = address_hash (&c->from), i;
  struct tls_start_share *share = NULL, *fullest = NULL;
  uint64_t fullest_level = 0;

  if (c->from.family != AF_INET && c->from.family != AF_INET6)
    return true;
  for (i = 0; i < TLS_START_SHARE_PROBES; i++) {
    struct tls_start_share *s = &start_shares[(h + i) % TLS_START_SHARES];
    uint64_t level;
    if (s->starts.filled_ms != 0 && s->from.family == c->from.family &&
        memcmp (s->from.addr, c->from.addr, sizeof s->from.addr) == 0) {
      share = s;
      break;
    }
    level = token_bucket_level (&s->starts, now, TLS_STARTS_PER_ADDRESS_BURST,
                                TLS_STARTS_PER_ADDRESS_PER_SECOND);
    if (fullest == NULL || level > fullest_level) {
      fullest = s;
      fullest_level = level;
    }
  }
  if (share == NULL) {
    share = fullest;
    share->from = c->from;
    share->starts = (struct token_bucket) { 0 };
  }
  return token_bucket_take (&share->starts, now, TLS_STARTS_PER_ADDRESS_BURST,
                            TLS_STARTS_PER_ADDRESS_PER_SECOND);
}
