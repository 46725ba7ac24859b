/*
 * options.c: the command line.  Names and meanings follow nbdkit where an
 * equivalent exists, so users can switch; see man/nbdcurld.8.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config-build.h"
#include "access-rules.h"
#include "conffile.h"
#include "config.h"
#include "data-path.h"
#include "fetcher-wire.h"
#include "keyholder-wire.h"
#include "limits-nbd.h"
#include "limits-server.h"
#include "limits-spares.h"
#include "limits-strings.h"
#include "limits-transfer.h"
#include "limits-web.h"
#include "log.h"
#include "secret.h"
#include "supervisor.h"
#include "tls-modes.h"

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
};

/* "-": other arguments come in order, as option 1 (the URL, and
 * key=value parameters that apply to the --export before them).  -u and
 * -g are nbdkit's names for --user and --group; -4, -6, -t, -D, --filter
 * and --log are nbdkit's, taken or refused with what to use instead
 * (nbdkit_option). */
static const char short_options[] = "-46D:e:fg:i:p:P:rst:u:U:vV";
static const struct option long_options[] = {
  { "exportname",        required_argument, NULL, 'e' },
  { "export",            required_argument, NULL, OPT_EXPORT },
  { "export-ro",         required_argument, NULL, OPT_EXPORT_RO },
  { "description",       required_argument, NULL, OPT_DESCRIPTION },
  { "readonly",          no_argument,       NULL, 'r' },
  { "read-only",         no_argument,       NULL, 'r' },
  { "port",              required_argument, NULL, 'p' },
  { "ipaddr",            required_argument, NULL, 'i' },
  { "unix",              required_argument, NULL, 'U' },
  { "single",            no_argument,       NULL, 's' },
  { "run",               required_argument, NULL, OPT_RUN },
  { "foreground",        no_argument,       NULL, 'f' },
  { "no-fork",           no_argument,       NULL, 'f' },
  { "pidfile",           required_argument, NULL, 'P' },
  { "exit-with-parent",  no_argument,       NULL, OPT_EXIT_WITH_PARENT },
  { "print-uri",         no_argument,       NULL, OPT_PRINT_URI },
  { "verbose",           no_argument,       NULL, 'v' },
  { "version",           no_argument,       NULL, 'V' },
  { "help",              no_argument,       NULL, OPT_HELP },
  { "cainfo",            required_argument, NULL, OPT_CAINFO },
  { "capath",            required_argument, NULL, OPT_CAPATH },
  { "insecure",          no_argument,       NULL, OPT_INSECURE },
  { "connections",       required_argument, NULL, OPT_CONNECTIONS },
  { "client-memory",     required_argument, NULL, OPT_CLIENT_MEMORY },
  { "max-clients",       required_argument, NULL, OPT_MAX_CLIENTS },
  { "spare-fetchers",    required_argument, NULL, OPT_SPARE_FETCHERS },
  { "exec-fetchers",     no_argument,       NULL, OPT_EXEC_FETCHERS },
  { "auth-user",         required_argument, NULL, OPT_AUTH_USER },
  { "auth-password",     required_argument, NULL, OPT_AUTH_PASSWORD },
  { "timeout",           required_argument, NULL, OPT_TIMEOUT },
  { "connect-timeout",   required_argument, NULL, OPT_CONNECT_TIMEOUT },
  { "stall-timeout",     required_argument, NULL, OPT_STALL_TIMEOUT },
  { "handshake-timeout", required_argument, NULL, OPT_HANDSHAKE_TIMEOUT },
  { "retries",           required_argument, NULL, OPT_RETRIES },
  { "retry-delay",       required_argument, NULL, OPT_RETRY_DELAY },
  { "user",              required_argument, NULL, OPT_USER },
  { "group",             required_argument, NULL, OPT_GROUP },
  { "sandbox-debug",     no_argument,       NULL, OPT_SANDBOX_DEBUG },
  { "proxy-from-env",    no_argument,       NULL, OPT_PROXY_FROM_ENV },
  { "tls",               required_argument, NULL, OPT_TLS },
  { "tls-certificates",  required_argument, NULL, OPT_TLS_CERTIFICATES },
  { "tls-psk",           required_argument, NULL, OPT_TLS_PSK },
  { "tls-verify-peer",   no_argument,       NULL, OPT_TLS_VERIFY_PEER },
  { "tls-priority",      required_argument, NULL, OPT_TLS_PRIORITY },
  { "allow",             required_argument, NULL, OPT_ALLOW },
  { "filter",            required_argument, NULL, OPT_FILTER },
  { "log",               required_argument, NULL, OPT_LOG },
  { "allow-port",        required_argument, NULL, OPT_ALLOW_PORT },
  { "allow-local-redirects", no_argument,   NULL, OPT_ALLOW_LOCAL_REDIRECTS },
  { "threads",           required_argument, NULL, 't' },
  { "ipv4-only",         no_argument,       NULL, '4' },
  { "ipv6-only",         no_argument,       NULL, '6' },
  { "config",            required_argument, NULL, OPT_CONFIG },
  { NULL, 0, NULL, 0 },
};

/* --help gives the default delay in whole seconds. */
_Static_assert (RETRY_BASE_DELAY_MS % 1000 == 0, "RETRY_BASE_DELAY_MS in whole seconds");

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
static const struct {
  const char *name;
  enum curl_key_help help;
  enum curl_key_conf conf;
} key_names[] = {
  CURL_KEYS (KEY_NAME_TEXT, KEY_NAME_NUMBER, KEY_NAME_NUMBER, KEY_NAME_SWITCH,
             KEY_NAME_ALSO, KEY_NAME_LIST, KEY_NAME_ONLY)
};
#define NKEYS (sizeof key_names / sizeof key_names[0])

/* The key called name, or -1. */
static int
key_index (const char *name)
{
  size_t i;

  for (i = 0; i < NKEYS; i++)
    if (strcmp (name, key_names[i].name) == 0)
      return (int) i;
  return -1;
}

/* --help's list of keys, as one paragraph, wrapped at KEY_LIST_WIDTH:
 * url, the curl plugin's keys in alphabetical order, then the retry
 * filters' in the table's. */
#define KEY_LIST_WIDTH 76
static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static void
print_key_list (FILE *fp)
{
  const char *listed[NKEYS], *words[NKEYS + 16];
  size_t nlisted = 0, nretry = 0, nwords = 0, i, col;
  char text[NKEYS * 32 + 128], *w, *save;

  for (i = 0; i < NKEYS; i++)
    if (key_names[i].help == HELP_LISTED)
      listed[nlisted++] = key_names[i].name;
  qsort (listed, nlisted, sizeof listed[0], compare_names);
  strcpy (text, "(before any --export: for all): url");
  for (i = 0; i < nlisted; i++)
    sprintf (text + strlen (text), ", %s", listed[i]);
  strcat (text, "; and nbdkit's retry filters'");
  for (i = 0; i < NKEYS; i++)
    if (key_names[i].help == HELP_RETRY)
      sprintf (text + strlen (text), "%s %s", nretry++ ? "," : "", key_names[i].name);
  strcat (text, " (retries are built in).");
  for (w = strtok_r (text, " ", &save); w && nwords < sizeof words / sizeof words[0];
       w = strtok_r (NULL, " ", &save))
    words[nwords++] = w;
  for (i = 0, col = 0; i < nwords; i++) {
    size_t len = strlen (words[i]);
    if (col > 0 && col + 1 + len > KEY_LIST_WIDTH) {
      fputc ('\n', fp);
      col = 0;
    }
    col += (size_t) fprintf (fp, "%s%s", col > 0 ? " " : "", words[i]);
  }
  fputc ('\n', fp);
}

static void
usage (FILE *fp)
{
  fprintf (fp,
"Usage: nbdcurld [OPTIONS] URL [KEY=VALUE ...]\n"
"       nbdcurld [OPTIONS] [KEY=VALUE ...] --export NAME=URL [KEY=VALUE ...] ...\n"
"Serve http, https, ftp, ftps or file URLs as NBD exports.  A URL given as\n"
"+FILE is read from FILE (keeps secrets in URLs off the command line).\n"
"\n"
"KEY=VALUE: nbdkit's curl plugin parameters, for the export before them\n");
  print_key_list (fp);
  fprintf (fp,
"\n"
"Exports:\n"
"      --config FILE         settings and exports from FILE, as if given\n"
"                            here (format: nbdcurld.conf(5))\n"
"  -e, --exportname NAME     name of the single URL export (default \"\")\n"
"      --export NAME=URL     add an export (repeatable)\n"
"      --export-ro NAME=URL  add an export served read-only\n"
"      --description NAME=TEXT  describe export NAME to clients\n"
"  -r, --readonly            serve every export read-only\n"
"Listening:\n"
"  -p, --port PORT           TCP port (default 10809)\n"
"  -i, --ipaddr ADDR         listen on this address only\n"
"  -4, -6                    listen on IPv4 or IPv6 addresses only\n"
"  -U, --unix PATH           listen on a Unix socket (\"-\": a private one)\n"
"  -s, --single              serve one client on stdin/stdout\n"
"Running:\n"
"      --run CMD             serve until CMD exits ($uri, $port, $unixsocket,\n"
"                            $exportname are set); exit with its status\n"
"  -f, --foreground          do not fork into the background\n"
"  -P, --pidfile FILE        write the process id to FILE\n"
"      --exit-with-parent    exit when the parent process exits\n"
"      --print-uri           print the NBD URI of the server\n"
"Transfers:\n"
"      --cainfo FILE         CA certificates for https and ftps\n"
"      --capath DIR          directory of CA certificates\n"
"      --insecure            do not verify TLS certificates (testing only)\n"
"      --auth-user NAME      user name for the web or FTP server\n"
"      --auth-password -|-FD|+FILE  its password: asked on the terminal,\n"
"                            read from descriptor FD, or from FILE\n"
"      --connections N       connections per client to the web server (default %u)\n"
"      --client-memory SIZE  data one client's reads may hold in flight\n"
"                            (default %uM; K and M suffixes)\n"
"      --timeout SECS        fail a read that takes longer, retries included\n"
"                            (default: none)\n"
"      --connect-timeout SECS  (default %u)\n"
"      --stall-timeout SECS  fail a transfer slower than %u byte/s on average\n"
"                            over SECS, or without a reply after SECS (default %u)\n"
"      --retries N           retry a read that failed for a reason that may\n"
"                            pass up to N times (default %u; 0: never)\n"
"      --retry-delay SECS    the first retry's delay, doubling each time\n"
"                            (default %u; fractions of a second allowed)\n"
"      --handshake-timeout SECS  time a client has to negotiate (default %u)\n"
"      --proxy-from-env      use the proxy the environment names (http_proxy,\n"
"                            https_proxy, all_proxy, no_proxy) where proxy= is\n"
"                            not given; without it they are ignored\n"
"      --max-clients N       clients served at once (default %u)\n"
"      --spare-fetchers N    fetchers kept started ahead of need, so that a\n"
"                            client's export opens at once (default %u)\n"
"      --exec-fetchers       execute each fetcher anew (its own address-space\n"
"                            layout; about 16 ms more CPU per connection)\n"
"      --allow-port PORT[,PORT...]  a redirect may lead to these ports too\n"
"                            (besides the URL's, 80 and 443)\n"
"      --allow-local-redirects  a redirect may lead from another host to\n"
"                            a loopback or link-local address\n"
"NBD over TLS and access:\n"
"      --tls=off|on|require  offer TLS (on) or insist on it (require)\n"
"      --tls-certificates DIR  ca-cert.pem, server-cert.pem, server-key.pem\n"
"                            and optionally ca-crl.pem\n"
"      --tls-psk FILE        pre-shared keys, lines of USERNAME:HEXKEY\n"
"      --tls-verify-peer     require client certificates signed by the CA\n"
"      --tls-priority STR    GnuTLS priority string\n"
"      --allow RULE          who may use the exports (before any --export)\n"
"                            or the last --export: ADDR[/BITS], unix,\n"
"                            psk:USER, cert:DN or san:NAME (repeatable)\n"
"Privileges:\n"
"  -u, --user USER           run the front-end and fetchers as USER when\n"
"                            started as root (default: nbdcurld if that\n"
"                            user exists, else nobody)\n"
"  -g, --group GROUP         and as GROUP (default: USER's group)\n"
"nbdkit's server options, for its command lines:\n"
"  -t, --threads N           taken, and ignored: every client has a fetcher\n"
"      --filter NAME         multi-conn, retry, retry-request and readahead\n"
"                            taken (built in); the others refused\n"
"      --log stderr|null     where log lines go (stderr, the default, or nowhere)\n"
"  -D curl.verbose=1         trace each web conversation, secrets masked\n"
"Diagnostics:\n"
"  -v, --verbose             debug messages\n"
"  -V, --version             print the version\n"
"      --sandbox-debug       name a system call the sandbox refuses, then exit\n"
"                            (a diagnostic for policy work, not a way to run)\n"
"      --help                this text\n"
"See nbdcurld(8) for details.\n",
           DEFAULT_CONNECTIONS, DEFAULT_CLIENT_MEMORY / (1024 * 1024),
           DEFAULT_CONNECT_TIMEOUT, MIN_TRANSFER_RATE, DEFAULT_STALL_TIMEOUT,
           DEFAULT_RETRIES, RETRY_BASE_DELAY_MS / 1000,
           DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_MAX_CLIENTS, DEFAULT_SPARE_FETCHERS);
}

/* While a --config file's settings are taken: the file and line of the
 * one being taken, so that every message about it names them. */
static const char *conf_where_path;
static unsigned conf_where_line;

__attribute__((noreturn, format (printf, 1, 2)))
static void
usage_error (const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  if (conf_where_path)
    fprintf (stderr, "nbdcurld: %s:%u: %s\nSee nbdcurld.conf(5) for the file's "
             "format.\n", conf_where_path, conf_where_line, msg);
  else
    fprintf (stderr, "nbdcurld: %s\nTry 'nbdcurld --help' for more information.\n", msg);
  exit (EXIT_FAILURE);
}

static uint32_t
parse_uint (const char *what, const char *arg, uint32_t min, uint32_t max)
{
  char *end;
  unsigned long long v;

  errno = 0;
  v = strtoull (arg, &end, 10);
  if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || v < min || v > max)
    usage_error ("%s must be a number from %" PRIu32 " to %" PRIu32 ", not \"%s\"",
                 what, min, max, arg);
  return (uint32_t) v;
}

/* A size in bytes: digits, then nothing or one of K, M (powers of 1024,
 * either case).  Errors name the limits in the units a user would type. */
static uint32_t
parse_size (const char *what, const char *arg, uint32_t min, uint32_t max)
{
  char *end;
  unsigned long long v, unit = 1;

  errno = 0;
  v = strtoull (arg, &end, 10);
  if (*end == 'k' || *end == 'K')
    unit = 1024, end++;
  else if (*end == 'm' || *end == 'M')
    unit = 1024 * 1024, end++;
  /* v <= ULLONG_MAX / unit is checked before multiplying. */
  if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' ||
      v > max / unit || v * unit < min)
    usage_error ("%s must be a size from %" PRIu32 "K to %" PRIu32 "M, not \"%s\"",
                 what, min / 1024, max / (1024 * 1024), arg);
  return (uint32_t) (v * unit);
}

/* A delay in seconds, with up to three decimals ("2", "0.25"), as
 * milliseconds from 0 to max_ms. */
static uint32_t
parse_delay (const char *what, const char *arg, uint32_t max_ms)
{
  uint64_t ms = 0;
  size_t i = 0, decimals = 0;

  /* Each pass takes one digit; the count keeps ms far below 2^64. */
  for (; arg[i] >= '0' && arg[i] <= '9' && i < 9; i++)
    ms = ms * 10 + (uint64_t) (arg[i] - '0');
  ms *= 1000;
  if (i > 0 && arg[i] == '.') {
    uint64_t unit = 100;
    for (i++; arg[i] >= '0' && arg[i] <= '9' && decimals < 3; i++, decimals++, unit /= 10)
      ms += unit * (uint64_t) (arg[i] - '0');
    if (decimals == 0)
      i = 0;                    /* "2." is not a number */
  }
  if (i == 0 || arg[i] != '\0' || ms > max_ms)
    usage_error ("%s must be a number of seconds from 0 to %u (up to three "
                 "decimals), not \"%s\"", what, max_ms / 1000, arg);
  return (uint32_t) ms;
}

/* Every key not given: NULL and 0, and -1 for the kinds where 0 is a
 * value. */
#define UNSET_CHOICE(name, field, parse, min, max, fallback, help) k->field = -1;
#define UNSET_SWITCH(name, field, fallback, flag_when_false, help) k->field = -1;
static void
no_keys (struct fetch_settings *k)
{
  *k = (struct fetch_settings) { 0 };
  CURL_KEYS (CURL_KEY_SKIP, CURL_KEY_SKIP, UNSET_CHOICE, UNSET_SWITCH, CURL_KEY_SKIP,
             CURL_KEY_SKIP, CURL_KEY_SKIP)
}

static struct export_spec *
add_export (struct options *o, const char *name, const char *url, bool ro)
{
  struct export_spec *e;
  unsigned i;

  if (o->nexports >= MAX_EXPORTS)
    usage_error ("at most %u exports can be served", MAX_EXPORTS);
  if (strlen (name) > NBD_MAX_STRING)
    usage_error ("export names are at most %u bytes", NBD_MAX_STRING);
  for (i = 0; i < o->nexports; i++)
    if (strcmp (o->exports[i].name, name) == 0)
      usage_error ("export \"%s\" is given twice", name);
  e = &o->exports[o->nexports++];
  e->name = strdup (name);
  /* "+FILE": the URL is in FILE, so that a presigned URL's signature or a
   * password is not on the command line.  No URL starts with "+" (a
   * scheme starts with a letter). */
  if (url[0] == '+') {
    char err[512];
    e->url = secret_read_url (url, err, sizeof err);
    if (e->url == NULL)
      usage_error ("export \"%s\": %s", name, err);
    e->url_from_file = true;
  }
  else
    e->url = strdup (url);
  e->description = strdup ("");
  if (e->name == NULL || e->url == NULL || e->description == NULL)
    fatal_errno ("strdup");
  e->readonly = ro;
  no_keys (&e->keys);
  return e;
}

/* --allow RULE, for export number `export` or ALL_EXPORTS. */
static void
add_access_rule (struct options *o, uint32_t export, const char *rule)
{
  struct access_spec *a;
  char addr[INET6_ADDRSTRLEN + 1];
  const char *slash;
  size_t alen;

  if (o->nrules >= MAX_ACCESS_RULES)
    usage_error ("at most %u --allow rules can be given", MAX_ACCESS_RULES);
  a = &o->rules[o->nrules++];
  *a = (struct access_spec) {
    .export = export, .text = rule,
  };
  if (strcmp (rule, "unix") == 0) {
    a->kind = ACCESS_UNIX;
    return;
  }
  if (strncmp (rule, "psk:", 4) == 0 || strncmp (rule, "cert:", 5) == 0 ||
      strncmp (rule, "san:", 4) == 0) {
    a->kind = rule[0] == 'p' ? ACCESS_PSK : rule[0] == 'c' ? ACCESS_CERT_DN : ACCESS_CERT_SAN;
    a->name = strchr (rule, ':') + 1;
    if (a->name[0] == '\0' ||
        strlen (a->name) > (a->kind == ACCESS_PSK ? MAX_PSK_USERNAME : MAX_ACCESS_NAME))
      usage_error ("--allow %s: the name must be 1 to %u bytes", rule,
                   a->kind == ACCESS_PSK ? MAX_PSK_USERNAME : MAX_ACCESS_NAME);
    return;
  }
  slash = strchr (rule, '/');
  alen = slash ? (size_t) (slash - rule) : strlen (rule);
  if (alen == 0 || alen >= sizeof addr)
    goto bad;
  memcpy (addr, rule, alen);
  addr[alen] = '\0';
  if (inet_pton (AF_INET, addr, a->addr) == 1)
    a->kind = ACCESS_ADDRESS4, a->prefix = 32;
  else if (inet_pton (AF_INET6, addr, a->addr) == 1)
    a->kind = ACCESS_ADDRESS6, a->prefix = 128;
  else
    goto bad;
  if (slash)
    a->prefix = parse_uint ("the prefix length of an --allow address", slash + 1, 0,
                            a->prefix);
  return;
 bad:
  usage_error ("--allow %s: not a rule; give an address (ADDR or ADDR/BITS), "
               "unix, psk:USERNAME, cert:DN or san:NAME", rule);
}

/* The TLS options must agree with each other and with --allow. */
static void
check_tls_options (const struct options *o)
{
  unsigned i;

  if (o->tls == TLS_OFF &&
      (o->tls_certificates || o->tls_psk || o->tls_verify_peer || o->tls_priority))
    usage_error ("--tls-certificates, --tls-psk, --tls-verify-peer and "
                 "--tls-priority need --tls=on or --tls=require");
  if (o->tls != TLS_OFF && !o->tls_certificates && !o->tls_psk)
    usage_error ("--tls=%s needs --tls-certificates DIR or --tls-psk FILE",
                 o->tls == TLS_ON ? "on" : "require");
  /* With PSK alone the option is moot (a PSK client proves who it is with
   * its key), and nbdkit and libnbd's tests start servers that way:
   * accepted, with a note (see note_tls_options). */
  if (o->tls_verify_peer && !o->tls_certificates && !o->tls_psk)
    usage_error ("--tls-verify-peer checks client certificates against the CA "
                 "in --tls-certificates DIR: give that too");
  if (o->tls_verify_peer && !o->tls_certificates)
    notice ("--tls-verify-peer has no effect with --tls-psk alone: PSK clients "
            "prove who they are with their key");
  if (o->tls_certificates && strlen (o->tls_certificates) > MAX_PATH_LENGTH - 32)
    usage_error ("--tls-certificates path too long");
  if (o->tls_psk && strlen (o->tls_psk) > MAX_PATH_LENGTH)
    usage_error ("--tls-psk path too long");
  if (o->tls_priority && strlen (o->tls_priority) > MAX_TLS_PRIORITY)
    usage_error ("--tls-priority is at most %u bytes", MAX_TLS_PRIORITY);
  for (i = 0; i < o->nrules; i++) {
    const struct access_spec *a = &o->rules[i];
    if (a->kind == ACCESS_PSK && !o->tls_psk)
      usage_error ("--allow %s: PSK user names need --tls-psk FILE", a->text);
    if ((a->kind == ACCESS_CERT_DN || a->kind == ACCESS_CERT_SAN) &&
        (!o->tls_verify_peer || !o->tls_certificates))
      usage_error ("--allow %s: certificate names need --tls-certificates DIR and "
                   "--tls-verify-peer (only a verified client certificate names "
                   "anyone)", a->text);
  }
}

/* ---- nbdkit curl plugin parameters (KEY=VALUE). ---- */

/* Is ARG key=value (and not a URL with '=' in its query)?  A key is
 * lower-case letters, digits and '-', starting with a letter. */
static bool
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
static const char *
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

static int
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
static void
add_key (struct fetch_settings *k, const char *arg, const char **url)
{
  const char *eq = strchr (arg, '='), *v = eq + 1;
  char key[MAX_KEY_NAME + 1];

  snprintf (key, sizeof key, "%.*s", (int) (eq - arg), arg);
  CURL_KEYS (PARSE_TEXT, PARSE_NUMBER, PARSE_NUMBER, PARSE_SWITCH, PARSE_ALSO, PARSE_LIST,
             PARSE_NAME_ONLY)
  unknown_key (key);
}

/* Does a block of header lines have one that starts with name (its
 * field name and colon, name_len bytes), in any case? */
static bool
header_named (const char *lines, const char *name, size_t name_len)
{
  const char *p = lines;

  while (p && *p) {
    if (strncasecmp (p, name, name_len) == 0)
      return true;
    p = strstr (p, "\r\n");
    if (p)
      p += 2;
  }
  return false;
}

/* resolve=: an export's entries come first: libcurl takes the first
 * entry for a host and port. */
static void
merge_resolve (struct export_spec *e, const struct fetch_settings *d)
{
  struct fetch_settings *k = &e->keys;
  char *all;

  if (!d->resolve)
    return;
  if (asprintf (&all, "%s%s", k->resolve ? k->resolve : "", d->resolve) == -1)
    fatal_errno ("asprintf");
  if (strlen (all) > MAX_RESOLVE_BYTES || k->nresolve + d->nresolve > MAX_RESOLVE_ENTRIES)
    usage_error ("export \"%s\": at most %u resolve= entries of %u bytes in all",
                 e->name, MAX_RESOLVE_ENTRIES, MAX_RESOLVE_BYTES);
  free (k->resolve);
  k->resolve = all;
  k->nresolve += d->nresolve;
}

/* header=: the defaults' lines, except those the export gives a value of
 * its own (by name), then the export's. */
static void
merge_headers (struct export_spec *e, const struct fetch_settings *d)
{
  struct fetch_settings *k = &e->keys;
  const char *p = d->headers;
  char *headers;
  size_t len = 0;
  unsigned n = k->nheaders;

  if (!d->headers)
    return;
  headers = malloc (strlen (d->headers) + (k->headers ? strlen (k->headers) : 0) + 1);
  if (headers == NULL)
    fatal_errno ("malloc");
  while (*p) {
    const char *end = strstr (p, "\r\n") + 2;    /* add_header ends each so */
    size_t name = (size_t) (strchr (p, ':') - p) + 1;
    if (!header_named (k->headers, p, name)) {
      memcpy (headers + len, p, (size_t) (end - p));
      len += (size_t) (end - p);
      n++;
    }
    p = end;
  }
  strcpy (headers + len, k->headers ? k->headers : "");
  if (strlen (headers) > MAX_EXTRA_HEADER_BYTES || n > MAX_EXTRA_HEADERS)
    usage_error ("export \"%s\": at most %u headers of %u bytes in all",
                 e->name, MAX_EXTRA_HEADERS, MAX_EXTRA_HEADER_BYTES);
  free (k->headers);
  k->headers = headers;
  k->nheaders = n;
}

/* What the keys of an export may not say together. */
static void
check_merged_keys (const struct options *o, const struct export_spec *e)
{
  const struct fetch_settings *k = &e->keys;

  /* As nbdkit: a script's output replaces, it does not add to. */
  if (k->header_script && k->headers)
    usage_error ("export \"%s\": header-script= and header= cannot be used together "
                 "(let the script print every header)", e->name);
  if (k->cookie_script && k->cookie_source)
    usage_error ("export \"%s\": cookie-script= and cookie= cannot be used together",
                 e->name);
  if ((k->header_script_renew && !k->header_script) ||
      (k->cookie_script_renew && !k->cookie_script))
    usage_error ("export \"%s\": %s-script-renew= needs %s-script=", e->name,
                 k->header_script_renew && !k->header_script ? "header" : "cookie",
                 k->header_script_renew && !k->header_script ? "header" : "cookie");
  if (k->password_source && !k->auth_user)
    usage_error ("export \"%s\": --auth-password (or password=) needs --auth-user "
                 "(or user=): the user name it belongs to", e->name);
  if (k->proxy_password_source && !k->proxy_user)
    usage_error ("export \"%s\": proxy-password= needs proxy-user=: the user name "
                 "it belongs to", e->name);
  if (k->proxy_user && !k->proxy && !o->proxy_from_env)
    usage_error ("export \"%s\": proxy-user= is for a proxy: give proxy=URL (or "
                 "--proxy-from-env)", e->name);
  /* With the cookie engine on, libcurl writes a Cookie header of its
   * own: a second one from cookie= or header= would make two, which a
   * server may read either way (RFC 6265 allows one). */
  if (k->cookie_file && (k->cookie_source || header_named (k->headers, "cookie:", 7)))
    usage_error ("export \"%s\": cookiefile= cannot be combined with cookie= or a "
                 "Cookie header=: put that cookie into the cookie file (a Netscape-"
                 "format line for its host, or Set-Cookie: NAME=VALUE; domain=HOST)",
                 e->name);
  /* libcurl ignores every proxy setting on a Unix socket: say so rather
   * than let a proxy= look as if it were used. */
  if (k->unix_socket_path && k->proxy)
    usage_error ("export \"%s\": unix-socket-path= and proxy= cannot be combined "
                 "(the socket is connected to directly)", e->name);
}

/* An export's keys over the defaults' over the long options: each kind
 * of key is not given when NULL, 0 or -1 (no_keys). */
#define MERGE_TEXT(name, field, check, max, fallback, sent, conf, help)       \
  if (!k->field)                                                            \
    k->field = d->field ? d->field : (fallback);
#define MERGE_NUMBER(name, field, parse, min, max, fallback, help)            \
  if (!k->field)                                                            \
    k->field = d->field ? d->field : (fallback);
#define MERGE_CHOICE(name, field, parse, min, max, fallback, help)            \
  if (k->field < 0)                                                         \
    k->field = d->field >= 0 ? d->field : (fallback);
#define MERGE_SWITCH(name, field, fallback, flag_when_false, help)            \
  if (k->field < 0)                                                         \
    k->field = d->field >= 0 ? d->field : (fallback);
#define MERGE_LIST(name, field, add, merge, max, sent, help) merge (e, d);
static void
merge_keys (struct options *o, const struct fetch_settings *d, struct export_spec *e)
{
  struct fetch_settings *k = &e->keys;

  CURL_KEYS (MERGE_TEXT, MERGE_NUMBER, MERGE_CHOICE, MERGE_SWITCH, CURL_KEY_SKIP,
             MERGE_LIST, CURL_KEY_SKIP)
  check_merged_keys (o, e);
}

#define SEND_TEXT(name, field, check, max, fallback, sent, conf, help)        \
  CURL_KEY_IF_SENT (sent, fc->field = (char *) (k->field ? k->field : "");)
#define SEND_LIST(name, field, add, merge, max, sent, help)                   \
  CURL_KEY_IF_SENT (sent, fc->field = k->field ? k->field : (char *) "";)
#define SEND_SWITCH(name, field, fallback, flag_when_false, help)             \
  if (k->field == 0)                                                        \
    fc->flags |= (flag_when_false);
void
fetch_settings_to_fetcher (const struct fetch_settings *k, struct fetcher_config *fc)
{
  CURL_KEYS (SEND_TEXT, CURL_KEY_SKIP, CURL_KEY_SKIP, SEND_SWITCH, CURL_KEY_SKIP,
             SEND_LIST, CURL_KEY_SKIP)
}

/* nbdkit's server options that have no long option of ours.  Each is
 * taken when nbdcurld does the same thing, or refused with what to use:
 * never silently dropped when it would change what is served. */
static void
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
  case OPT_FILTER:
    if (strcmp (arg, "multi-conn") == 0)
      break;          /* built in: advertised when every export is read-only */
    /* Built in: every read is retried (--retries, retries=); the
     * filters' parameters are taken as KEY=VALUE. */
    if (strcmp (arg, "retry") == 0 || strcmp (arg, "retry-request") == 0)
      break;
    /* Built in: sequential readers are detected and read ahead. */
    if (strcmp (arg, "readahead") == 0)
      break;
    /* nbdkit's cache keeps every block read (and written) in a local
     * file; the readahead store holds only ranges fetched ahead or named
     * by NBD_CMD_CACHE, and only until they are read. */
    if (strcmp (arg, "cache") == 0)
      usage_error ("--filter=cache: nbdcurld keeps no cache of what was read; "
                   "readahead and NBD_CMD_CACHE are built in (drop the filter, "
                   "or put a caching proxy in front of the web server)");
    /* Several exports are built in too, each with a name of its own. */
    if (strcmp (arg, "exportname") == 0)
      usage_error ("--filter=exportname: nbdcurld serves several exports itself: "
                   "give each as --export NAME=URL (and --description NAME=TEXT); "
                   "clients list them with NBD_OPT_LIST");
    usage_error ("--filter=%s: nbdcurld has no filters; multi-conn, retry, "
                 "retry-request and readahead are built in, and the others are not "
                 "available", arg);
  case OPT_LOG:
    if (strcmp (arg, "stderr") == 0)
      o->log_null = false;
    else if (strcmp (arg, "null") == 0)
      o->log_null = true;
    else
      usage_error ("--log=%s: stderr or null (syslog is not available: the "
                   "sandboxed processes cannot reach it; a service's standard "
                   "error goes to the journal)", arg);
    break;
  }
}

/* --allow-port PORT[,PORT...]: ports a redirect may lead to. */
static void
add_allowed_ports (struct options *o, const char *arg)
{
  char *list = strdup (arg), *save = NULL, *port;

  if (list == NULL)
    fatal_errno ("strdup");
  for (port = strtok_r (list, ",", &save); port; port = strtok_r (NULL, ",", &save)) {
    uint16_t p = (uint16_t) parse_uint ("--allow-port", port, 1, 65535);
    unsigned i;

    for (i = 0; i < o->nallow_ports && o->allow_ports[i] != p; i++)
      ;
    if (i < o->nallow_ports)
      continue;
    if (o->nallow_ports == MAX_ALLOWED_PORTS)
      usage_error ("--allow-port: at most %u ports (a redirect to many ports "
                   "is better served by giving its final URL)", MAX_ALLOWED_PORTS);
    o->allow_ports[o->nallow_ports++] = p;
  }
  if (strspn (arg, ",") == strlen (arg))
    usage_error ("--allow-port takes a port number, or several separated by commas");
  free (list);
}

/* NAME=VALUE: split at the first '='. */
static void
split_assignment (const char *opt, const char *arg, char **name, const char **value)
{
  const char *eq = strchr (arg, '=');
  if (eq == NULL)
    usage_error ("%s takes NAME=VALUE, as in %s disk=https://host/disk.img", opt, opt);
  *name = strndup (arg, (size_t) (eq - arg));
  if (*name == NULL)
    fatal_errno ("strndup");
  *value = eq + 1;
}

/* ---- --config FILE: nbdcurld.conf(5). ----
 *
 * conffile.c splits the file into settings and [export NAME] sections;
 * here each becomes the option code and argument the command line would
 * give (conf_next), and options_parse's one switch takes it: a setting
 * is checked by the same code wherever it is written. */

struct conf_reading {
  struct conf_file *f;        /* NULL: no file being read */
  size_t next;                /* its next item */
  bool in_section;            /* past its first [export NAME] */
  char *export_url;           /* the section's url =, for OPT_CONF_EXPORT */
  bool export_ro;             /* and whether it says readonly */
};

/* Secrets: in a file, named by file (+FILE) or descriptor (-FD) only,
 * never written there (a file is copied, backed up, and shown more
 * readily than a password is typed): these options and the KEY_SECRET
 * keys. */
static const char *const conf_secret_names[] = {
  "auth-password",
};
/* Settings whose value is a path; a relative one is taken from the
 * file's directory, as are the +FILE of secrets and of url: these
 * options and the KEY_PATH keys. */
static const char *const conf_path_names[] = {
  "tls-certificates", "tls-psk", "pidfile", "unix",
};

static bool
in_list (const char *name, const char *const *list, size_t n)
{
  size_t i;
  for (i = 0; i < n; i++)
    if (strcmp (name, list[i]) == 0)
      return true;
  return false;
}
#define IN_LIST(name, list) in_list (name, list, sizeof list / sizeof list[0])

/* Is name a key that a configuration file gives as conf says? */
static bool
key_conf_is (const char *name, enum curl_key_conf conf)
{
  int i = key_index (name);
  return i >= 0 && key_names[i].conf == conf;
}
#define CONF_IS_SECRET(name) \
  (IN_LIST (name, conf_secret_names) || key_conf_is (name, KEY_SECRET))
#define CONF_IS_PATH(name) \
  (IN_LIST (name, conf_path_names) || key_conf_is (name, KEY_PATH))

/* dir/path, or path when it is absolute: kept for the process's life. */
static char *
conf_relative (const struct conf_reading *cr, const char *prefix, const char *path)
{
  char *abs;

  if (path[0] == '/')
    return NULL;
  if (asprintf (&abs, "%s%s/%s", prefix, cr->f->dir, path) == -1)
    fatal_errno ("asprintf");
  return abs;
}

/* A setting's value as the command line would give it. */
static char *
conf_value (const struct conf_reading *cr, const char *name, char *v)
{
  char *abs = NULL;

  if (CONF_IS_SECRET (name)) {
    if (!((v[0] == '+' && v[1] != '\0') ||
          (v[0] == '-' && v[1] != '\0' && strspn (v + 1, "0123456789") == strlen (v + 1))))
      usage_error ("%s: a configuration file names a secret by the file it is in "
                   "(%s = +FILE) or a descriptor (%s = -FD), never the secret itself",
                   name, name, name);
  }
  if ((CONF_IS_SECRET (name) || strcmp (name, "url") == 0) && v[0] == '+')
    abs = conf_relative (cr, "+", v + 1);
  else if (CONF_IS_PATH (name) && v[0] != '\0' &&
           !(strcmp (name, "unix") == 0 && strcmp (v, "-") == 0))
    abs = conf_relative (cr, "", v);
  return abs ? abs : v;
}

static bool
conf_is_readonly (const char *name)
{
  return strcmp (name, "readonly") == 0 || strcmp (name, "read-only") == 0;
}

/* [export NAME]: its url and readonly lines are taken now, wherever they
 * are in the section, so that the export exists before its other lines
 * give it keys. */
static int
conf_section (struct conf_reading *cr, const struct conf_item *section)
{
  size_t i;
  unsigned url_line = 0;

  cr->in_section = true;
  cr->export_url = NULL;
  cr->export_ro = false;
  for (i = cr->next; i < cr->f->nitems && cr->f->items[i].kind == CONF_SETTING; i++) {
    const struct conf_item *it = &cr->f->items[i];
    conf_where_line = it->line;
    if (strcmp (it->name, "url") == 0) {
      if (cr->export_url)
        usage_error ("a second url for export \"%s\" (the first is on line %u)",
                     section->name, url_line);
      if (it->value == NULL || it->value[0] == '\0')
        usage_error ("url needs a value: url = URL");
      cr->export_url = conf_value (cr, "url", it->value);
      url_line = it->line;
    }
    else if (conf_is_readonly (it->name)) {
      if (it->value)
        usage_error ("%s takes no value: write %s alone", it->name, it->name);
      cr->export_ro = true;
    }
  }
  conf_where_line = section->line;
  if (cr->export_url == NULL)
    usage_error ("[export %s] has no url = URL line", section->name);
  optarg = section->name;
  return OPT_CONF_EXPORT;
}

/* One NAME = VALUE (or NAME) line. */
static int
conf_setting (struct conf_reading *cr, const struct conf_item *it)
{
  const char *name = it->name;
  size_t i;

  /* A key before an option of the same name (user, connections, timeout,
   * cainfo, capath): the file is mostly about exports, and keys are what
   * an export takes. */
  if (key_index (name) >= 0) {
    char *kv;
    if (it->value == NULL)
      usage_error ("%s needs a value: %s = VALUE", name, name);
    if (asprintf (&kv, "%s=%s", name, conf_value (cr, name, it->value)) == -1)
      fatal_errno ("asprintf");
    optarg = kv;
    return 1;
  }
  if (cr->in_section && strcmp (name, "description") == 0) {
    if (it->value == NULL)
      usage_error ("description needs a value: description = TEXT");
    optarg = it->value;
    return OPT_CONF_DESCRIPTION;
  }
  if (strcmp (name, "config") == 0)
    usage_error ("config: a configuration file cannot name another; give each "
                 "with its own --config");
  if (strcmp (name, "export") == 0 || strcmp (name, "export-ro") == 0)
    usage_error ("%s: in a configuration file an export is a section: "
                 "[export NAME] and then url = URL%s", name,
                 name[6] ? " and readonly" : "");
  if (strcmp (name, "group") == 0)
    usage_error ("group: whom nbdcurld runs as (--user, --group) is given on the "
                 "command line; in this file user is the web server's user name (user=)");
  if (strcmp (name, "help") == 0 || strcmp (name, "version") == 0)
    usage_error ("%s: not a setting", name);
  for (i = 0; long_options[i].name; i++)
    if (strcmp (name, long_options[i].name) == 0)
      break;
  if (long_options[i].name == NULL)
    usage_error ("unknown setting %s: did you mean %s?", name, nearest_name (name, true));
  if (cr->in_section && strcmp (name, "allow") != 0)
    usage_error ("%s applies to every export, not to one: put it before the first "
                 "[export] section", name);
  if (long_options[i].has_arg == no_argument) {
    if (it->value)
      usage_error ("%s takes no value: write %s alone", name, name);
    optarg = NULL;
  }
  else {
    if (it->value == NULL)
      usage_error ("%s needs a value: %s = VALUE", name, name);
    optarg = conf_value (cr, name, it->value);
  }
  return long_options[i].val;
}

/* The next setting of the file being read, as an option code with its
 * argument in optarg (where the switch in options_parse finds getopt's),
 * or 0 at its end. */
static int
conf_next (struct conf_reading *cr)
{
  while (cr->next < cr->f->nitems) {
    const struct conf_item *it = &cr->f->items[cr->next++];
    conf_where_line = it->line;
    if (it->kind == CONF_SECTION)
      return conf_section (cr, it);
    /* Taken with the section's header. */
    if (cr->in_section && (strcmp (it->name, "url") == 0 || conf_is_readonly (it->name)))
      continue;
    return conf_setting (cr, it);
  }
  conf_where_path = NULL;
  return 0;
}

void
options_parse (int argc, char **argv, struct options *o)
{
  const char *exportname = NULL, *url = NULL;
  struct fetch_settings defaults;
  /* Where keys and --allow go: the export defined last, or (before any)
   * all.  A --config file's own part before its first section is for
   * all, each section for its export, and after the file the command
   * line goes on as if the file's exports were not there. */
  uint32_t scope = ALL_EXPORTS, scope_before_conf = ALL_EXPORTS;
  struct conf_reading conf = { .f = NULL };
  const char *url_conf_path = NULL;
  struct { char *name; const char *text; } descriptions[MAX_EXPORTS];
  unsigned ndescriptions = 0, i, j;
  int c;

  memset (o, 0, sizeof *o);
  o->connections = DEFAULT_CONNECTIONS;
  o->connect_timeout = DEFAULT_CONNECT_TIMEOUT;
  o->stall_timeout = DEFAULT_STALL_TIMEOUT;
  o->handshake_timeout = DEFAULT_HANDSHAKE_TIMEOUT;
  o->retries = DEFAULT_RETRIES;
  o->retry_delay_ms = RETRY_BASE_DELAY_MS;
  o->client_memory = DEFAULT_CLIENT_MEMORY;
  o->max_clients = DEFAULT_MAX_CLIENTS;
  o->spare_fetchers = DEFAULT_SPARE_FETCHERS;
  no_keys (&defaults);

  for (;;) {
    char *name;
    const char *value;

    if (conf.f) {
      c = conf_next (&conf);
      if (c == 0) {                     /* the end of the file */
        conf.f = NULL;
        scope = scope_before_conf;
        continue;
      }
    }
    else if ((c = getopt_long (argc, argv, short_options, long_options, NULL)) == -1)
      break;

    switch (c) {
    case 1:                             /* the URL, or KEY=VALUE */
      if (is_key_value (optarg)) {
        const char *was = url;
        add_key (scope == ALL_EXPORTS ? &defaults : &o->exports[scope].keys, optarg, &url);
        if (url != was && scope != ALL_EXPORTS)
          usage_error ("url= after --export: the export's URL is given there");
        if (url != was)
          url_conf_path = conf_where_path;
      }
      else if (url)
        usage_error ("unexpected argument \"%s\": to serve several URLs use "
                     "--export NAME=URL for each", optarg);
      else
        url = optarg;
      break;
    case 'e': exportname = optarg; break;
    case OPT_EXPORT:
    case OPT_EXPORT_RO:
      split_assignment (c == OPT_EXPORT ? "--export" : "--export-ro", optarg, &name, &value);
      add_export (o, name, value, c == OPT_EXPORT_RO);
      free (name);
      scope = o->nexports - 1;
      break;
    case OPT_CONFIG: {
      char err[1024];
      /* Read now, before nbdcurld may change directory; its relative
       * paths are made absolute as they are taken. */
      conf.f = conf_file_read (optarg, err, sizeof err);
      if (conf.f == NULL) {
        fprintf (stderr, "nbdcurld: %s\nSee nbdcurld.conf(5) for the file's format.\n", err);
        exit (EXIT_FAILURE);
      }
      conf.next = 0;
      conf.in_section = false;
      conf_where_path = optarg;
      scope_before_conf = scope;
      scope = ALL_EXPORTS;
      break;
    }
    case OPT_CONF_EXPORT:
      add_export (o, optarg, conf.export_url, conf.export_ro)->conf_path = conf_where_path;
      scope = o->nexports - 1;
      break;
    case OPT_CONF_DESCRIPTION:
      if (ndescriptions >= MAX_EXPORTS)
        usage_error ("too many descriptions");
      descriptions[ndescriptions].name = strdup (o->exports[scope].name);
      if (descriptions[ndescriptions].name == NULL)
        fatal_errno ("strdup");
      descriptions[ndescriptions++].text = optarg;
      break;
    case OPT_DESCRIPTION:
      if (ndescriptions >= MAX_EXPORTS)
        usage_error ("too many --description options");
      split_assignment ("--description", optarg, &descriptions[ndescriptions].name, &value);
      descriptions[ndescriptions++].text = value;
      break;
    case 'r': o->readonly = true; break;
    case 'p':
      parse_uint ("the port", optarg, 1, 65535);
      o->port = optarg;
      break;
    case 'i': o->ipaddr = optarg; break;
    case 'U': o->unix_path = optarg; break;
    case 's': o->single = true; break;
    case OPT_RUN: o->run = optarg; break;
    case 'f': o->foreground = true; break;
    case 'P': o->pidfile = optarg; break;
    case OPT_EXIT_WITH_PARENT: o->exit_with_parent = true; break;
    case OPT_PRINT_URI: o->print_uri = true; break;
    case 'v': o->verbose = true; break;
    case 'V':
      printf ("nbdcurld %s\n", PACKAGE_VERSION);
      exit (EXIT_SUCCESS);
    case OPT_HELP:
      usage (stdout);
      exit (EXIT_SUCCESS);
    case OPT_CAINFO: o->cainfo = optarg; break;
    case OPT_CAPATH: o->capath = optarg; break;
    case OPT_INSECURE: o->insecure = true; break;
    case OPT_ALLOW_PORT: add_allowed_ports (o, optarg); break;
    case OPT_ALLOW_LOCAL_REDIRECTS: o->allow_local_redirects = true; break;
    case '4':
    case '6':
    case 't':
    case 'D':
    case OPT_FILTER:
    case OPT_LOG:
      nbdkit_option (o, c, optarg);
      break;
    case 'u':
    case OPT_USER: o->user = optarg; break;
    case 'g':
    case OPT_GROUP: o->group = optarg; break;
    case OPT_SANDBOX_DEBUG: o->sandbox_debug = true; break;
    case OPT_PROXY_FROM_ENV: o->proxy_from_env = true; break;
    case OPT_TLS:
      if (strcmp (optarg, "off") == 0)
        o->tls = TLS_OFF;
      else if (strcmp (optarg, "on") == 0)
        o->tls = TLS_ON;
      else if (strcmp (optarg, "require") == 0)
        o->tls = TLS_REQUIRE;
      else
        usage_error ("--tls takes off, on or require, not \"%s\"", optarg);
      break;
    case OPT_TLS_CERTIFICATES: o->tls_certificates = optarg; break;
    case OPT_TLS_PSK: o->tls_psk = optarg; break;
    case OPT_TLS_VERIFY_PEER: o->tls_verify_peer = true; break;
    case OPT_TLS_PRIORITY: o->tls_priority = optarg; break;
    case OPT_ALLOW: add_access_rule (o, scope, optarg); break;
    case OPT_CONNECTIONS:
      o->connections = parse_uint ("--connections", optarg, 1, MAX_CONNECTIONS);
      break;
    case OPT_AUTH_USER:
      if (optarg[0] == '\0' || strlen (optarg) > MAX_SECRET_LENGTH)
        usage_error ("--auth-user needs a name of 1 to %u bytes", MAX_SECRET_LENGTH);
      o->auth_user = optarg;
      break;
    case OPT_AUTH_PASSWORD:
      /* Never the password itself: every local user can read a command
       * line (ps, /proc/PID/cmdline). */
      if (!(strcmp (optarg, "-") == 0 || optarg[0] == '+' ||
            (optarg[0] == '-' && optarg[1] != '\0' &&
             strspn (optarg + 1, "0123456789") == strlen (optarg + 1))))
        usage_error ("--auth-password takes -, -FD or +FILE, not a password: a "
                     "command line is visible to every local user");
      if (optarg[0] == '+' && optarg[1] == '\0')
        usage_error ("--auth-password +FILE needs a file name");
      o->auth_password_source = optarg;
      break;
    case OPT_CLIENT_MEMORY:
      o->client_memory = parse_size ("--client-memory", optarg,
                                     MIN_CLIENT_MEMORY, MAX_CLIENT_MEMORY);
      break;
    case OPT_TIMEOUT:
      o->timeout = parse_uint ("--timeout", optarg, 1, MAX_TIMEOUT);
      break;
    case OPT_RETRIES:
      o->retries = parse_uint ("--retries", optarg, 0, MAX_RETRIES);
      break;
    case OPT_RETRY_DELAY:
      o->retry_delay_ms = parse_delay ("--retry-delay", optarg, RETRY_MAX_DELAY_MS);
      break;
    case OPT_CONNECT_TIMEOUT:
      o->connect_timeout = parse_uint ("--connect-timeout", optarg, 1, MAX_TIMEOUT);
      break;
    case OPT_MAX_CLIENTS:
      o->max_clients = parse_uint ("--max-clients", optarg, 1, MAX_MAX_CLIENTS);
      break;
    case OPT_SPARE_FETCHERS:
      o->spare_fetchers = parse_uint ("--spare-fetchers", optarg, 0, MAX_SPARE_FETCHERS);
      break;
    case OPT_EXEC_FETCHERS:
      o->exec_fetchers = true;
      break;
    case OPT_STALL_TIMEOUT:
      o->stall_timeout = parse_uint ("--stall-timeout", optarg, 1, MAX_TIMEOUT);
      break;
    case OPT_HANDSHAKE_TIMEOUT:
      o->handshake_timeout = parse_uint ("--handshake-timeout", optarg, 1,
                                         MAX_HANDSHAKE_TIMEOUT);
      break;
    default:
      fprintf (stderr, "Try 'nbdcurld --help' for more information.\n");
      exit (EXIT_FAILURE);
    }
  }

  if (url) {
    if (o->nexports > 0)
      usage_error ("give either one URL or --export options, not both");
    add_export (o, exportname ? exportname : "", url, false)->conf_path = url_conf_path;
  }
  else if (exportname)
    usage_error ("-e names the single URL export; with --export the name is given there");
  if (o->nexports == 0)
    usage_error ("no URL given: nbdcurld [OPTIONS] URL");

  for (i = 0; i < ndescriptions; i++) {
    for (j = 0; j < o->nexports; j++)
      if (strcmp (o->exports[j].name, descriptions[i].name) == 0)
        break;
    if (j == o->nexports)
      usage_error ("--description names export \"%s\", which is not defined",
                   descriptions[i].name);
    if (strlen (descriptions[i].text) > NBD_MAX_STRING)
      usage_error ("descriptions are at most %u bytes", NBD_MAX_STRING);
    free (o->exports[j].description);
    o->exports[j].description = strdup (descriptions[i].text);
    if (o->exports[j].description == NULL)
      fatal_errno ("strdup");
    free (descriptions[i].name);
  }

  if (o->single && (o->run || o->port || o->ipaddr || o->unix_path))
    usage_error ("-s serves one client on stdin/stdout: it cannot be combined "
                 "with --run, -p, -i or -U");
  if (o->unix_path && (o->port || o->ipaddr))
    usage_error ("-U cannot be combined with -p or -i");
  if (o->family != AF_UNSPEC && (o->unix_path || o->single))
    usage_error ("-4 and -6 choose TCP addresses: not with -U or -s");
  for (i = 0; i < o->nexports; i++)
    merge_keys (o, &defaults, &o->exports[i]);
  check_tls_options (o);
  if (o->cainfo && strlen (o->cainfo) > MAX_PATH_LENGTH)
    usage_error ("--cainfo path too long");
  if (o->capath && strlen (o->capath) > MAX_PATH_LENGTH)
    usage_error ("--capath path too long");
}
