/*
 * limits-spares.h: spare fetchers (--spare-fetchers, spares.c): fetchers
 * started ahead of need, one export's each, that have done the first part
 * of a start (a fork from the launcher or an exec, the configuration, the
 * sandbox: most of a client's wait for GO) and wait, reading nothing, for
 * IPC_FETCHER_OPEN.  The next client of that export gets one at once and
 * a replacement starts.  A spare opens nothing before it is handed on, so
 * it holds no stale size or validator and no web connection.
 */
#ifndef NBDCURLD_LIMITS_SPARES_H
#define NBDCURLD_LIMITS_SPARES_H

/* At most --spare-fetchers (at most MAX_SPARE_FETCHERS, never more than
 * --max-clients, none with -s) wait at once, over all exports.  None by
 * default: each holds megabytes of memory (mostly libcurl's libraries,
 * relocated by the loader, and OpenSSL's start) and three of the
 * supervisor's descriptors, while nbdcurld's processes together are meant
 * to need no more memory than nbdkit.
 * A client that opens several connections at once (nbdcopy with
 * multi-conn) is served at once by as many spares. */
#define DEFAULT_SPARE_FETCHERS    0u
#define MAX_SPARE_FETCHERS        32u
/* When every spare's place is taken and a client comes for an export
 * that has none, the spare that has waited longest gives way to one of
 * that export, but only after waiting this long: with more exports in use
 * than places, each place costs at most one wasted start per period. */
#define SPARE_REBALANCE_SECONDS   30u

#endif
