/*
 * supervisor.h: the supervisor's view of the command line (options*.c):
 * the parsed options, which supervisor.c holds and its other files read
 * (after the start's steps that fill them in: urlcheck-client.c,
 * exports.c).
 */
#ifndef NBDCURLD_SUPERVISOR_H
#define NBDCURLD_SUPERVISOR_H

#include <stdbool.h>
#include <stdint.h>

#include "access-rules.h"
#include "curl-keys.h"
#include "limits-server.h"
#include "limits-web.h"
#include "url.h"

/* nbdkit curl parameters (key=value) for one export, or for all when
 * given before the first --export: a field per key (curl-keys.h), NULL,
 * 0 or -1 when not given, and then the long options decide
 * (options-check.c). */
#define SETTING_TEXT(name, field, check, max, fallback, sent, conf, help) const char *field;
#define SETTING_NUMBER(name, field, parse, min, max, fallback, help) uint32_t field;
#define SETTING_CHOICE(name, field, parse, min, max, fallback, help) int64_t field;
#define SETTING_SWITCH(name, field, fallback, flag_when_false, help) int field;
#define SETTING_LIST(name, field, add, merge, max, sent, help) char *field; unsigned n##field;
struct fetch_settings {
  CURL_KEYS (SETTING_TEXT, SETTING_NUMBER, SETTING_CHOICE, SETTING_SWITCH, CURL_KEY_SKIP,
             SETTING_LIST, CURL_KEY_SKIP)
};
#undef SETTING_TEXT
#undef SETTING_NUMBER
#undef SETTING_CHOICE
#undef SETTING_SWITCH
#undef SETTING_LIST

struct export_spec {
  char *name;
  char *url;                 /* may hold credentials: log log_url */
  char *log_url;             /* the URL checker's url_for_log (url-check.c) */
  char *script_url;          /* the URL without user name and password (the
                                checker's), NULL: url has none; scripts' $url */
  bool has_password;         /* user:password@ in the URL */
  bool url_from_file;        /* given as +FILE, not on the command line */
  const char *conf_path;     /* the --config file that gave the URL, or NULL */
  unsigned conf_line;        /* and the line of its url = */
  char *description;         /* "" when none */
  bool readonly;             /* -r, --export-ro, or a protocol that cannot write */
  enum url_kind kind;
  char *file_path;           /* file: only */
  int fd;                    /* file: only: the image, opened before the
                                supervisor dropped its rights; each fetcher
                                of the export gets it at CHILD_FD_EXPORT */
  struct fetch_settings keys;  /* after options_parse: the keys and long
                                  options merged, what its fetchers get */
  char *auth_password;       /* read from keys.password_source, or NULL */
  char *cookie;              /* read or given by keys.cookie_source, or NULL */
  /* The proxy: keys.proxy, or with --proxy-from-env the environment's
   * for the URL's scheme (then no_proxy too); NULL for none. */
  char *proxy;               /* may hold credentials: log proxy_log_url */
  char *proxy_log_url;       /* the URL checker's url_for_log */
  char *noproxy;             /* no_proxy / NO_PROXY, or NULL */
  char *proxy_password;      /* read from keys.proxy_password_source, or NULL */
  char *cookie_lines;        /* read from keys.cookie_file ("" for ""), or NULL */
  /* keys.cainfo and keys.capath's certificates (ca-bundle.h), read as
   * root at start: a sealed memfd each fetcher gets at CHILD_FD_CA_BUNDLE
   * (valid when ca_bundle_len > 0). */
  int ca_bundle_fd;
  uint32_t ca_bundle_len;
  /* Its read cache (cache-layout.h): the geometry options_check_cache
   * chose (0 entries: none), and the backing cache-backing.c made, given
   * to each of its fetchers after the descriptors above (else -1). */
  uint32_t cache_entries, cache_block_size;
  int cache_fd;
};

/* One --allow rule, for one export or (export == ALL_EXPORTS) all. */
#define ALL_EXPORTS UINT32_MAX
struct access_spec {
  uint32_t export;
  uint32_t kind;             /* ACCESS_* (access-rules.h) */
  uint32_t prefix;
  uint8_t addr[16];
  const char *name;          /* identities */
  const char *text;          /* as given, for messages */
};

struct options {
  struct export_spec exports[MAX_EXPORTS];
  unsigned nexports;
  bool readonly;             /* -r */
  bool single;               /* -s */
  bool foreground;           /* -f */
  bool exit_with_parent;
  bool print_uri;
  bool verbose;
  uint32_t log_to;           /* --log: LOG_TO_* (log-destination.h) */
  bool insecure;
  const char *port;          /* NULL: default */
  const char *ipaddr;        /* NULL: all addresses */
  int family;                /* -4, -6: AF_INET or AF_INET6; else AF_UNSPEC */
  const char *unix_path;     /* NULL, a path, or "-" */
  const char *run;           /* --run CMD */
  const char *pidfile;
  const char *cainfo, *capath;
  const char *auth_user;     /* --auth-user, or NULL */
  const char *auth_password_source;  /* --auth-password: -, -FD or +FILE */
  const char *user, *group;  /* --user, --group: children run as these */
  bool sandbox_debug;        /* --sandbox-debug */
  bool proxy_from_env;       /* --proxy-from-env */
  uint32_t connections;
  uint32_t timeout;
  uint32_t connect_timeout;
  uint32_t stall_timeout;
  uint32_t handshake_timeout;
  uint32_t retries;          /* --retries */
  uint32_t retry_delay_ms;   /* --retry-delay */
  uint32_t client_memory;    /* --client-memory, bytes */
  uint32_t max_clients;      /* --max-clients */
  uint32_t spare_fetchers;   /* --spare-fetchers */
  bool exec_fetchers;        /* --exec-fetchers: no launcher */
  uint32_t tls;              /* --tls: TLS_OFF, TLS_ON, TLS_REQUIRE */
  const char *tls_certificates;   /* directory */
  const char *tls_psk;            /* file */
  const char *tls_priority;
  bool tls_verify_peer;
  struct access_spec rules[MAX_ACCESS_RULES];
  unsigned nrules;
  uint16_t allow_ports[MAX_ALLOWED_PORTS];  /* --allow-port */
  unsigned nallow_ports;
  bool allow_local_redirects;     /* --allow-local-redirects */
  bool curl_verbose;              /* -D curl.verbose=1 */
  uint32_t multi_conn_mode;       /* multi-conn-mode=: MULTI_CONN_* */
  /* Statistics (stats-report.c). */
  bool stats;                     /* --stats: print them at exit */
  const char *stats_file;         /* --stats-file, statsfile= */
  bool stats_append;              /* statsappend=true: append, not replace */
  bool stats_prometheus;          /* --stats-format=prometheus */
  uint32_t stats_interval;        /* --stats-interval, seconds; 0: none */
  uint64_t cache_bytes;           /* --cache, bytes; 0: none */
  const char *cache_dir;          /* --cache-dir, or NULL: in memory */
  bool cache_filter;              /* --filter=cache */
  bool prefetch_all;              /* --prefetch=all, --filter=scan */
};

/* nbdkit's multi-conn filter's multi-conn-mode= (options-nbdkit.c):
 * AUTO (auto, plugin, or not given) advertises multi-conn when every
 * export is read-only; DISABLE never does; ALWAYS (emulate, unsafe) asks
 * for it with writable exports too, which is refused (exports.c). */
enum { MULTI_CONN_AUTO, MULTI_CONN_DISABLE, MULTI_CONN_ALWAYS };

/* statsfile=, statsappend=, statsthreshold= (nbdkit's stats filter's
 * parameters): taken into o and true, or false for any other key
 * (options-stats.c). */
bool stats_filter_key (struct options *o, const char *arg);
/* --stats-format's argument. */
void stats_format_option (struct options *o, const char *arg);

/* Why a header line (header=, a header-script's) is refused, or NULL
 * (options-nbdkit.c). */
const char *header_line_problem (const char *line);

/* Parse argv into o; prints a message and exits 1 on any usage error,
 * exits 0 after --help or --version. */
void options_parse (int argc, char **argv, struct options *o);
/* The keys a fetcher gets as given (curl-keys.h's TO_FETCHER strings and
 * SWITCH flags), from an export's merged keys into its configuration. */
struct fetcher_config;
void fetch_settings_to_fetcher (const struct fetch_settings *k, struct fetcher_config *fc);

#endif
