/*
 * limits-server.h: the server-wide bounds of the command line that the
 * supervisor parses (options.c) and the front-end is configured with
 * (config.c checks them again): clients at once, the handshake's time,
 * exports.
 */
#ifndef NBDCURLD_LIMITS_SERVER_H
#define NBDCURLD_LIMITS_SERVER_H

/* Seconds a client has to finish the handshake (--handshake-timeout):
 * long enough for a client on a slow link that negotiates TLS and several
 * options, short enough that idle connections do not pile up. */
#define DEFAULT_HANDSHAKE_TIMEOUT 30u
#define MAX_HANDSHAKE_TIMEOUT     3600u

/* Clients served at once (--max-clients); every per-role budget is
 * derived from it (SECURITY.md, "Resource budgets"). */
#define DEFAULT_MAX_CLIENTS       256u
#define MAX_MAX_CLIENTS           4096u

/* Exports on one command line. */
#define MAX_EXPORTS               64u

/* --stats-interval's largest value, seconds: a day.  Longer and a
 * report at exit or on SIGUSR1 serves as well. */
#define MAX_STATS_INTERVAL        86400u

#endif
