/*
 * options-internal.h: what the files of the command line's parse share.
 * options.c drives it (getopt, or a --config file's settings, each
 * option to its handler); below it options-nbdkit.c (KEY=VALUE and
 * nbdkit's server options), options-conffile.c (a --config file's
 * settings as options), options-check.c (the defaults, and what is
 * checked and merged once every option is taken), options-usage.c
 * (--help); and below them all options-values.c (the usage error and the
 * parsers of numbers, sizes and delays).
 */
#ifndef NBDCURLD_OPTIONS_INTERNAL_H
#define NBDCURLD_OPTIONS_INTERNAL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "conffile.h"
#include "curl-keys.h"
#include "supervisor.h"

/* The codes of the long options without a short one (getopt gives the
 * short ones as their letter, and 1 for an argument that is not an
 * option's). */
enum {
  OPT_EXPORT = 256, OPT_EXPORT_RO, OPT_DESCRIPTION, OPT_RUN, OPT_EXIT_WITH_PARENT,
  OPT_PRINT_URI, OPT_CAINFO, OPT_CAPATH, OPT_INSECURE, OPT_CONNECTIONS,
  OPT_TIMEOUT, OPT_CONNECT_TIMEOUT, OPT_STALL_TIMEOUT, OPT_HANDSHAKE_TIMEOUT, OPT_HELP,
  OPT_USER, OPT_GROUP, OPT_SANDBOX_DEBUG, OPT_CLIENT_MEMORY, OPT_MAX_CLIENTS, OPT_SPARE_FETCHERS, OPT_EXEC_FETCHERS, OPT_AUTH_USER,
  OPT_AUTH_PASSWORD, OPT_TLS, OPT_TLS_CERTIFICATES, OPT_TLS_PSK, OPT_TLS_VERIFY_PEER,
  OPT_TLS_PRIORITY, OPT_ALLOW, OPT_FILTER, OPT_LOG, OPT_PROXY_FROM_ENV, OPT_ALLOW_PORT,
  OPT_ALLOW_LOCAL_REDIRECTS,
  /* --config FILE, and what its [export NAME] sections turn into (never
   * given on the command line: conf_next makes them). */
  OPT_CONFIG, OPT_CONF_EXPORT, OPT_CONF_DESCRIPTION,
  OPT_RETRIES, OPT_RETRY_DELAY,
  OPT_STATS, OPT_STATS_FILE, OPT_STATS_FORMAT, OPT_STATS_INTERVAL,
  OPT_CACHE, OPT_CACHE_DIR, OPT_PREFETCH,
  OPT_END,                   /* one past the last: options.c's handlers */
};

/* getopt's table (options.c), where a --config file's names are looked
 * up too. */
extern const struct option long_options[];

/* ---- options-values.c ---- */

/* While a --config file's settings are taken: the file and line of the
 * one being taken, so that every message about it names them. */
extern const char *conf_where_path;
extern unsigned conf_where_line;

/* Prints the message (naming the --config file and line being read, if
 * any) and what to read, and exits 1. */
__attribute__((noreturn, format (printf, 1, 2)))
void usage_error (const char *fmt, ...);
/* An nbdkit parameter's boolean (true, yes, on, 1 or false, no, off, 0):
 * 1 or 0; anything else is a usage error naming key. */
int parse_bool (const char *key, const char *v);
uint32_t parse_uint (const char *what, const char *arg, uint32_t min, uint32_t max);
uint32_t parse_size (const char *what, const char *arg, uint32_t min, uint32_t max);
uint32_t parse_delay (const char *what, const char *arg, uint32_t max_ms);

/* ---- options-version.c ---- */

/* --version: the version and the libraries' "key=value" lines, then
 * exit (1 if one could not be printed). */
__attribute__((noreturn))
void print_version (void);

/* ---- options-nbdkit.c ---- */

/* The keys (curl-keys.h), in the table's order: what --help lists, what
 * "did you mean" offers, how a --config file gives each. */
struct curl_key_name {
  const char *name;
  enum curl_key_help help;
  enum curl_key_conf conf;
};
#define KEY_COUNT_ROW(...) + 1
enum {
  NKEYS = 0 CURL_KEYS (KEY_COUNT_ROW, KEY_COUNT_ROW, KEY_COUNT_ROW, KEY_COUNT_ROW,
                       KEY_COUNT_ROW, KEY_COUNT_ROW, KEY_COUNT_ROW)
};
extern const struct curl_key_name key_names[NKEYS];

int key_index (const char *name);
bool is_key_value (const char *arg);
void add_key (struct fetch_settings *k, const char *arg, const char **url);
const char *nearest_name (const char *word, bool with_options);
void nbdkit_option (struct options *o, int c, const char *arg);
uint32_t nbdkit_multi_conn_mode (void);

/* ---- options-cache.c: the read cache's options and keys ---- */

/* --cache SIZE: K, M, G or T, CACHE_MIN_BYTES .. CACHE_MAX_BYTES. */
uint64_t parse_cache_bytes (const char *what, const char *arg);
/* cache-max-size=, cache-min-block-size= (curl-keys.h's CHOICE rows). */
int64_t parse_cache_size_key (const char *key, const char *v, uint32_t min, uint32_t max);
int64_t parse_cache_block_key (const char *key, const char *v, uint32_t min, uint32_t max);
/* cache-on-read=, cache-high-threshold=, cache-low-threshold=
 * (NAME_ONLY rows): taken when they ask for what the cache does, or
 * change nothing; else refused. */
void check_cache_on_read (const char *key, const char *v, const char **url);
void ignored_cache_threshold (const char *key, const char *v, const char **url);
/* Once every option is taken: each export's cache geometry (none, or
 * cache_geometry_ok's), from its keys, --cache and --filter=cache. */
void options_check_cache (struct options *o);

/* ---- options-conffile.c ---- */

struct conf_reading {
  struct conf_file *f;        /* NULL: no file being read */
  size_t next;                /* its next item */
  bool in_section;            /* past its first [export NAME] */
  char *export_url;           /* the section's url =, for OPT_CONF_EXPORT */
  unsigned export_url_line;   /* and its line */
  bool export_ro;             /* and whether it says readonly */
};

int conf_next (struct conf_reading *cr);

/* ---- The parse's state, which options.c's handlers change and
 * options-check.c finishes with. ---- */
struct parse_state {
  struct options *o;
  const char *exportname, *url;
  bool plugin_named;          /* nbdkit's plugin name "curl" was given */
  const char *url_conf_path;  /* the --config file that gave url, or NULL */
  unsigned url_conf_line;     /* and its line */
  const char *last_conf_path; /* the last --config file read, or NULL */
  struct fetch_settings defaults;
  /* Where keys and --allow go: the export defined last, or (before any)
   * all.  A --config file's own part before its first section is for
   * all, each section for its export, and after the file the command
   * line goes on as if the file's exports were not there. */
  uint32_t scope, scope_before_conf;
  struct conf_reading conf;
  /* --description NAME=TEXT, taken once every export is defined. */
  struct { char *name; const char *text; } descriptions[MAX_EXPORTS];
  unsigned ndescriptions;
};

/* ---- options-check.c ---- */

void no_keys (struct fetch_settings *k);
void options_defaults (struct options *o);
void options_check (struct parse_state *p);

/* ---- options-usage.c ---- */

void usage (FILE *fp);

#endif
