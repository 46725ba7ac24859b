/*
 * options-check.c: the options' defaults, and what is done once every
 * option is taken: descriptions given to their exports, the rules
 * between options, and each export's keys merged over the defaults'
 * and the long options, then checked together.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "access-rules.h"
#include "config.h"
#include "data-path.h"
#include "limits-nbd.h"
#include "limits-server.h"
#include "limits-spares.h"
#include "limits-strings.h"
#include "limits-transfer.h"
#include "log.h"
#include "options-internal.h"
#include "tls-modes.h"

/* Every key not given: NULL and 0, and -1 for the kinds where 0 is a
 * value. */
#define UNSET_CHOICE(name, field, parse, min, max, fallback, help) k->field = -1;
#define UNSET_SWITCH(name, field, fallback, flag_when_false, help) k->field = -1;
void
no_keys (struct fetch_settings *k)
{
  *k = (struct fetch_settings) { 0 };
  CURL_KEYS (CURL_KEY_SKIP, CURL_KEY_SKIP, UNSET_CHOICE, UNSET_SWITCH, CURL_KEY_SKIP,
             CURL_KEY_SKIP, CURL_KEY_SKIP)
}

/* The options before any is taken: what a line that gives none gets. */
void
options_defaults (struct options *o)
{
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

/* --description NAME=TEXT (and a section's description =), now that
 * every export is defined. */
static void
take_descriptions (struct parse_state *p)
{
  struct options *o = p->o;
  unsigned i, j;

  for (i = 0; i < p->ndescriptions; i++) {
    for (j = 0; j < o->nexports; j++)
      if (strcmp (o->exports[j].name, p->descriptions[i].name) == 0)
        break;
    if (j == o->nexports)
      usage_error ("--description names export \"%s\", which is not defined",
                   p->descriptions[i].name);
    if (strlen (p->descriptions[i].text) > NBD_MAX_STRING)
      usage_error ("descriptions are at most %u bytes", NBD_MAX_STRING);
    free (o->exports[j].description);
    o->exports[j].description = strdup (p->descriptions[i].text);
    if (o->exports[j].description == NULL)
      fatal_errno ("strdup");
    free (p->descriptions[i].name);
  }
}

/* Where to listen: one way at a time. */
static void
check_listening (const struct options *o)
{
  if (o->single && (o->run || o->port || o->ipaddr || o->unix_path))
    usage_error ("-s serves one client on stdin/stdout: it cannot be combined "
                 "with --run, -p, -i or -U");
  if (o->unix_path && (o->port || o->ipaddr))
    usage_error ("-U cannot be combined with -p or -i");
  if (o->family != AF_UNSPEC && (o->unix_path || o->single))
    usage_error ("-4 and -6 choose TCP addresses: not with -U or -s");
}

/* Once every option is taken, in this order (which decides the message
 * a line with several problems gets). */
void
options_check (struct parse_state *p)
{
  struct options *o = p->o;
  unsigned i;

  take_descriptions (p);
  check_listening (o);
  o->multi_conn_mode = nbdkit_multi_conn_mode ();
  for (i = 0; i < o->nexports; i++)
    merge_keys (o, &p->defaults, &o->exports[i]);
  options_check_cache (o);
  check_tls_options (o);
  if (o->cainfo && strlen (o->cainfo) > MAX_PATH_LENGTH)
    usage_error ("--cainfo path too long");
  if (o->capath && strlen (o->capath) > MAX_PATH_LENGTH)
    usage_error ("--capath path too long");
}
