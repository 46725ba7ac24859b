/*
 * config.h: the configuration each child receives from the supervisor on
 * CHILD_FD_CONFIG, as internal messages, followed by IPC_CONFIG_END and
 * EOF.  Secrets such as credentials inside URLs travel this way, never on a
 * command line or in the environment.
 */
#ifndef NBDCURLD_CONFIG_H
#define NBDCURLD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "nbdcurld.h"

struct export_info {          /* what the front-end knows of an export */
  char *name;
  char *description;          /* "" when none */
  bool readonly;
};

struct frontend_config {
  uint32_t flags;             /* FRONTEND_* */
  uint32_t handshake_timeout;
  uint32_t nlisteners;
  uint32_t client_memory;     /* --client-memory, bytes */
  uint32_t max_clients;       /* --max-clients */
  uint32_t nexports;
  struct export_info *exports;
};

struct fetcher_config {
  uint32_t flags;             /* FETCHER_* */
  uint32_t connections;
  uint32_t connect_timeout;
  uint32_t timeout;
  uint32_t stall_timeout;     /* 0: DEFAULT_STALL_TIMEOUT */
  char *url;                  /* may hold credentials: never log it raw */
  char *cainfo;               /* "" when unset */
  char *capath;               /* "" when unset */
  char *export_name;
  char *auth_user;            /* --auth-user, "" when unset */
  char *auth_password;        /* --auth-password, "" when unset: never log it */
};

/* Supervisor side: write the whole configuration and IPC_CONFIG_END.
 * Returns 0 or -1 with errno. */
int config_send_frontend (int fd, const struct frontend_config *c);
int config_send_fetcher (int fd, const struct fetcher_config *c);

/* Child side: read and check it all; any malformed message is fatal (the
 * supervisor is the only writer, so it is a bug, not an attack). */
void config_recv_frontend (int fd, struct frontend_config *c);
void config_recv_fetcher (int fd, struct fetcher_config *c);

#endif
