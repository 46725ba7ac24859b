/*
 * config.h: the configuration each child receives from the supervisor on
 * CHILD_FD_CONFIG, as internal messages, followed by IPC_CONFIG_END and
 * EOF.  Secrets such as credentials inside URLs travel this way, never on a
 * command line or in the environment.
 */
#ifndef NBDCURLD_CONFIG_H
#define NBDCURLD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config-wire.h"
#include "curl-keys.h"
#include "limits-nbd.h"
#include "limits-strings.h"
#include "limits-web.h"

struct export_info {          /* what the front-end knows of an export */
  char *name;
  char *description;          /* "" when none */
  char *log_url;              /* url_for_log's: never told to clients */
  bool readonly;
};

/* One --allow rule (struct access_rule_wire). */
struct access_rule {
  uint32_t export_index;
  uint32_t kind;              /* ACCESS_* */
  uint32_t prefix;            /* addresses: leading bits that must match */
  uint8_t addr[16];
  char *name;                 /* identities: the name; else NULL */
};

/* --tls and its files (public ones only: the key stays with the key
 * holder).  Lengths exclude the terminating zero each string has. */
struct tls_settings {
  uint32_t mode;              /* TLS_OFF, TLS_ON, TLS_REQUIRE */
  uint32_t flags;             /* TLS_CERTIFICATES, TLS_PSK, TLS_VERIFY_PEER */
  char *priority;             /* "" = the default */
  char *cert, *ca, *crl;      /* PEM text, "" when none */
  uint32_t cert_len, ca_len, crl_len;
};

struct frontend_config {
  uint32_t flags;             /* FRONTEND_* */
  uint32_t handshake_timeout;
  uint32_t nlisteners;
  uint32_t client_memory;     /* --client-memory, bytes */
  uint32_t max_clients;       /* --max-clients */
  uint32_t nexports;
  struct export_info *exports;
  struct tls_settings tls;
  struct access_rule *rules;  /* --allow, in command-line order */
  uint32_t nrules;
};

struct keyholder_config {
  uint32_t flags;             /* KEYHOLDER_* */
  char *cert;                 /* the chain, PEM; "" without KEYHOLDER_KEY */
  uint32_t cert_len;
};

/* The strings a fetcher gets that are not keys as given: its own, and
 * what the supervisor made of keys it reads or judges.  With the keys
 * the fetcher gets as given (curl-keys.h's TO_FETCHER rows) they are
 * struct fetcher_config's strings, in this order on the wire:
 * STRING (field, max bytes, what messages call it). */
#define FETCHER_OWN_STRINGS(STRING)                                         \
  STRING (url, MAX_URL_LENGTH, "URL")                                       \
  STRING (export_name, NBD_MAX_STRING, "export name")                       \
  STRING (auth_password, MAX_SECRET_LENGTH, "password")                     \
  STRING (cookie, MAX_COOKIE_LENGTH, "cookie")                              \
  STRING (proxy, MAX_URL_LENGTH, "proxy")                                   \
  STRING (proxy_password, MAX_SECRET_LENGTH, "proxy password")              \
  STRING (noproxy, MAX_NOPROXY_LENGTH, "no_proxy list")                     \
  STRING (cookie_file, MAX_COOKIE_FILE_BYTES, "cookie file")

#define FETCHER_KEY_TEXT(name, field, check, max, fallback, sent, conf, help) \
  CURL_KEY_IF_SENT (sent, char *field;)
#define FETCHER_KEY_LIST(name, field, add, merge, max, sent, help)          \
  CURL_KEY_IF_SENT (sent, char *field;)

struct fetcher_config {
  uint32_t flags;             /* FETCHER_* */
  uint32_t connections;
  uint32_t connect_timeout;
  uint32_t timeout;
  uint32_t stall_timeout;     /* 0: DEFAULT_STALL_TIMEOUT */
  char *url;                  /* may hold credentials: never log it raw */
  uint32_t ca_bundle_len;     /* CA certificates at CHILD_FD_CA_BUNDLE, 0: none */
  char *export_name;
  char *auth_password;        /* --auth-password, "" when unset: never log it */
  char *cookie;               /* cookie=, "" when unset: never log it */
  uint32_t ip_version;        /* ipresolve=: 0, 4 or 6 */
  uint32_t tls_min;           /* ssl-version=: 0, 10, 11, 12 or 13 */
  /* Proxies: "" when unset. */
  char *proxy;                /* proxy= (or --proxy-from-env): may hold
                                 credentials, never log it raw */
  char *proxy_password;       /* proxy-password=: never log it */
  char *noproxy;              /* no_proxy, with --proxy-from-env */
  uint32_t http_version;      /* http-version=: FETCHER_HTTP_* */
  char *cookie_file;          /* cookiefile='s lines, or "": never log it */
  uint32_t readahead;         /* prefetch store bytes, 0: none */
  uint16_t allow_ports[MAX_ALLOWED_PORTS];  /* --allow-port; 0: unused */
  uint32_t retries;           /* retries of a failed read, 0: none */
  uint32_t retry_delay_ms;    /* the first retry's delay */
  uint32_t cache_entries;     /* the export's read cache at
                                 CHILD_FD_CACHE_FIRST or after, 0: none */
  uint32_t cache_block_size;
  uint32_t cache_owner;       /* this connection, for the cache's shares */
  /* The keys a fetcher gets as given (curl-keys.h's TO_FETCHER rows), by
   * their struct fetch_settings names, "" when not given. */
  CURL_KEYS (FETCHER_KEY_TEXT, CURL_KEY_SKIP, CURL_KEY_SKIP, CURL_KEY_SKIP, CURL_KEY_SKIP,
             FETCHER_KEY_LIST, CURL_KEY_SKIP)
};

/* struct fetcher_config's strings, in their order on the wire. */
struct fetcher_string {
  size_t offset;              /* of its char * in struct fetcher_config */
  uint32_t max;               /* bytes */
  const char *what;           /* for messages */
};
extern const struct fetcher_string fetcher_strings[];

#define FETCHER_COUNT_OWN(field, max, what) + 1
#define FETCHER_COUNT_KEY_TEXT(name, field, check, max, fallback, sent, conf, help) \
  CURL_KEY_IF_SENT (sent, + 1)
#define FETCHER_COUNT_KEY_LIST(name, field, add, merge, max, sent, help)    \
  CURL_KEY_IF_SENT (sent, + 1)
#define FETCHER_NSTRINGS                                                    \
  (0 FETCHER_OWN_STRINGS (FETCHER_COUNT_OWN)                                \
   CURL_KEYS (FETCHER_COUNT_KEY_TEXT, CURL_KEY_SKIP, CURL_KEY_SKIP, CURL_KEY_SKIP, \
              CURL_KEY_SKIP, FETCHER_COUNT_KEY_LIST, CURL_KEY_SKIP))

/* String i of c: where it is, and what it is. */
static inline char **
fetcher_string (struct fetcher_config *c, unsigned i)
{
  return (char **) (void *) ((char *) c + fetcher_strings[i].offset);
}
static inline const char *
fetcher_string_value (const struct fetcher_config *c, unsigned i)
{
  return *(char *const *) (const void *) ((const char *) c + fetcher_strings[i].offset);
}

struct remover_config {
  uint32_t flags;             /* REMOVER_* */
  uint32_t nfiles;
  struct removed_file {
    char *path;               /* absolute */
    uint64_t dev, ino;        /* the file made */
  } files[REMOVER_MAX_FILES];
};

/* Supervisor side: write the whole configuration and IPC_CONFIG_END.
 * Returns 0 or -1 with errno. */
int config_send_frontend (int fd, const struct frontend_config *c);
int config_send_fetcher (int fd, const struct fetcher_config *c);
int config_send_keyholder (int fd, const struct keyholder_config *c);
int config_send_launcher (int fd, uint32_t flags);
int config_send_remover (int fd, const struct remover_config *c);

/* Child side: read and check it all; any malformed message is fatal (the
 * supervisor is the only writer, so it is a bug, not an attack). */
void config_recv_frontend (int fd, struct frontend_config *c);
void config_recv_fetcher (int fd, struct fetcher_config *c);
void config_recv_keyholder (int fd, struct keyholder_config *c);
/* The launcher's LAUNCHER_* flags. */
uint32_t config_recv_launcher (int fd);
void config_recv_remover (int fd, struct remover_config *c);

#endif
