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
#include <unistd.h>

#include "config-build.h"
#include "log.h"
#include "secret.h"
#include "supervisor.h"

enum {
  OPT_EXPORT = 256, OPT_EXPORT_RO, OPT_DESCRIPTION, OPT_RUN, OPT_EXIT_WITH_PARENT,
  OPT_PRINT_URI, OPT_CAINFO, OPT_CAPATH, OPT_INSECURE, OPT_CONNECTIONS,
  OPT_TIMEOUT, OPT_CONNECT_TIMEOUT, OPT_STALL_TIMEOUT, OPT_HANDSHAKE_TIMEOUT, OPT_HELP,
  OPT_USER, OPT_GROUP, OPT_SANDBOX_DEBUG, OPT_CLIENT_MEMORY, OPT_MAX_CLIENTS, OPT_AUTH_USER,
  OPT_AUTH_PASSWORD, OPT_TLS, OPT_TLS_CERTIFICATES, OPT_TLS_PSK, OPT_TLS_VERIFY_PEER,
  OPT_TLS_PRIORITY, OPT_ALLOW,
};

static const char short_options[] = "e:fi:p:P:rsU:vV";
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
  { "auth-user",         required_argument, NULL, OPT_AUTH_USER },
  { "auth-password",     required_argument, NULL, OPT_AUTH_PASSWORD },
  { "timeout",           required_argument, NULL, OPT_TIMEOUT },
  { "connect-timeout",   required_argument, NULL, OPT_CONNECT_TIMEOUT },
  { "stall-timeout",     required_argument, NULL, OPT_STALL_TIMEOUT },
  { "handshake-timeout", required_argument, NULL, OPT_HANDSHAKE_TIMEOUT },
  { "user",              required_argument, NULL, OPT_USER },
  { "group",             required_argument, NULL, OPT_GROUP },
  { "sandbox-debug",     no_argument,       NULL, OPT_SANDBOX_DEBUG },
  { "tls",               required_argument, NULL, OPT_TLS },
  { "tls-certificates",  required_argument, NULL, OPT_TLS_CERTIFICATES },
  { "tls-psk",           required_argument, NULL, OPT_TLS_PSK },
  { "tls-verify-peer",   no_argument,       NULL, OPT_TLS_VERIFY_PEER },
  { "tls-priority",      required_argument, NULL, OPT_TLS_PRIORITY },
  { "allow",             required_argument, NULL, OPT_ALLOW },
  { NULL, 0, NULL, 0 },
};

static void
usage (FILE *fp)
{
  fprintf (fp,
"Usage: nbdcurld [OPTIONS] URL\n"
"       nbdcurld [OPTIONS] --export NAME=URL [--export NAME=URL ...]\n"
"Serve http, https, ftp, ftps or file URLs as NBD exports.  A URL given as\n"
"+FILE is read from FILE (keeps secrets in URLs off the command line).\n"
"\n"
"Exports:\n"
"  -e, --exportname NAME     name of the single URL export (default \"\")\n"
"      --export NAME=URL     add an export (repeatable)\n"
"      --export-ro NAME=URL  add an export served read-only\n"
"      --description NAME=TEXT  describe export NAME to clients\n"
"  -r, --readonly            serve every export read-only\n"
"Listening:\n"
"  -p, --port PORT           TCP port (default 10809)\n"
"  -i, --ipaddr ADDR         listen on this address only\n"
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
"      --timeout SECS        fail a transfer that takes longer (default: none)\n"
"      --connect-timeout SECS  (default %u)\n"
"      --stall-timeout SECS  fail a transfer slower than %u byte/s on average\n"
"                            over SECS, or without a reply after SECS (default %u)\n"
"      --handshake-timeout SECS  time a client has to negotiate (default %u)\n"
"      --max-clients N       clients served at once (default %u)\n"
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
"      --user USER           run the front-end and fetchers as USER when\n"
"                            started as root (default: nobody)\n"
"      --group GROUP         and as GROUP (default: USER's group)\n"
"Diagnostics:\n"
"  -v, --verbose             debug messages\n"
"  -V, --version             print the version\n"
"      --sandbox-debug       name a system call the sandbox refuses, then exit\n"
"                            (a diagnostic for policy work, not a way to run)\n"
"      --help                this text\n"
"See nbdcurld(8) for details.\n",
           DEFAULT_CONNECTIONS, DEFAULT_CLIENT_MEMORY / (1024 * 1024),
           DEFAULT_CONNECT_TIMEOUT, MIN_TRANSFER_RATE, DEFAULT_STALL_TIMEOUT,
           DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_MAX_CLIENTS);
}

__attribute__((noreturn, format (printf, 1, 2)))
static void
usage_error (const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
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
  return e;
}

/* --allow RULE, for the export defined last or, before any, for all. */
static void
add_access_rule (struct options *o, const char *rule)
{
  struct access_spec *a;
  char addr[INET6_ADDRSTRLEN + 1];
  const char *slash;
  size_t alen;

  if (o->nrules >= MAX_ACCESS_RULES)
    usage_error ("at most %u --allow rules can be given", MAX_ACCESS_RULES);
  a = &o->rules[o->nrules++];
  *a = (struct access_spec) {
    .export = o->nexports > 0 ? o->nexports - 1 : ALL_EXPORTS, .text = rule,
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
  if (o->tls_verify_peer && !o->tls_certificates)
    usage_error ("--tls-verify-peer checks client certificates against the CA "
                 "in --tls-certificates DIR: give that too");
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
    if ((a->kind == ACCESS_CERT_DN || a->kind == ACCESS_CERT_SAN) && !o->tls_verify_peer)
      usage_error ("--allow %s: certificate names need --tls-verify-peer (only a "
                   "verified client certificate names anyone)", a->text);
  }
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

void
options_parse (int argc, char **argv, struct options *o)
{
  const char *exportname = NULL;
  struct { char *name; const char *text; } descriptions[MAX_EXPORTS];
  unsigned ndescriptions = 0, i, j;
  int c;

  memset (o, 0, sizeof *o);
  o->connections = DEFAULT_CONNECTIONS;
  o->connect_timeout = DEFAULT_CONNECT_TIMEOUT;
  o->stall_timeout = DEFAULT_STALL_TIMEOUT;
  o->handshake_timeout = DEFAULT_HANDSHAKE_TIMEOUT;
  o->client_memory = DEFAULT_CLIENT_MEMORY;
  o->max_clients = DEFAULT_MAX_CLIENTS;

  while ((c = getopt_long (argc, argv, short_options, long_options, NULL)) != -1) {
    char *name;
    const char *value;

    switch (c) {
    case 'e': exportname = optarg; break;
    case OPT_EXPORT:
    case OPT_EXPORT_RO:
      split_assignment (c == OPT_EXPORT ? "--export" : "--export-ro", optarg, &name, &value);
      add_export (o, name, value, c == OPT_EXPORT_RO);
      free (name);
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
    case OPT_USER: o->user = optarg; break;
    case OPT_GROUP: o->group = optarg; break;
    case OPT_SANDBOX_DEBUG: o->sandbox_debug = true; break;
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
    case OPT_ALLOW: add_access_rule (o, optarg); break;
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
    case OPT_CONNECT_TIMEOUT:
      o->connect_timeout = parse_uint ("--connect-timeout", optarg, 1, MAX_TIMEOUT);
      break;
    case OPT_MAX_CLIENTS:
      o->max_clients = parse_uint ("--max-clients", optarg, 1, MAX_MAX_CLIENTS);
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

  if (optind < argc) {
    if (o->nexports > 0)
      usage_error ("give either one URL or --export options, not both");
    if (optind + 1 < argc)
      usage_error ("unexpected argument \"%s\": to serve several URLs use "
                   "--export NAME=URL for each", argv[optind + 1]);
    add_export (o, exportname ? exportname : "", argv[optind], false);
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
  check_tls_options (o);
  if (o->cainfo && strlen (o->cainfo) > MAX_PATH_LENGTH)
    usage_error ("--cainfo path too long");
  if (o->capath && strlen (o->capath) > MAX_PATH_LENGTH)
    usage_error ("--capath path too long");
}
