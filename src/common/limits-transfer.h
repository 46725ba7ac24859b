/*
 * limits-transfer.h: how a fetcher's web transfers are paced by default:
 * connections, timeouts, the slowest transfer accepted, and retries.  The
 * supervisor fills them in where the command line leaves them
 * (options-check.c); the fetcher applies them (fetcher-http.c through libcurl,
 * fetcher-direct.c itself).  Their upper bounds are limits-web.h's.
 */
#ifndef NBDCURLD_LIMITS_TRANSFER_H
#define NBDCURLD_LIMITS_TRANSFER_H

/* HTTP/FTP connections kept per fetcher (--connections): enough that a
 * client's parallel reads seldom wait for one another's connection. */
#define DEFAULT_CONNECTIONS       16u
/* Seconds to connect (--connect-timeout), and the minimum rate
 * of a transfer: one whose body comes at fewer than MIN_TRANSFER_RATE
 * bytes a second on average over DEFAULT_STALL_TIMEOUT seconds
 * (--stall-timeout) fails; so does one whose reply's header section,
 * interim replies included, is not complete that long after the request.
 * Through libcurl these are CURLOPT_LOW_SPEED_LIMIT and _TIME (libcurl
 * counts only body bytes too); direct reads apply the same rule
 * themselves.  --timeout sets a hard limit on a whole transfer. */
#define DEFAULT_CONNECT_TIMEOUT   30u
#define DEFAULT_STALL_TIMEOUT     60u
#define MIN_TRANSFER_RATE         1u
/* Reads that fail for a reason that may pass (no connection, a
 * connection reset or closed early, a body shorter than its
 * Content-Range, a stall or --connect-timeout, HTTP 408, 429, 500, 502,
 * 503, 504) are tried again, up to --retries (retries=) times, after a
 * delay that starts at --retry-delay (retry-delay=) and doubles each time
 * (unless retry-exponential=no) up to RETRY_MAX_DELAY_MS; each wait is
 * between half and all of it (equal jitter, so that the fetchers of a
 * busy export do not come back all at once).  A Retry-After (seconds or
 * an HTTP-date) lengthens a wait, up to RETRY_AFTER_MAX_MS
 * (limits-reply.h).  --timeout bounds a read with all its retries.  The
 * defaults are those of nbdkit's retry filter: 5 retries, 2 s doubling,
 * about a minute in all. */
#define DEFAULT_RETRIES           5u
#define RETRY_BASE_DELAY_MS       2000u

#endif
