/*
 * config-wire.h: the configuration messages of the front-end, its
 * exports, the fetcher launcher and the file remover, as the supervisor
 * writes them on CHILD_FD_CONFIG (config.c sends and checks them, config.h
 * holds what a child makes of them).  A fetcher's is fetcher-wire.h; the
 * TLS, --allow and key holder parts are tls-modes.h, access-rules.h and
 * keyholder-wire.h.
 */
#ifndef NBDCURLD_CONFIG_WIRE_H
#define NBDCURLD_CONFIG_WIRE_H

#include <stdint.h>

/* Front-end configuration: sent first, then nexports IPC_CONFIG_EXPORT. */
struct frontend_config_wire {
  uint32_t flags;              /* FRONTEND_* */
  uint32_t handshake_timeout;  /* seconds */
  uint32_t nexports;           /* 1 .. MAX_EXPORTS */
  uint32_t nlisteners;         /* listening sockets from FRONTEND_FD_FIRST_LISTENER;
                                  0 with FRONTEND_SINGLE */
  uint32_t client_memory;      /* bytes, MIN_ .. MAX_CLIENT_MEMORY */
  uint32_t max_clients;        /* 1 .. MAX_MAX_CLIENTS */
};
#define FRONTEND_SINGLE     (1u << 0)  /* one client on fds 5 (read) and 6 (write) */
#define FRONTEND_MULTI_CONN (1u << 1)  /* every export read-only: advertise multi-conn */
#define FRONTEND_VERBOSE    (1u << 2)
#define FRONTEND_SANDBOX_DEBUG (1u << 3)  /* --sandbox-debug: trap and name calls */

/* The fetcher launcher: how it logs and how its filter acts. */
struct launcher_config_wire {
  uint32_t flags;              /* LAUNCHER_* */
};
#define LAUNCHER_VERBOSE        (1u << 0)
#define LAUNCHER_SANDBOX_DEBUG  (1u << 1)

/* The file remover (remover.c): the files it removes when the supervisor
 * ends, each only while it is still the file made (device and inode). */
struct remover_config_wire {
  uint32_t flags;              /* REMOVER_* */
  uint32_t nfiles;             /* 1 .. REMOVER_MAX_FILES */
  /* then nfiles times a struct removed_file_wire and its path */
};
struct removed_file_wire {
  uint64_t dev;                /* st_dev of the file made */
  uint64_t ino;                /* st_ino */
  uint32_t path_len;           /* 2 .. MAX_PATH_LENGTH: an absolute path */
  uint32_t reserved;           /* 0 */
};
#define REMOVER_MAX_FILES       2u     /* the -U socket and the -P pid file */
#define REMOVER_VERBOSE         (1u << 0)
#define REMOVER_SANDBOX_DEBUG   (1u << 1)

struct export_config_wire {
  uint32_t flags;              /* EXPORT_* */
  uint32_t name_len;           /* <= NBD_MAX_STRING */
  uint32_t description_len;    /* <= NBD_MAX_STRING */
  uint32_t log_url_len;        /* <= MAX_LOG_URL_LENGTH: the URL without its
                                  credentials or query, for log lines */
  /* then name_len bytes of name, description_len bytes of description,
     log_url_len bytes of the URL */
};
#define EXPORT_READONLY     (1u << 0)

#endif
