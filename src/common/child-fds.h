/*
 * child-fds.h: the fixed file descriptors each child finds after exec
 * (or, for a fetcher forked by the launcher, after child_place_fds).
 * The supervisor puts them there (children.c, fetchers.c, tls-files.c);
 * child_start checks that they are open; nothing else is inherited.
 */
#ifndef NBDCURLD_CHILD_FDS_H
#define NBDCURLD_CHILD_FDS_H

#include <assert.h>

#define CHILD_FD_PEER             3   /* front-end: control socket to supervisor;
                                         fetcher: data socket to front-end */
#define CHILD_FD_CONFIG           4   /* pipe: configuration messages, then EOF */
#define FRONTEND_FD_FIRST_LISTENER 5  /* listeners, or -s client read then write */
#define CHILD_FD_DATA_AREA        5   /* fetcher: the data area (memfd) */
#define CHILD_FD_DATA_PIPE        6   /* fetcher: the data pipe's write end */
#define CHILD_FD_EXPORT           7   /* fetcher of a file: export: the image,
                                         opened by the supervisor */
#define CHILD_FD_SCRIPTS          7   /* fetcher of a network export with
                                         FETCHER_HEADER_SCRIPT or
                                         FETCHER_COOKIE_SCRIPT: its script
                                         channel to the supervisor (a
                                         SOCK_SEQPACKET socket).  file:
                                         exports take no scripts, so the
                                         number is free there. */
#define CHILD_FD_CA_BUNDLE        7   /* fetcher of a network export with
                                         ca_bundle_len > 0: its CA
                                         certificates, a sealed memfd
                                         (ca-bundle.h); after the script
                                         channel (8) when there is one */
#define CHILD_FD_CACHE_FIRST      7   /* fetcher of a network export with
                                         cache_entries > 0: its export's read
                                         cache (cache-layout.h), a sealed
                                         memfd or an unlinked file; after
                                         the script channel and the CA
                                         certificates, those it has (7, 8
                                         or 9) */
/* With --tls, the front-end's socket to the key holder follows its
 * listeners (or the -s client's two fds). */
#define KEYHOLDER_FD_KEY          5   /* key holder: the private key file */
#define KEYHOLDER_FD_PSK          6   /* key holder: the PSK file */

/* A fetcher's descriptors, CHILD_FD_PEER to CHILD_FD_EXPORT (or
 * CHILD_FD_SCRIPTS, then CHILD_FD_CA_BUNDLE, then the cache), as the
 * supervisor passes them to the launcher. */
#define LAUNCH_MAX_FDS            7u
static_assert (CHILD_FD_CACHE_FIRST + 2 - CHILD_FD_PEER + 1 == LAUNCH_MAX_FDS &&
               CHILD_FD_CACHE_FIRST == CHILD_FD_SCRIPTS &&
               CHILD_FD_SCRIPTS == CHILD_FD_EXPORT && CHILD_FD_CA_BUNDLE == CHILD_FD_SCRIPTS,
               "a fetcher's descriptors");

#endif
