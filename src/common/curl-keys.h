/*
 * curl-keys.h: the KEY=VALUE parameters (nbdkit's curl plugin's and its
 * retry filters'), one row each.  Everything that lists the keys comes
 * from this table: the key list of --help, the "did you mean"
 * suggestions, the parse (options-nbdkit.c) and the merge of an export's
 * keys over the defaults (options-check.c), struct fetch_settings
 * (supervisor.h), and the keys a fetcher gets as given: their fields in
 * struct fetcher_config, their place in its wire message (config.h,
 * config.c; the protocol test counts them here) and the flags of SWITCH
 * keys (options-check.c's fetch_settings_to_fetcher).
 *
 * Adding a key: a row here, what the fetcher does with it (its setopt in
 * fetcher-http-setup.c, and fetcher-direct.c or direct-*.c if it changes
 * the direct path), a test and the man page.
 *
 * The rows, in the order "did you mean" tries them (the first of equally
 * near keys wins), one kind of row per kind of value:
 *
 *   TEXT (name, field, check, max, fallback, sent, conf, help)
 *     a string, "const char *field", NULL when not given; check (key,
 *     value, max) returns the value or refuses it.  conf: how a --config
 *     file gives it: KEY_PATH (relative to the file's directory),
 *     KEY_SECRET (only as +FILE or -FD) or KEY_VALUE (as written).
 *   NUMBER (name, field, parse, min, max, fallback, help)
 *     "uint32_t field", 0 when not given; parse (key, value, min, max).
 *   CHOICE (name, field, parse, min, max, fallback, help)
 *     "int64_t field", -1 when not given; parse (key, value, min, max).
 *   SWITCH (name, field, fallback, flag_when_false, help)
 *     true or false, "int field", -1 when not given; a fetcher whose key
 *     is false gets flag_when_false (a FETCHER_* flag of fetcher-wire.h) set.
 *   ALSO (name, field, parse, min, max)
 *     another name for a CHOICE row's field (nbdkit's retry-request
 *     filter's names); errors name the key as given.
 *   LIST (name, field, add, merge, max, sent, help)
 *     repeatable: "char *field" of entries and "unsigned nFIELD", their
 *     count; add (settings, value) appends one, merge (export, defaults)
 *     puts the defaults' in.
 *   NAME_ONLY (name, check)
 *     known, with no setting of its own: check (key, value, &url) takes
 *     or refuses it (url= sets the export's URL).
 *
 * fallback: what an export that gives the key nowhere gets (an expression
 * of struct options *o, supervisor.h, evaluated in options-check.c's
 * merge).  sent: TO_FETCHER when a fetcher
 * gets the value as given (a string of at most max bytes, "" when not
 * given), SUPERVISOR when the supervisor reads or judges it and sends
 * what it makes of it, or nothing.  help: HELP_LISTED (--help's list of
 * the curl plugin's keys, sorted after url), HELP_RETRY (its list of the
 * retry filters', in this order) or HELP_UNLISTED.
 */
#ifndef NBDCURLD_CURL_KEYS_H
#define NBDCURLD_CURL_KEYS_H

#include "fetcher-wire.h"
#include "limits-strings.h"
#include "limits-web.h"

#define CURL_KEYS(TEXT, NUMBER, CHOICE, SWITCH, ALSO, LIST, NAME_ONLY)                \
  NAME_ONLY ("url", take_url)                                                         \
  /* CA certificates: read as root by the supervisor (ca-bundle.c). */                \
  TEXT ("cainfo", cainfo, text_as_given, 0, o->cainfo,                                \
        SUPERVISOR, KEY_PATH, HELP_LISTED)                                           \
  TEXT ("capath", capath, text_as_given, 0, o->capath,                                \
        SUPERVISOR, KEY_PATH, HELP_LISTED)                                           \
  NUMBER ("connections", connections, number_in_range, 1, MAX_CONNECTIONS,            \
          o->connections, HELP_LISTED)                                                \
  /* cookie=: the cookie, or -, -FD or +FILE (read by the supervisor). */             \
  TEXT ("cookie", cookie_source, text_cookie, 0, NULL,                                \
        SUPERVISOR, KEY_SECRET, HELP_LISTED)                                         \
  SWITCH ("followlocation", followlocation, 1, FETCHER_NO_REDIRECTS, HELP_LISTED)     \
  /* header= lines, "Name: value\r\n" each. */                                        \
  LIST ("header", headers, add_header, merge_headers, MAX_EXTRA_HEADER_BYTES,         \
        TO_FETCHER, HELP_LISTED)                                                      \
  /* ipresolve=v4: 4, v6: 6, any: 0. */                                               \
  CHOICE ("ipresolve", ip_version, parse_ipresolve, 0, 0, 0, HELP_LISTED)             \
  /* password=: -, -FD or +FILE, read by the supervisor. */                           \
  TEXT ("password", password_source, text_secret_source, 0, o->auth_password_source,  \
        SUPERVISOR, KEY_SECRET, HELP_LISTED)                                         \
  /* protocols=: FETCHER_PROTO_* (the URL checker's), 0: all. */                      \
  NUMBER ("protocols", protocols, parse_protocols, 0, 0, 0, HELP_LISTED)              \
  /* resolve= entries, "...\n" each. */                                               \
  LIST ("resolve", resolve, add_resolve, merge_resolve, MAX_RESOLVE_BYTES,            \
        TO_FETCHER, HELP_LISTED)                                                      \
  TEXT ("ssl-cipher-list", ciphers, text_cipher_list, MAX_CIPHER_LIST, NULL,          \
        TO_FETCHER, KEY_VALUE, HELP_LISTED)                                          \
  /* ssl-version=: 10 .. 13, 0: libcurl's. */                                         \
  NUMBER ("ssl-version", tls_min, parse_tls_version, 0, 0, 0, HELP_LISTED)            \
  SWITCH ("sslverify", sslverify, !o->insecure, FETCHER_INSECURE, HELP_LISTED)        \
  SWITCH ("tcp-keepalive", tcp_keepalive, 1, FETCHER_NO_KEEPALIVE, HELP_LISTED)       \
  SWITCH ("tcp-nodelay", tcp_nodelay, 1, FETCHER_NO_NODELAY, HELP_LISTED)             \
  NUMBER ("timeout", timeout, number_in_range, 1, MAX_TIMEOUT, o->timeout,            \
          HELP_LISTED)                                                                \
  TEXT ("tls13-ciphers", tls13_ciphers, text_cipher_list, MAX_CIPHER_LIST, NULL,      \
        TO_FETCHER, KEY_VALUE, HELP_LISTED)                                          \
  TEXT ("user", auth_user, text_user_name, MAX_SECRET_LENGTH, o->auth_user,           \
        TO_FETCHER, KEY_VALUE, HELP_LISTED)                                          \
  TEXT ("user-agent", user_agent, text_user_agent, MAX_USER_AGENT, NULL,              \
        TO_FETCHER, KEY_VALUE, HELP_LISTED)                                          \
  /* Proxies, HTTP versions and Unix sockets.  proxy= is an http:// or                \
   * https:// URL that the supervisor judges; it reads proxy-password=. */            \
  CHOICE ("http-version", http_version, parse_http_version, 0, 0, FETCHER_HTTP_NONE,  \
          HELP_LISTED)                                                                \
  TEXT ("proxy", proxy, text_proxy_url, MAX_URL_LENGTH, NULL,                         \
        SUPERVISOR, KEY_VALUE, HELP_LISTED)                                          \
  TEXT ("proxy-password", proxy_password_source, text_secret_source, 0, NULL,         \
        SUPERVISOR, KEY_SECRET, HELP_LISTED)                                         \
  TEXT ("proxy-user", proxy_user, text_user_name, MAX_SECRET_LENGTH, NULL,            \
        TO_FETCHER, KEY_VALUE, HELP_LISTED)                                          \
  TEXT ("unix-socket-path", unix_socket_path, text_unix_socket_path,                  \
        MAX_UNIX_SOCKET_PATH, NULL, TO_FETCHER, KEY_PATH, HELP_LISTED)               \
  /* Scripts, run by the supervisor (scripts.c) with /bin/sh -c; their                \
   * -renew= in seconds, 0: never. */                                                 \
  TEXT ("header-script", header_script, text_script, MAX_SCRIPT_LENGTH, NULL,         \
        SUPERVISOR, KEY_VALUE, HELP_LISTED)                                          \
  NUMBER ("header-script-renew", header_script_renew, number_in_range, 1,             \
          MAX_TIMEOUT, 0, HELP_LISTED)                                                \
  TEXT ("cookie-script", cookie_script, text_script, MAX_SCRIPT_LENGTH, NULL,         \
        SUPERVISOR, KEY_VALUE, HELP_LISTED)                                          \
  NUMBER ("cookie-script-renew", cookie_script_renew, number_in_range, 1,             \
          MAX_TIMEOUT, 0, HELP_LISTED)                                                \
  /* nbdkit's retry filter's and retry-request filter's (built in).                   \
   * retry-readonly= and retry-request-open= are taken as they change                 \
   * nothing here: reads are read-only already, and opening is never                  \
   * retried (a URL that cannot be opened is the user's to fix). */                   \
  CHOICE ("retries", retries, count_in_range, 0, MAX_RETRIES, o->retries,             \
          HELP_RETRY)                                                                 \
  CHOICE ("retry-delay", retry_delay_ms, delay_in_range, 0, RETRY_MAX_DELAY_MS,       \
          o->retry_delay_ms, HELP_RETRY)                                              \
  SWITCH ("retry-exponential", retry_exponential, 1, FETCHER_RETRY_CONSTANT,          \
          HELP_RETRY)                                                                 \
  NAME_ONLY ("retry-readonly", ignored_bool)                                          \
  ALSO ("retry-request-retries", retries, count_in_range, 0, MAX_RETRIES)             \
  ALSO ("retry-request-delay", retry_delay_ms, delay_in_range, 0,                     \
        RETRY_MAX_DELAY_MS)                                                           \
  NAME_ONLY ("retry-request-open", ignored_bool)                                      \
  /* Cookies: the supervisor reads cookiefile= at start (a path, "" for the           \
   * engine alone, NULL: no engine); cookiejar= is known only to be refused           \
   * with the reason. */                                                              \
  TEXT ("cookiefile", cookie_file, text_cookie_file, MAX_PATH_LENGTH, NULL,           \
        SUPERVISOR, KEY_PATH, HELP_LISTED)                                           \
  NAME_ONLY ("cookiejar", refuse_cookiejar)                                           \
  /* nbdkit's cache filter's, for the export's read cache (options-cache.c):          \
   * its size and block size; cache-on-read=true is what it does; the                 \
   * thresholds change nothing for a cache that evicts as it fills.  Its               \
   * cache= (how writes go) is no key here: in a --config file,                        \
   * "cache = SIZE" is --cache. */                                                    \
  CHOICE ("cache-max-size", cache_bytes, parse_cache_size_key, 0, 0,                  \
          (int64_t) o->cache_bytes, HELP_UNLISTED)                                    \
  CHOICE ("cache-min-block-size", cache_block_size, parse_cache_block_key, 0, 0, 0,   \
          HELP_UNLISTED)                                                              \
  NAME_ONLY ("cache-on-read", check_cache_on_read)                                    \
  NAME_ONLY ("cache-high-threshold", ignored_cache_threshold)                         \
  NAME_ONLY ("cache-low-threshold", ignored_cache_threshold)                          \
  /* nbdkit's multi-conn filter's (built in): for the whole server, as the            \
   * filter is (options-nbdkit.c). */                                                 \
  NAME_ONLY ("multi-conn-mode", take_multi_conn_mode)                                 \
  NAME_ONLY ("multi-conn-track-dirty", take_multi_conn_track_dirty)                   \
  NAME_ONLY ("multi-conn-exportname", ignored_bool)

enum curl_key_help { HELP_UNLISTED, HELP_LISTED, HELP_RETRY };
enum curl_key_conf { KEY_VALUE, KEY_PATH, KEY_SECRET };

/* CURL_KEY_IF_SENT (sent, ...): the rest when sent is TO_FETCHER. */
#define CURL_KEY_IF_SENT(sent, ...) CURL_KEY_SENT_##sent (__VA_ARGS__)
#define CURL_KEY_SENT_TO_FETCHER(...) __VA_ARGS__
#define CURL_KEY_SENT_SUPERVISOR(...)

/* A row macro that expands to nothing, for the kinds a use skips. */
#define CURL_KEY_SKIP(...)

#endif
