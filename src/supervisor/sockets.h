/*
 * sockets.h: the listening sockets and the server's URI (sockets.c).
 */
#ifndef NBDCURLD_SUPERVISOR_SOCKETS_H
#define NBDCURLD_SUPERVISOR_SOCKETS_H

#include <stdbool.h>

#include "supervisor.h"

/* systemd socket activation: take LISTEN_FDS's sockets, before anything
 * else opens a file. */
void take_activated_sockets (void);

/* Listen as o says (-U, -p, -i, --run alone: a private socket), or check
 * that o asks for nothing activation or -s rules out; o is read from here
 * on. */
void sockets_listen (const struct options *o);

/* Started by socket activation (take_activated_sockets found sockets). */
bool sockets_activated (void);

/* Whether descriptor fd is one of the listening sockets. */
bool sockets_is_listener (long fd);

/* The listening sockets: how many, the i-th, and closing them all (once
 * the front-end has its copies). */
unsigned sockets_count (void);
int sockets_listener (unsigned i);
void sockets_close_all (void);

/* The Unix socket's path (to remove at exit), or NULL; the mkdtemp'd
 * directory it is in for -U - and --run, or NULL. */
const char *sockets_unix_path (void);
const char *sockets_private_dir (void);

/* The server's NBD URI for --print-uri and --run (malloc'd). */
char *server_uri (void);

#endif
