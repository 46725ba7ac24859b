/*
 * limits-clients.h: how the front-end admits clients and starts their
 * fetchers (frontend.c, clients.c), within --max-clients
 * (limits-server.h).
 */
#ifndef NBDCURLD_LIMITS_CLIENTS_H
#define NBDCURLD_LIMITS_CLIENTS_H

/* Front-end descriptors: each client holds its socket (two descriptors
 * with -s), its fetcher's socket and the read end of its data pipe, and
 * while a fetcher is handed over, its data area's memfd as well (closed
 * once mapped).  The fixed ones: standard streams, the control socket, the
 * reserve kept for accept's EMFILE, listeners (counted apart), and a
 * margin for the sanitizer runtime and libc. */
#define FRONTEND_FDS_PER_CLIENT   4u
#define FRONTEND_FDS_FIXED        16u
/* Handshaking clients (those that still owe us an option) have no slot of
 * their own: when every slot is taken, a new connection takes the slot of
 * the longest-waiting handshake, so idle connections cannot lock good
 * clients out; and once one address holds MAX_HANDSHAKES_PER_ADDRESS
 * handshakes, its newcomers displace its own oldest, so a flood from one
 * address cannot displace others' (frontend.c, admit_client).  Clients
 * past the handshake are never displaced. */
#define MAX_HANDSHAKES_PER_ADDRESS 32u
/* Connections accepted per loop round over all listeners: a flood cannot
 * keep the loop from serving the others. */
#define ACCEPTS_PER_ROUND         16u
/* Out of descriptors (EMFILE, ENFILE) with no reserve left to refuse a
 * connection with: the listeners rest this long instead of waking the
 * loop at once again. */
#define ACCEPT_PAUSE_MS           250u
/* Fetchers the front-end has asked for and that have not yet said they
 * started (IPC_FETCHER_STARTED), at most FETCHER_STARTS_PER_CPU per CPU
 * and at least MIN_FETCHER_STARTS: further requests wait their turn in
 * the front-end.  A fetcher's start is CPU work (a fork from the
 * launcher, or with --exec-fetchers an exec and libcurl's libraries, then
 * the sandbox); hundreds started at once starve the supervisor that
 * starts them, and the last client waits for all the others.  The slot
 * is given back before the fetcher opens its URL, so a slow web server
 * holds no one else's. */
#define FETCHER_STARTS_PER_CPU    2u
#define MIN_FETCHER_STARTS        4u
/* Seconds a client may wait for its export to open (the fetcher's connect
 * and stall timeouts bound it in practice); the handshake timeout does not
 * run meanwhile, since that time is the server's, not the client's. */
#define FETCHER_OPEN_TIMEOUT      300u
/* SO_SNDBUF asked for a client's Unix socket (the kernel caps it at
 * net.core.wmem_max): several read replies per write. */
#define CLIENT_UNIX_SEND_BUFFER   (4 * 1024 * 1024)

/* A statistics report waits at most this long for room on the control
 * socket: the supervisor drains it every round, so a full socket means it
 * is busy for a moment (starting fetchers), and a report is worth a short
 * wait but never a stuck front-end. */
#define STATS_SEND_WAIT_MS        1000u

#endif
