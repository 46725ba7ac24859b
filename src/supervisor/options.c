/*
 * options.c: the command line.  Names and meanings follow nbdkit where an
 * equivalent exists, so users can switch; see man/nbdcurld.8.  Here:
 * the table of options, each option's handler, and the parse that takes
 * them in order from getopt or a --config file (options-internal.h names
 * the files below this one).
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access-rules.h"
#include "config-build.h"
#include "data-path.h"
#include "keyholder-wire.h"
#include "limits-nbd.h"
#include "limits-server.h"
#include "limits-spares.h"
#include "limits-strings.h"
#include "limits-web.h"
#include "log.h"
#include "options-internal.h"
#include "secret.h"
#include "tls-modes.h"

/* "-": other arguments come in order, as option 1 (the URL, and
 * key=value parameters that apply to the --export before them).  -u and
 * -g are nbdkit's names for --user and --group, -h for --help; -4, -6,
 * -t, -D, -n, -o, --filter and --log are nbdkit's, taken or refused
 * with what to use instead (nbdkit_option). */
static const char short_options[] = "-46D:e:fg:hi:nop:P:rst:u:U:vV";
const struct option long_options[] = {
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
  { "newstyle",          no_argument,       NULL, 'n' },
  { "oldstyle",          no_argument,       NULL, 'o' },
  { "config",            required_argument, NULL, OPT_CONFIG },
  { "stats",             no_argument,       NULL, OPT_STATS },
  { "stats-file",        required_argument, NULL, OPT_STATS_FILE },
  { "stats-format",      required_argument, NULL, OPT_STATS_FORMAT },
  { "stats-interval",    required_argument, NULL, OPT_STATS_INTERVAL },
  { "cache",             required_argument, NULL, OPT_CACHE },
  { "cache-dir",         required_argument, NULL, OPT_CACHE_DIR },
  { "prefetch",          required_argument, NULL, OPT_PREFETCH },
  { NULL, 0, NULL, 0 },
};

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

/* ---- Each option's handler: the parse's state, the option's code (for
 * handlers of several) and its argument. ---- */

typedef void option_handler (struct parse_state *p, int c, const char *arg);

/* An argument that is not an option's: the URL, or KEY=VALUE. */
static void
take_argument (struct parse_state *p, int c, const char *arg)
{
  struct options *o = p->o;

  (void) c;
  if (is_key_value (arg) && stats_filter_key (o, arg))
    return;
  if (is_key_value (arg)) {
    const char *was = p->url;
    add_key (p->scope == ALL_EXPORTS ? &p->defaults : &o->exports[p->scope].keys, arg,
             &p->url);
    if (p->url != was && p->scope != ALL_EXPORTS)
      usage_error ("url= after --export: the export's URL is given there");
    if (p->url != was) {
      p->url_conf_path = conf_where_path;
      p->url_conf_line = conf_where_line;
    }
  }
  /* nbdkit's plugin name, left in a command line moved from nbdkit
   * ("nbdkit -r curl URL"): the plugin nbdcurld is. */
  else if (strcmp (arg, "curl") == 0 && !p->plugin_named && !p->url && !p->conf.f)
    p->plugin_named = true;
  else if (p->url)
    usage_error ("unexpected argument \"%s\": to serve several URLs use "
                 "--export NAME=URL for each", arg);
  else
    p->url = arg;
}

static void
take_exportname (struct parse_state *p, int c, const char *arg)
{
  (void) c;
  p->exportname = arg;
}

/* --export NAME=URL, --export-ro NAME=URL. */
static void
take_export (struct parse_state *p, int c, const char *arg)
{
  struct options *o = p->o;
  char *name;
  const char *value;

  split_assignment (c == OPT_EXPORT ? "--export" : "--export-ro", arg, &name, &value);
  add_export (o, name, value, c == OPT_EXPORT_RO);
  free (name);
  p->scope = o->nexports - 1;
}

static void
take_description (struct parse_state *p, int c, const char *arg)
{
  const char *value;

  (void) c;
  if (p->ndescriptions >= MAX_EXPORTS)
    usage_error ("too many --description options");
  split_assignment ("--description", arg, &p->descriptions[p->ndescriptions].name, &value);
  p->descriptions[p->ndescriptions++].text = value;
}

/* --config FILE: its settings are taken next (next_option). */
static void
take_config (struct parse_state *p, int c, const char *arg)
{
  char err[1024];

  (void) c;
  /* Read now, before nbdcurld may change directory; its relative
   * paths are made absolute as they are taken. */
  p->conf.f = conf_file_read (arg, err, sizeof err);
  if (p->conf.f == NULL) {
    log_error ("%s", err);
    fprintf (stderr, "See nbdcurld.conf(5) for the file's format.\n");
    exit (EXIT_FAILURE);
  }
  p->conf.next = 0;
  p->conf.in_section = false;
  conf_where_path = arg;
  p->last_conf_path = arg;
  p->scope_before_conf = p->scope;
  p->scope = ALL_EXPORTS;
}

/* A --config file's [export NAME], with its url and readonly lines. */
static void
take_conf_export (struct parse_state *p, int c, const char *arg)
{
  struct options *o = p->o;
  struct export_spec *e = add_export (o, arg, p->conf.export_url, p->conf.export_ro);

  (void) c;
  e->conf_path = conf_where_path;
  e->conf_line = p->conf.export_url_line;
  p->scope = o->nexports - 1;
}

/* A section's description = TEXT. */
static void
take_conf_description (struct parse_state *p, int c, const char *arg)
{
  (void) c;
  if (p->ndescriptions >= MAX_EXPORTS)
    usage_error ("too many descriptions");
  p->descriptions[p->ndescriptions].name = strdup (p->o->exports[p->scope].name);
  if (p->descriptions[p->ndescriptions].name == NULL)
    fatal_errno ("strdup");
  p->descriptions[p->ndescriptions++].text = arg;
}

/* The options without an argument that set one flag each. */
static void
take_flag (struct parse_state *p, int c, const char *arg)
{
  struct options *o = p->o;

  (void) arg;
  switch (c) {
  case 'r': o->readonly = true; break;
  case 's': o->single = true; break;
  case 'f': o->foreground = true; break;
  case OPT_EXIT_WITH_PARENT: o->exit_with_parent = true; break;
  case OPT_PRINT_URI: o->print_uri = true; break;
  case 'v': o->verbose = true; break;
  case OPT_INSECURE: o->insecure = true; break;
  case OPT_ALLOW_LOCAL_REDIRECTS: o->allow_local_redirects = true; break;
  case OPT_SANDBOX_DEBUG: o->sandbox_debug = true; break;
  case OPT_PROXY_FROM_ENV: o->proxy_from_env = true; break;
  case OPT_TLS_VERIFY_PEER: o->tls_verify_peer = true; break;
  case OPT_EXEC_FETCHERS: o->exec_fetchers = true; break;
  case OPT_STATS: o->stats = true; break;
  }
}

/* The options whose argument is kept as given (and judged later, where
 * it is used). */
static void
take_text (struct parse_state *p, int c, const char *arg)
{
  struct options *o = p->o;

  switch (c) {
  case 'i': o->ipaddr = arg; break;
  case 'U': o->unix_path = arg; break;
  case OPT_RUN: o->run = arg; break;
  case 'P': o->pidfile = arg; break;
  case OPT_CAINFO: o->cainfo = arg; break;
  case OPT_CAPATH: o->capath = arg; break;
  case 'u':
  case OPT_USER: o->user = arg; break;
  case 'g':
  case OPT_GROUP: o->group = arg; break;
  case OPT_TLS_CERTIFICATES: o->tls_certificates = arg; break;
  case OPT_TLS_PSK: o->tls_psk = arg; break;
  case OPT_TLS_PRIORITY: o->tls_priority = arg; break;
  case OPT_STATS_FILE: o->stats_file = arg; break;
  case OPT_STATS_FORMAT: stats_format_option (o, arg); break;
  }
}

/* The options that take a number: the uint32_t of struct options each
 * sets, and its bounds.  --client-memory's is a size (K and M suffixes),
 * --retry-delay's seconds with decimals, kept as milliseconds.  The
 * _Generic refuses, at build time, a field of another type. */
#define NUMBER_OPTION(code, name, field, min, max)                            \
  { code, name,                                                               \
    offsetof (struct options, field)                                          \
    + 0 * sizeof (_Generic (((struct options *) 0)->field, uint32_t: 0)),     \
    min, max }
static const struct number_option {
  int code;
  const char *name;
  size_t offset;
  uint32_t min, max;
} number_options[] = {
  NUMBER_OPTION (OPT_CONNECTIONS, "--connections", connections, 1, MAX_CONNECTIONS),
  NUMBER_OPTION (OPT_CLIENT_MEMORY, "--client-memory", client_memory,
                 MIN_CLIENT_MEMORY, MAX_CLIENT_MEMORY),
  NUMBER_OPTION (OPT_TIMEOUT, "--timeout", timeout, 1, MAX_TIMEOUT),
  NUMBER_OPTION (OPT_RETRIES, "--retries", retries, 0, MAX_RETRIES),
  NUMBER_OPTION (OPT_RETRY_DELAY, "--retry-delay", retry_delay_ms, 0, RETRY_MAX_DELAY_MS),
  NUMBER_OPTION (OPT_CONNECT_TIMEOUT, "--connect-timeout", connect_timeout, 1, MAX_TIMEOUT),
  NUMBER_OPTION (OPT_MAX_CLIENTS, "--max-clients", max_clients, 1, MAX_MAX_CLIENTS),
  NUMBER_OPTION (OPT_SPARE_FETCHERS, "--spare-fetchers", spare_fetchers, 0,
                 MAX_SPARE_FETCHERS),
  NUMBER_OPTION (OPT_STALL_TIMEOUT, "--stall-timeout", stall_timeout, 1, MAX_TIMEOUT),
  NUMBER_OPTION (OPT_HANDSHAKE_TIMEOUT, "--handshake-timeout", handshake_timeout, 1,
                 MAX_HANDSHAKE_TIMEOUT),
  NUMBER_OPTION (OPT_STATS_INTERVAL, "--stats-interval", stats_interval, 1,
                 MAX_STATS_INTERVAL),
};
#define NNUMBER_OPTIONS (sizeof number_options / sizeof number_options[0])

static void
take_number (struct parse_state *p, int c, const char *arg)
{
  const struct number_option *n;
  uint32_t v;

  for (n = number_options; n < number_options + NNUMBER_OPTIONS; n++)
    if (n->code == c)
      break;
  if (n == number_options + NNUMBER_OPTIONS)
    fatal ("option code %d has no row in number_options", c);
  if (c == OPT_CLIENT_MEMORY)
    v = parse_size (n->name, arg, n->min, n->max);
  else if (c == OPT_RETRY_DELAY)
    v = parse_delay (n->name, arg, n->max);
  else
    v = parse_uint (n->name, arg, n->min, n->max);
  memcpy ((char *) p->o + n->offset, &v, sizeof v);
}

static void
take_port (struct parse_state *p, int c, const char *arg)
{
  (void) c;
  parse_uint ("the port", arg, 1, 65535);
  p->o->port = arg;
}

static void
take_version (struct parse_state *p, int c, const char *arg)
{
  (void) p, (void) c, (void) arg;
  print_version ();
}

static void
take_help (struct parse_state *p, int c, const char *arg)
{
  (void) p, (void) c, (void) arg;
  usage (stdout);
  exit (EXIT_SUCCESS);
}

static void
take_tls (struct parse_state *p, int c, const char *arg)
{
  struct options *o = p->o;

  (void) c;
  if (strcmp (arg, "off") == 0)
    o->tls = TLS_OFF;
  else if (strcmp (arg, "on") == 0)
    o->tls = TLS_ON;
  else if (strcmp (arg, "require") == 0)
    o->tls = TLS_REQUIRE;
  else
    usage_error ("--tls takes off, on or require, not \"%s\"", arg);
}

/* --allow RULE: for the export defined last, or all. */
static void
take_allow (struct parse_state *p, int c, const char *arg)
{
  (void) c;
  add_access_rule (p->o, p->scope, arg);
}

static void
take_allow_port (struct parse_state *p, int c, const char *arg)
{
  (void) c;
  add_allowed_ports (p->o, arg);
}

static void
take_auth_user (struct parse_state *p, int c, const char *arg)
{
  (void) c;
  if (arg[0] == '\0' || strlen (arg) > MAX_SECRET_LENGTH)
    usage_error ("--auth-user needs a name of 1 to %u bytes", MAX_SECRET_LENGTH);
  p->o->auth_user = arg;
}

static void
take_auth_password (struct parse_state *p, int c, const char *arg)
{
  (void) c;
  /* Never the password itself: every local user can read a command
   * line (ps, /proc/PID/cmdline). */
  if (!(strcmp (arg, "-") == 0 || arg[0] == '+' ||
        (arg[0] == '-' && arg[1] != '\0' &&
         strspn (arg + 1, "0123456789") == strlen (arg + 1))))
    usage_error ("--auth-password takes -, -FD or +FILE, not a password: a "
                 "command line is visible to every local user");
  if (arg[0] == '+' && arg[1] == '\0')
    usage_error ("--auth-password +FILE needs a file name");
  p->o->auth_password_source = arg;
}

/* --cache SIZE, --cache-dir DIR, --prefetch=all (options-cache.c). */
static void
take_cache (struct parse_state *p, int c, const char *arg)
{
  if (c == OPT_PREFETCH) {
    if (strcmp (arg, "all") != 0)
      usage_error ("--prefetch takes all (the whole object, into the cache), not \"%s\"",
                   arg);
    p->o->prefetch_all = true;
  }
  else if (c == OPT_CACHE)
    p->o->cache_bytes = parse_cache_bytes ("--cache", arg);
  else if (arg[0] == '\0')
    usage_error ("--cache-dir needs a directory");
  else
    p->o->cache_dir = arg;
}

/* -4, -6, -t, -D, --filter, --log (options-nbdkit.c). */
static void
take_nbdkit_option (struct parse_state *p, int c, const char *arg)
{
  nbdkit_option (p->o, c, arg);
}

/* Each option code's handler; a code without one (getopt's '?' for an
 * unknown option or a missing argument) ends the parse. */
static option_handler *const handlers[OPT_END] = {
  [1] = take_argument,
  /* Exports. */
  ['e'] = take_exportname, [OPT_EXPORT] = take_export, [OPT_EXPORT_RO] = take_export,
  [OPT_DESCRIPTION] = take_description, ['r'] = take_flag,
  [OPT_CONFIG] = take_config, [OPT_CONF_EXPORT] = take_conf_export,
  [OPT_CONF_DESCRIPTION] = take_conf_description,
  /* Listening and running. */
  ['p'] = take_port, ['i'] = take_text, ['U'] = take_text, ['s'] = take_flag,
  [OPT_RUN] = take_text, ['f'] = take_flag, ['P'] = take_text,
  [OPT_EXIT_WITH_PARENT] = take_flag, [OPT_PRINT_URI] = take_flag,
  /* Transfers. */
  [OPT_CAINFO] = take_text, [OPT_CAPATH] = take_text, [OPT_INSECURE] = take_flag,
  [OPT_AUTH_USER] = take_auth_user, [OPT_AUTH_PASSWORD] = take_auth_password,
  [OPT_CONNECTIONS] = take_number, [OPT_CLIENT_MEMORY] = take_number,
  [OPT_TIMEOUT] = take_number, [OPT_CONNECT_TIMEOUT] = take_number,
  [OPT_STALL_TIMEOUT] = take_number, [OPT_RETRIES] = take_number,
  [OPT_RETRY_DELAY] = take_number, [OPT_HANDSHAKE_TIMEOUT] = take_number,
  [OPT_PROXY_FROM_ENV] = take_flag, [OPT_MAX_CLIENTS] = take_number,
  [OPT_SPARE_FETCHERS] = take_number, [OPT_EXEC_FETCHERS] = take_flag,
  [OPT_ALLOW_PORT] = take_allow_port, [OPT_ALLOW_LOCAL_REDIRECTS] = take_flag,
  [OPT_CACHE] = take_cache, [OPT_CACHE_DIR] = take_cache, [OPT_PREFETCH] = take_cache,
  /* NBD over TLS and access. */
  [OPT_TLS] = take_tls, [OPT_TLS_CERTIFICATES] = take_text, [OPT_TLS_PSK] = take_text,
  [OPT_TLS_VERIFY_PEER] = take_flag, [OPT_TLS_PRIORITY] = take_text,
  [OPT_ALLOW] = take_allow,
  /* Privileges. */
  ['u'] = take_text, [OPT_USER] = take_text, ['g'] = take_text, [OPT_GROUP] = take_text,
  /* nbdkit's server options. */
  ['4'] = take_nbdkit_option, ['6'] = take_nbdkit_option, ['t'] = take_nbdkit_option,
  ['D'] = take_nbdkit_option, ['n'] = take_nbdkit_option, ['o'] = take_nbdkit_option,
  [OPT_FILTER] = take_nbdkit_option,
  [OPT_LOG] = take_nbdkit_option,
  /* Diagnostics. */
  ['v'] = take_flag, ['V'] = take_version, [OPT_SANDBOX_DEBUG] = take_flag,
  ['h'] = take_help, [OPT_HELP] = take_help,
  /* Statistics. */
  [OPT_STATS] = take_flag, [OPT_STATS_FILE] = take_text, [OPT_STATS_FORMAT] = take_text,
  [OPT_STATS_INTERVAL] = take_number,
};

/* The next option: from the --config file being read, else getopt's;
 * its argument in optarg.  -1 at the end of the command line. */
static int
next_option (struct parse_state *p, int argc, char **argv)
{
  while (p->conf.f) {
    int c = conf_next (&p->conf);
    if (c != 0)
      return c;
    p->conf.f = NULL;                   /* the end of the file */
    p->scope = p->scope_before_conf;
  }
  return getopt_long (argc, argv, short_options, long_options, NULL);
}

/* Nothing to serve: what to write, and where.  A service (systemd sets
 * INVOCATION_ID for each) is told the files its unit reads. */
__attribute__((noreturn))
static void
no_url_given (const struct parse_state *p)
{
  if (getenv ("INVOCATION_ID") != NULL)
    usage_error ("no URL given: name the exports in %s/nbdcurld/nbdcurld.conf (format: "
                 "nbdcurld.conf(5)) or the URL and options in NBDCURLD_OPTIONS in "
                 "%s/default/nbdcurld, then restart the service",
                 SYSCONFDIR, SYSCONFDIR);
  if (p->last_conf_path != NULL)
    usage_error ("no URL given: %s names no export: add an [export NAME] section "
                 "with url = URL, or url = URL alone (nbdcurld.conf(5)), or give a "
                 "URL on the command line", p->last_conf_path);
  usage_error ("no URL given: nbdcurld [OPTIONS] URL, or --export NAME=URL");
}

/* A URL given alone (with -e its name) is the one export. */
static void
add_single_url_export (struct parse_state *p)
{
  struct options *o = p->o;

  if (p->url) {
    if (o->nexports > 0)
      usage_error ("give either one URL or --export options, not both");
    struct export_spec *e = add_export (o, p->exportname ? p->exportname : "", p->url,
                                        false);
    e->conf_path = p->url_conf_path;
    e->conf_line = p->url_conf_line;
  }
  else if (p->exportname)
    usage_error ("-e names the single URL export; with --export the name is given there");
  if (o->nexports == 0)
    no_url_given (p);
}

void
options_parse (int argc, char **argv, struct options *o)
{
  struct parse_state p = {
    .o = o, .scope = ALL_EXPORTS, .scope_before_conf = ALL_EXPORTS,
  };
  int c;

  options_defaults (o);
  no_keys (&p.defaults);
  while ((c = next_option (&p, argc, argv)) != -1) {
    if (c < 0 || c >= OPT_END || handlers[c] == NULL) {
      fprintf (stderr, "Try 'nbdcurld --help' for more information.\n");
      exit (EXIT_FAILURE);
    }
    handlers[c] (&p, c, optarg);
  }
  add_single_url_export (&p);
  options_check (&p);
}
