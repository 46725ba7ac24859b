/*
 * limits-handshake.h: what one client may do before it is served
 * (handshake.c, handshake-parse.c): the options it may send, the
 * fetchers it may start, and what the front-end advertises.  The sizes of
 * an option are limits-nbd.h's.
 */
#ifndef NBDCURLD_LIMITS_HANDSHAKE_H
#define NBDCURLD_LIMITS_HANDSHAKE_H

/* Block sizes advertised (NBD_INFO_BLOCK_SIZE): any alignment works, and
 * 4096 is the page size clients align their buffers to. */
#define NBD_PREFERRED_BLOCK_SIZE  4096u
#define NBD_MIN_BLOCK_SIZE        1u
/* Options one client may send before it must pick an export. */
#define NBD_MAX_OPTIONS           32u
/* Info requests inside one INFO/GO, and queries inside one meta-context
 * option: each is bounded separately from the byte length of the option. */
#define NBD_MAX_INFO_REQUESTS     32u
#define NBD_MAX_META_QUERIES      16u
/* Fetchers one client may start during its handshake (each INFO or GO on a
 * new export starts one): backend work is bounded per connection. */
#define NBD_MAX_FETCHER_SPAWNS    4u
/* The same reason an export failed to open is logged once, then again at
 * most every this many seconds with the number of clients it failed: a
 * client that retries a broken export cannot flood the log. */
#define OPEN_FAILURE_LOG_INTERVAL 60u

#endif
