/*
 * token-bucket.h: a token bucket in thousandths of a token, on a
 * millisecond clock the caller reads: full at `burst` tokens, refilled at
 * `per_second`.  A bucket that was never used (all zero) is full.
 */
#ifndef NBDCURLD_TOKEN_BUCKET_H
#define NBDCURLD_TOKEN_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct token_bucket {
  uint64_t millitokens;
  uint64_t filled_ms;           /* 0: never used */
};

/* The bucket's tokens at now_ms (in thousandths), refilled. */
static inline uint64_t
token_bucket_level (const struct token_bucket *b, uint64_t now_ms, unsigned burst,
                    unsigned per_second)
{
  const uint64_t full = (uint64_t) burst * 1000;
  uint64_t level;

  if (b->filled_ms == 0 || now_ms < b->filled_ms ||
      now_ms - b->filled_ms >= full / per_second)
    return full;
  level = b->millitokens + (now_ms - b->filled_ms) * per_second;
  return level > full ? full : level;
}

/* Take one token: true if there was one. */
static inline bool
token_bucket_take (struct token_bucket *b, uint64_t now_ms, unsigned burst,
                   unsigned per_second)
{
  uint64_t level = token_bucket_level (b, now_ms, burst, per_second);

  b->filled_ms = now_ms;
  if (level < 1000) {
    b->millitokens = level;
    return false;
  }
  b->millitokens = level - 1000;
  return true;
}

#endif /* NBDCURLD_TOKEN_BUCKET_H */
