/*
 * options-usage.c: --help.  The list of keys comes from their table
 * (curl-keys.h); the options are described a section at a time, in the
 * order --help shows them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data-path.h"
#include "limits-server.h"
#include "limits-spares.h"
#include "limits-transfer.h"
#include "options-internal.h"

/* --help gives the default delay in whole seconds. */
_Static_assert (RETRY_BASE_DELAY_MS % 1000 == 0, "RETRY_BASE_DELAY_MS in whole seconds");

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

/* The options that say what is served, where and how the server runs. */
static void
usage_serving (FILE *fp)
{
  fprintf (fp,
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
"      --print-uri           print the NBD URI of the server\n");
}

/* How the web server is reached, with the defaults of each limit. */
static void
usage_transfers (FILE *fp)
{
  fprintf (fp,
"Transfers:\n"
"      --cainfo FILE         CA certificates for https and ftps\n"
"      --capath DIR          directory of CA certificates\n"
"      --insecure            do not verify TLS certificates (testing only)\n"
"      --auth-user NAME      user name for the web or FTP server\n"
"      --auth-password -|-FD|+FILE  its password: asked on the terminal,\n"
"                            read from descriptor FD, or from FILE (+cred:NAME:\n"
"                            from the service's credential NAME)\n"
"      --connections N       connections per client to the web server (default %u)\n"
"      --client-memory SIZE  data one client's reads may hold in flight\n"
"                            (default %uM; K and M suffixes)\n"
"      --cache SIZE          a read cache of SIZE per export, shared by its\n"
"                            clients (K, M, G or T suffixes)\n"
"      --cache-dir DIR       keep it in an unnamed file in DIR, not memory\n"
"      --prefetch=all        fetch each object into its cache while idle\n"
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
"                            a loopback or link-local address\n",
           DEFAULT_CONNECTIONS, DEFAULT_CLIENT_MEMORY / (1024 * 1024),
           DEFAULT_CONNECT_TIMEOUT, MIN_TRANSFER_RATE, DEFAULT_STALL_TIMEOUT,
           DEFAULT_RETRIES, RETRY_BASE_DELAY_MS / 1000,
           DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_MAX_CLIENTS, DEFAULT_SPARE_FETCHERS);
}

/* Who may connect, whom the children run as, nbdkit's server options and
 * the diagnostics. */
static void
usage_access_and_diagnostics (FILE *fp)
{
  fprintf (fp,
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
"  -n, --newstyle            taken: newstyle is the only protocol spoken\n"
"  -o, --oldstyle            refused\n"
"      --filter NAME         multi-conn, retry, retry-request, readahead and\n"
"                            stats taken (built in); the others refused\n"
"      --log stderr|syslog|null  where log lines go (default: syslog in the\n"
"                            background, stderr with -f, --run, -s)\n"
"  -D curl.verbose=1         trace each web conversation, secrets masked\n"
"Statistics (see STATISTICS in nbdcurld(8); SIGUSR1 logs them):\n"
"      --stats               print them at exit (so does -v)\n"
"      --stats-file FILE     write them to FILE at exit, on SIGUSR1 and every\n"
"                            --stats-interval (replaced whole, never half)\n"
"      --stats-format text|prometheus\n"
"                            FILE's format (prometheus: node_exporter's\n"
"                            textfile collector)\n"
"      --stats-interval N    write FILE every N seconds too\n"
"Diagnostics:\n"
"  -v, --verbose             debug messages\n"
"  -V, --version             print the version and those of the libraries\n"
"      --sandbox-debug       name a system call the sandbox refuses, then exit\n"
"                            (a diagnostic for policy work, not a way to run)\n"
"  -h, --help                this text\n"
"See nbdcurld(8) for details.\n");
}

void
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
  fputc ('\n', fp);
  usage_serving (fp);
  usage_transfers (fp);
  usage_access_and_diagnostics (fp);
}
