/*
 * options-nbdkit.c: what nbdkit's command lines carry over.  The curl
 * plugin's parameters, KEY=VALUE (their table is curl-keys.h): each
 * key's parse and check, and "did you mean" for a mistyped one; and
 * nbdkit's server options that have no long option of ours (-4, -6, -t,
 * -D, -n, -o, --filter, --log), taken or refused with what to use instead.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "config.h"
#include "fetcher-wire.h"
#include "limits-strings.h"
#include "log.h"
#include "log-destination.h"
#include "options-internal.h"

/* The keys (curl-keys.h), in the table's order. */
#define KEY_NAME_TEXT(name, field, check, max, fallback, sent, conf, help) \
  { name, help, conf },
#define KEY_NAME_NUMBER(name, field, parse, min, max, fallback, help) \
  { name, help, KEY_VALUE },
#define KEY_NAME_SWITCH(name, field, fallback, flag_when_false, help) \
  { name, help, KEY_VALUE },
#define KEY_NAME_ALSO(name, field, parse, min, max) { name, HELP_UNLISTED, KEY_VALUE },
#define KEY_NAME_LIST(name, field, add, merge, max, sent, help) { name, help, KEY_VALUE },
#define KEY_NAME_ONLY(name, check) { name, HELP_UNLISTED, KEY_VALUE },
const struct curl_key_name key_names[NKEYS] = {
  CURL_KEYS (KEY_NAME_TEXT, KEY_NAME_NUMBER, KEY_NAME_NUMBER, KEY_NAME_SWITCH,
             KEY_NAME_ALSO, KEY_NAME_LIST, KEY_NAME_ONLY)
};

/* The key called name, or -1. */
int
key_index (const char *name)
{
  size_t i;

  for (i = 0; i < NKEYS; i++)
    if (strcmp (name, key_names[i].name) == 0)
      return (int) i;
  return -1;
}

/* Is ARG key=value (and not a URL with '=' in its query)?  A key is
 * lower-case letters, digits and '-', starting with a letter. */
bool
is_key_value (const char *arg)
{
  size_t n = strspn (arg, "abcdefghijklmnopqrstuvwxyz0123456789-");
  return n > 0 && arg[n] == '=' && arg[0] >= 'a' && arg[0] <= 'z';
}

/* Edit distance, for "did you mean". */
static size_t
distance (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b), i, j, prev[64], cur[64];

  if (la >= 63 || lb >= 63)
    return 99;
  for (j = 0; j <= lb; j++)
    prev[j] = j;
  for (i = 1; i <= la; i++) {
    cur[0] = i;
    for (j = 1; j <= lb; j++) {
      size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
      size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
      cur[j] = del < ins ? (del < sub ? del : sub) : (ins < sub ? ins : sub);
    }
    memcpy (prev, cur, (lb + 1) * sizeof *prev);
  }
  return prev[lb];
}

/* The key nearest to word, or (with_options) the key or long option:
 * a configuration file names both alike. */
const char *
nearest_name (const char *word, bool with_options)
{
  const char *best = key_names[0].name;
  size_t i, d = (size_t) -1;

  for (i = 0; i < NKEYS; i++)
    if (distance (word, key_names[i].name) < d) {
      d = distance (word, key_names[i].name);
      best = key_names[i].name;
    }
  for (i = 0; with_options && long_options[i].name; i++)
    if (distance (word, long_options[i].name) < d) {
      d = distance (word, long_options[i].name);
      best = long_options[i].name;
    }
  return best;
}

__attribute__((noreturn))
static void
unknown_key (const char *key)
{
  usage_error ("unknown parameter %s=: did you mean %s=?", key, nearest_name (key, false));
}

int
parse_bool (const char *key, const char *v)
{
  if (!strcmp (v, "true") || !strcmp (v, "yes") || !strcmp (v, "on") || !strcmp (v, "1"))
    return 1;
  if (!strcmp (v, "false") || !strcmp (v, "no") || !strcmp (v, "off") || !strcmp (v, "0"))
    return 0;
  usage_error ("%s= takes true or false, not \"%s\"", key, v);
}

/* -, -FD or +FILE: where a secret is read from. */
static bool
is_secret_source (const char *v)
{
  return strcmp (v, "-") == 0 || (v[0] == '+' && v[1] != '\0') ||
         (v[0] == '-' && v[1] != '\0' && strspn (v + 1, "0123456789") == strlen (v + 1));
}

/* Append entry and end to a block of at most max_count entries and
 * max_bytes bytes (header= lines, resolve= entries). */
static void
append_entry (char **block, unsigned *count, const char *entry, const char *end,
              unsigned max_count, size_t max_bytes, const char *what)
{
  size_t have = *block ? strlen (*block) : 0, add = strlen (entry) + strlen (end);
  char *more;

  if (*count >= max_count || have + add > max_bytes)
    usage_error ("%s: at most %u of them, %zu bytes in all, per export", what, max_count,
                 max_bytes);
  more = realloc (*block, have + add + 1);
  if (more == NULL)
    fatal_errno ("realloc");
  sprintf (more + have, "%s%s", entry, end);
  *block = more;
  (*count)++;
}

/* A header line (header=, or a line a header-script printed): a field
 * name (RFC 9110 token), a colon, a value of visible characters, spaces
 * and tabs.  Headers nbdcurld writes itself, or that would change what
 * the bytes of a range mean, are refused.  Returns NULL, or why not. */
const char *
header_line_problem (const char *line)
{
  static const char token[] = "!#$%&'*+-.^_`|~0123456789"
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  static const char *const reserved[] = {
    "host", "range", "if-match", "if-none-match", "if-range", "if-unmodified-since",
    "if-modified-since", "accept-encoding", "te", "content-length",
    "transfer-encoding", "connection", "expect", "upgrade",
  };
  size_t name = strspn (line, token), i;
  const char *v;

  if (name == 0 || line[name] != ':')
    return "not a header (NAME: VALUE)";
  for (v = line + name + 1; *v; v++)
    if ((unsigned char) *v < 0x20 ? *v != '\t' : (unsigned char) *v == 0x7f)
      return "the value has a control character";
  for (i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
    if (strlen (reserved[i]) == name && strncasecmp (line, reserved[i], name) == 0)
      return "nbdcurld sends that header itself";
  return NULL;
}

static void
add_header (struct fetch_settings *k, const char *line)
{
  const char *why = header_line_problem (line);

  if (why != NULL)
    usage_error ("header=%.*s: %s", (int) strcspn (line, ":"), line, why);
  append_entry (&k->headers, &k->nheaders, line, "\r\n", MAX_EXTRA_HEADERS,
                MAX_EXTRA_HEADER_BYTES, "header=");
}

/* resolve=HOST:PORT:ADDR[,ADDR...]: libcurl connects to HOST:PORT at
 * ADDR, for exactly that host and port (IPv6 addresses in brackets). */
static void
add_resolve (struct fetch_settings *k, const char *entry)
{
  const char *host_end, *port, *addrs, *a;

  host_end = strchr (entry, ':');
  if (host_end == NULL || host_end == entry)
    goto bad;
  port = host_end + 1;
  addrs = strchr (port, ':');
  if (addrs == NULL || addrs == port || strspn (port, "0123456789") != (size_t) (addrs - port) ||
      atoi (port) < 1 || atoi (port) > 65535 || addrs[1] == '\0')
    goto bad;
  for (a = addrs + 1; *a; ) {
    char buf[INET6_ADDRSTRLEN + 2], bin[16];
    size_t len = strcspn (a, ",");
    if (len == 0 || len >= sizeof buf)
      goto bad;
    memcpy (buf, a, len);
    buf[len] = '\0';
    if (!(inet_pton (AF_INET, buf, bin) == 1 ||
          (buf[0] == '[' && buf[len - 1] == ']' &&
           (buf[len - 1] = '\0', inet_pton (AF_INET6, buf + 1, bin) == 1))))
      goto bad;
    a += len + (a[len] == ',');
  }
  if (strcspn (entry, " \t\r\n") != strlen (entry))
    goto bad;
  append_entry (&k->resolve, &k->nresolve, entry, "\n", MAX_RESOLVE_ENTRIES,
                MAX_RESOLVE_BYTES, "resolve=");
  return;
 bad:
  usage_error ("resolve=%s: not HOST:PORT:ADDRESS[,ADDRESS...] (IPv6 addresses "
               "in brackets)", entry);
}

/* ssl-version=: the oldest TLS version the web server may speak, with
 * nbdkit's (libcurl's) names.  SSL 2 and 3 are refused: broken, and
 * OpenSSL 3 speaks neither. */
static uint32_t
parse_tls_version (const char *key, const char *v, uint32_t min, uint32_t max)
{
  (void) key, (void) min, (void) max;
  if (strcmp (v, "default") == 0)
    return 0;
  if (strcmp (v, "tlsv1") == 0 || strcmp (v, "tlsv1.0") == 0)
    return 10;
  if (strcmp (v, "tlsv1.1") == 0)
    return 11;
  if (strcmp (v, "tlsv1.2") == 0)
    return 12;
  if (strcmp (v, "tlsv1.3") == 0)
    return 13;
  if (strcmp (v, "sslv2") == 0 || strcmp (v, "sslv3") == 0)
    usage_error ("ssl-version=%s: SSL 2 and 3 are broken and not available; "
                 "the oldest is tlsv1", v);
  usage_error ("ssl-version= takes default, tlsv1, tlsv1.0, tlsv1.1, tlsv1.2 or "
               "tlsv1.3, not \"%s\"", v);
}

/* An OpenSSL cipher string: printable, no spaces (OpenSSL separates by
 * ':'), bounded.  OpenSSL itself judges it at the first connection. */
static const char *
text_cipher_list (const char *key, const char *v, uint32_t max)
{
  size_t i;

  if (v[0] == '\0' || strlen (v) > max)
    usage_error ("%s= takes 1 to %u bytes", key, max);
  for (i = 0; v[i]; i++)
    if ((unsigned char) v[i] <= 0x20 || (unsigned char) v[i] >= 0x7f)
      usage_error ("%s=%s: ciphers are separated by ':', without spaces", key, v);
  return v;
}

/* protocols=http,https,...: the schemes an export may use. */
static uint32_t
parse_protocols (const char *key, const char *list, uint32_t min, uint32_t max)
{
  static const struct { const char *name; uint32_t bit; } known[] = {
    { "http", FETCHER_PROTO_HTTP }, { "https", FETCHER_PROTO_HTTPS },
    { "ftp", FETCHER_PROTO_FTP }, { "ftps", FETCHER_PROTO_FTPS },
  };
  uint32_t bits = 0;
  const char *p = list;

  (void) key, (void) min, (void) max;
  while (*p) {
    size_t len = strcspn (p, ","), i;
    for (i = 0; i < sizeof known / sizeof known[0]; i++)
      if (strlen (known[i].name) == len && strncasecmp (p, known[i].name, len) == 0)
        break;
    if (i == sizeof known / sizeof known[0])
      usage_error ("protocols=%s: %.*s is none of http, https, ftp and ftps, the "
                   "protocols nbdcurld serves", list, (int) len, p);
    bits |= known[i].bit;
    p += len + (p[len] == ',');
  }
  if (bits == 0)
    usage_error ("protocols= needs at least one of http, https, ftp and ftps");
  return bits;
}

/* http-version=: nbdkit's names (libcurl's CURL_HTTP_VERSION_*).  Whether
 * this libcurl speaks HTTP/2 or HTTP/3 is the URL checker's to say
 * (urlcheck-client.c), as the supervisor has no libcurl. */
static int64_t
parse_http_version (const char *key, const char *v, uint32_t min, uint32_t max)
{
  static const char *const names[] = {
    [FETCHER_HTTP_NONE] = "none", [FETCHER_HTTP_1_0] = "1.0", [FETCHER_HTTP_1_1] = "1.1",
    [FETCHER_HTTP_2_0] = "2.0", [FETCHER_HTTP_2TLS] = "2TLS",
    [FETCHER_HTTP_2_PRIOR_KNOWLEDGE] = "2-prior-knowledge", [FETCHER_HTTP_3] = "3",
    [FETCHER_HTTP_3ONLY] = "3only",
  };
  size_t i;

  (void) key, (void) min, (void) max;
  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp (v, names[i]) == 0)
      return (int64_t) i;
  usage_error ("http-version= takes none, 1.0, 1.1, 2.0, 2TLS, 2-prior-knowledge, "
               "3 or 3only, not \"%s\"", v);
}

/* A proxy= URL: bounded, printable.  Its scheme, host and port are the
 * URL checker's to judge (urlcheck-client.c); a password in it is refused
 * there. */
static const char *
text_proxy_url (const char *key, const char *v, uint32_t max)
{
  size_t i;

  (void) key;
  if (v[0] == '\0' || strlen (v) > max)
    usage_error ("proxy= takes a URL of 1 to %u bytes, as in proxy=http://proxy:3128",
                 max);
  for (i = 0; v[i]; i++)
    if ((unsigned char) v[i] <= 0x20 || (unsigned char) v[i] >= 0x7f)
      usage_error ("proxy=: a space or control character in the URL");
  return v;
}

/* The checks of TEXT keys (curl-keys.h): the value, or a refusal. */
static const char *
text_as_given (const char *key, const char *v, uint32_t max)
{
  (void) key, (void) max;
  return v;
}

static const char *
text_user_name (const char *key, const char *v, uint32_t max)
{
  if (v[0] == '\0' || strlen (v) > max)
    usage_error ("%s= needs a name of 1 to %u bytes", key, max);
  return v;
}

static const char *
text_secret_source (const char *key, const char *v, uint32_t max)
{
  (void) max;
  if (!is_secret_source (v))
    usage_error ("%s= takes -, -FD or +FILE, not a password: a command "
                 "line is visible to every local user", key);
  return v;
}

static const char *
text_unix_socket_path (const char *key, const char *v, uint32_t max)
{
  (void) key;
  if (v[0] == '\0' || strlen (v) > max)
    usage_error ("unix-socket-path= takes a path of 1 to %u bytes (the most a "
                 "Unix socket address holds)", max);
  return v;
}

/* cookiefile=: the supervisor reads it at start (exports.c). */
static const char *
text_cookie_file (const char *key, const char *v, uint32_t max)
{
  (void) key;
  if (strlen (v) > max)
    usage_error ("cookiefile= takes a path of at most %u bytes", max);
  return v;
}

static const char *
text_cookie (const char *key, const char *v, uint32_t max)
{
  (void) key, (void) max;
  if (v[0] == '\0')
    usage_error ("cookie= needs a cookie, or -, -FD or +FILE");
  return v;
}

static const char *
text_user_agent (const char *key, const char *v, uint32_t max)
{
  size_t i;

  (void) key;
  if (v[0] == '\0' || strlen (v) > max)
    usage_error ("user-agent= takes 1 to %u bytes", max);
  for (i = 0; v[i]; i++)
    if ((unsigned char) v[i] < 0x20 || (unsigned char) v[i] == 0x7f)
      usage_error ("user-agent=: a control character");
  return v;
}

/* header-script=, cookie-script= (scripts.c): run with /bin/sh -c. */
static const char *
text_script (const char *key, const char *v, uint32_t max)
{
  if (v[0] == '\0' || strlen (v) > max)
    usage_error ("%s= takes a script of 1 to %u bytes", key, max);
  return v;
}

/* The parses of NUMBER and CHOICE keys.  The retry filters' keys are
 * named without their '=' in errors, as nbdkit's filters name them. */
static uint32_t
number_in_range (const char *key, const char *v, uint32_t min, uint32_t max)
{
  char what[MAX_KEY_NAME + 2];

  snprintf (what, sizeof what, "%s=", key);
  return parse_uint (what, v, min, max);
}

static int64_t
count_in_range (const char *key, const char *v, uint32_t min, uint32_t max)
{
  return parse_uint (key, v, min, max);
}

static int64_t
delay_in_range (const char *key, const char *v, uint32_t min, uint32_t max)
{
  (void) min;
  return parse_delay (key, v, max);
}

static int64_t
parse_ipresolve (const char *key, const char *v, uint32_t min, uint32_t max)
{
  (void) key, (void) min, (void) max;
  if (strcmp (v, "any") == 0 || strcmp (v, "whatever") == 0)
    return 0;
  if (strcmp (v, "v4") == 0 || strcmp (v, "4") == 0)
    return 4;
  if (strcmp (v, "v6") == 0 || strcmp (v, "6") == 0)
    return 6;
  usage_error ("ipresolve= takes any, v4 or v6, not \"%s\"", v);
}

/* The checks of NAME_ONLY keys. */
static void
take_url (const char *key, const char *v, const char **url)
{
  (void) key;
  if (*url)
    usage_error ("url= and a URL: give one URL");
  *url = v;
}

static void
ignored_bool (const char *key, const char *v, const char **url)
{
  (void) url;
  (void) parse_bool (key, v);
}

/* Nothing can write a cookiejar=. */
__attribute__((noreturn))
static void
refuse_cookiejar (const char *key, const char *v, const char **url)
{
  (void) key, (void) url;
  usage_error ("cookiejar=%s: nbdcurld cannot save cookies: each client's fetcher "
               "runs in a sandbox that may write no file, and the supervisor, which "
               "could, never sees the web server's replies.  Give the cookies with "
               "cookiefile=FILE (cookiefile= alone keeps those the server sets for "
               "as long as a client is connected), or cookie=+FILE", v);
}

/* nbdkit's multi-conn filter's multi-conn-mode=, for the whole server
 * (options_check copies it into the options). */
static uint32_t multi_conn_mode = MULTI_CONN_AUTO;

uint32_t
nbdkit_multi_conn_mode (void)
{
  return multi_conn_mode;
}

/* auto and plugin: advertised as the exports allow (every one read-only),
 * as nbdcurld does anyway; disable: never; emulate and unsafe: always,
 * which exports.c refuses when an export is writable. */
static void
take_multi_conn_mode (const char *key, const char *v, const char **url)
{
  (void) key, (void) url;
  if (strcmp (v, "auto") == 0 || strcmp (v, "plugin") == 0)
    multi_conn_mode = MULTI_CONN_AUTO;
  else if (strcmp (v, "disable") == 0)
    multi_conn_mode = MULTI_CONN_DISABLE;
  else if (strcmp (v, "emulate") == 0 || strcmp (v, "unsafe") == 0)
    multi_conn_mode = MULTI_CONN_ALWAYS;
  else
    usage_error ("multi-conn-mode= takes auto, emulate, plugin, unsafe or disable, "
                 "not \"%s\"", v);
}

/* The filter tracks dirty data to make flushes reach every connection;
 * an export that advertises multi-conn here is read-only, with nothing
 * to flush. */
static void
take_multi_conn_track_dirty (const char *key, const char *v, const char **url)
{
  (void) key, (void) url;
  if (strcmp (v, "fast") != 0 && strcmp (v, "connection") != 0 &&
      strcmp (v, "conn") != 0 && strcmp (v, "off") != 0)
    usage_error ("multi-conn-track-dirty= takes fast, connection or off, not \"%s\"", v);
  notice ("multi-conn-track-dirty=%s has no effect: multi-conn is advertised only "
          "for read-only exports, which have nothing to flush", v);
}

/* KEY=VALUE into k (an export's, or the defaults before any --export):
 * the key's row parses it, and returns. */
#define PARSE_TEXT(name, field, check, max, fallback, sent, conf, help)       \
  if (strcmp (key, name) == 0) { k->field = check (key, v, max); return; }
#define PARSE_NUMBER(name, field, parse, min, max, fallback, help)            \
  if (strcmp (key, name) == 0) { k->field = parse (key, v, min, max); return; }
#define PARSE_SWITCH(name, field, fallback, flag_when_false, help)            \
  if (strcmp (key, name) == 0) { k->field = parse_bool (key, v); return; }
#define PARSE_ALSO(name, field, parse, min, max)                              \
  if (strcmp (key, name) == 0) { k->field = parse (key, v, min, max); return; }
#define PARSE_LIST(name, field, add, merge, max, sent, help)                  \
  if (strcmp (key, name) == 0) { add (k, v); return; }
#define PARSE_NAME_ONLY(name, check)                                          \
  if (strcmp (key, name) == 0) { check (key, v, url); return; }
void
add_key (struct fetch_settings *k, const char *arg, const char **url)
{
  const char *eq = strchr (arg, '='), *v = eq + 1;
  char key[MAX_KEY_NAME + 1];

  snprintf (key, sizeof key, "%.*s", (int) (eq - arg), arg);
  CURL_KEYS (PARSE_TEXT, PARSE_NUMBER, PARSE_NUMBER, PARSE_SWITCH, PARSE_ALSO, PARSE_LIST,
             PARSE_NAME_ONLY)
  unknown_key (key);
}

/* nbdkit's server options that have no long option of ours.  Each is
 * taken when nbdcurld does the same thing, or refused with what to use:
 * never silently dropped when it would change what is served. */
void
nbdkit_option (struct options *o, int c, const char *arg)
{
  switch (c) {
  case '4':
  case '6':
    if (o->family != AF_UNSPEC)
      usage_error ("-4 and -6: give one");
    o->family = c == '4' ? AF_INET : AF_INET6;
    break;
  case 't':
    /* nbdkit's thread pool serves requests; here every client has its own
     * fetcher, with --connections transfers at once. */
    parse_uint ("-t (threads)", arg, 1, 1024);
    break;
  case 'D':
    /* nbdkit's curl.verbose=1: libcurl's conversation in the log, here
     * with secrets masked (fetcher-trace.c). */
    if (strncmp (arg, "curl.verbose=", 13) == 0) {
      o->curl_verbose = parse_uint ("-D curl.verbose", arg + 13, 0, UINT32_MAX) != 0;
      break;
    }
    usage_error ("-D %s: of nbdkit's debug flags only curl.verbose=1 applies (a "
                 "trace of each web conversation, secrets masked); -v prints "
                 "nbdcurld's debug messages", arg);
  case 'n':
    break;            /* --newstyle: the only protocol nbdcurld speaks */
  case 'o':
    usage_error ("-o (--oldstyle): nbdcurld speaks only the newstyle protocol, "
                 "as current clients (qemu, libnbd, nbd-client) do: drop -o");
  case OPT_FILTER:
    /* Built in: advertised when every export is read-only; the filter's
     * parameters are taken as KEY=VALUE (multi-conn-mode=). */
    if (strcmp (arg, "multi-conn") == 0)
      break;
    /* Built in: every read is retried (--retries, retries=); the
     * filters' parameters are taken as KEY=VALUE. */
    if (strcmp (arg, "retry") == 0 || strcmp (arg, "retry-request") == 0)
      break;
    /* Built in: sequential readers are detected and read ahead. */
    if (strcmp (arg, "readahead") == 0)
      break;
    /* Built in: statistics (statsfile= is --stats-file). */
    if (strcmp (arg, "stats") == 0)
      break;
    /* nbdkit's cache: each export's read cache (options-cache.c), of
     * cache-max-size= or --cache, else CACHE_DEFAULT_BYTES. */
    if (strcmp (arg, "cache") == 0) {
      o->cache_filter = true;
      break;
    }
    /* nbdkit's scan: --prefetch=all, into the read cache. */
    if (strcmp (arg, "scan") == 0) {
      o->prefetch_all = true;
      break;
    }
    /* Several exports are built in too, each with a name of its own. */
    if (strcmp (arg, "exportname") == 0)
      usage_error ("--filter=exportname: nbdcurld serves several exports itself: "
                   "give each as --export NAME=URL (and --description NAME=TEXT); "
                   "clients list them with NBD_OPT_LIST");
    usage_error ("--filter=%s: nbdcurld has no filters; multi-conn, retry, "
                 "retry-request, readahead and stats are built in, and the others are "
                 "not available", arg);
  case OPT_LOG:
    if (log_to_of_name (arg, &o->log_to) == -1)
      usage_error ("--log=%s: give stderr, syslog or null (the default is syslog "
                   "when nbdcurld goes into the background, stderr otherwise)", arg);
    break;
  }
}
