/*
 * exports.c: each export made ready at start: its file: image opened, its
 * keys checked against what the URL checker said, its password, cookie
 * and proxy password read, its CA certificates put in a sealed memfd;
 * and the paths that must survive a change of directory (unix-socket-path=,
 * the socket, the pid file) made absolute.
 *
 * Apart because all of it happens once, as root if started so, before the
 * front-end or any fetcher runs, and with urlcheck-client.c it is the
 * part of the supervisor that writes into the parsed options: after
 * them, every other part only reads them.  It owns one answer, whether
 * every export is read-only (multi_conn).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cache-backing.h"
#include "ca-bundle.h"
#include "exports.h"
#include "fetcher-wire.h"
#include "limits-nbd.h"
#include "limits-strings.h"
#include "log.h"
#include "secret.h"
#include "sockets.h"
#include "url-check-wire.h"

/* The parsed options, filled in here (exports_make_paths_absolute,
 * exports_prepare). */
static struct options *options;
#define opt (*options)

static bool multi_conn;

const char *
export_where (const struct export_spec *e)
{
  static char where[MAX_PATH_LENGTH + 32];

  if (e->conf_path == NULL)
    return "";
  snprintf (where, sizeof where, "%s:%u: ", e->conf_path, e->conf_line);
  return where;
}

/* A file: export's image, opened for reading, and for writing unless
 * the export is read-only. */
static void
open_file_image (struct export_spec *e)
{
  struct stat st;
  /* O_NONBLOCK for the open alone: a FIFO in place of the image must
   * not hang the start; the type check refuses it. */
  int fd = open (e->file_path,
                 (e->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  int flags;

  if (fd == -1 && !e->readonly && (errno == EACCES || errno == EROFS || errno == EPERM))
    fatal_errno ("%sexport \"%s\": cannot open %s for writing (serve it "
                 "read-only with -r or --export-ro)", export_where (e), e->name,
                 e->file_path);
  if (fd == -1)
    fatal_errno ("%sexport \"%s\": cannot open %s", export_where (e), e->name,
                 e->file_path);
  if (fstat (fd, &st) == -1 || !(S_ISREG (st.st_mode) || S_ISBLK (st.st_mode)))
    fatal ("%sexport \"%s\": %s is not a regular file or block device",
           export_where (e), e->name, e->file_path);
  flags = fcntl (fd, F_GETFL);
  if (flags == -1 || fcntl (fd, F_SETFL, flags & ~O_NONBLOCK) == -1)
    fatal_errno ("export \"%s\": fcntl", e->name);
  e->fd = fd;
}

static void
check_exports (void)
{
  unsigned i;

  multi_conn = true;
  for (i = 0; i < opt.nexports; i++) {
    struct export_spec *e = &opt.exports[i];
    const char *shown = e->log_url;

    if (opt.readonly)
      e->readonly = true;
    e->fd = -1;
    if (e->kind == URL_FILE)
      open_file_image (e);
    else
      e->readonly = true;     /* web servers take no ranged writes: moot, unsaid */
    if (!e->readonly && opt.multi_conn_mode == MULTI_CONN_ALWAYS)
      fatal ("%sexport \"%s\": %s is writable, and multi-conn-mode= asks for "
             "multi-conn, which nbdcurld advertises only when every export is "
             "read-only: serve it read-only (-r or --export-ro), or give "
             "multi-conn-mode=auto", export_where (e), e->name, shown);
    if (!e->readonly || opt.multi_conn_mode == MULTI_CONN_DISABLE)
      multi_conn = false;
    if (e->keys.sslverify == 0 && e->kind != URL_FILE)
      warn ("export \"%s\": %s: TLS certificate verification is off (%s): anyone "
            "between here and the web server can pose as it; give its CA with "
            "--cainfo FILE instead", e->name, shown,
            opt.insecure ? "--insecure" : "sslverify=false");
    if (e->keys.protocols != 0 && e->kind != URL_FILE) {
      static const uint32_t bit[] = {
        [URL_HTTP] = FETCHER_PROTO_HTTP, [URL_HTTPS] = FETCHER_PROTO_HTTPS,
        [URL_FTP] = FETCHER_PROTO_FTP, [URL_FTPS] = FETCHER_PROTO_FTPS,
      };
      if (!(e->keys.protocols & bit[e->kind]))
        fatal ("%sexport \"%s\": %s uses a protocol that protocols= does not allow",
               export_where (e), e->name, shown);
    }
    /* Proxies and Unix sockets carry HTTP: libcurl would send FTP
     * through an HTTP proxy as HTTP (or not at all through a socket). */
    if ((e->proxy || e->keys.unix_socket_path) && e->kind != URL_HTTP && e->kind != URL_HTTPS)
      fatal ("%sexport \"%s\": %s: %s serves http and https URLs only", export_where (e),
             e->name, shown,
             e->proxy ? "a proxy" : "unix-socket-path=");
    if (e->proxy)
      debug ("export \"%s\": through the proxy %s%s%s", e->name, e->proxy_log_url,
             e->noproxy ? ", except for no_proxy: " : "", e->noproxy ? e->noproxy : "");
    /* A configuration file names secrets by file only (nbdcurld.conf(5)). */
    if (e->has_password && !e->url_from_file && e->conf_path)
      fatal ("%sexport \"%s\": the URL holds a password: give the URL as "
             "url = +FILE, or user = NAME and password = +FILE", export_where (e),
             e->name);
    if (e->has_password && !e->url_from_file)
      notice ("export \"%s\": the URL holds a password, which every local user "
              "can read on the command line: use --auth-user and --auth-password, "
              "or give the URL as +FILE", e->name);
  }
}

/* ---- Credentials. ---- */

/* A secret from where the command line says (-, -FD or +FILE): read
 * once, before anything runs in the background, and handed to each
 * fetcher of its export through its configuration pipe.  where: "" or
 * the --config line of the export whose key it is. */
static char *
read_secret_source (const char *where, const char *option, const char *noun, size_t max,
                    const char *source, const char *for_whom)
{
  char err[512], *secret;
  long fd = -1;

  if (source[0] == '-' && source[1] != '\0') {
    fd = strtol (source + 1, NULL, 10);     /* digits: checked by options_parse */
    if (sockets_is_listener (fd))
      fatal ("%s%s%s: descriptor %ld is a socket-activated listener", where, option,
             source, fd);
  }
  secret = secret_read_named (option, noun, max, source, for_whom, err, sizeof err);
  if (secret == NULL)
    fatal ("%s%s", where, err);
  /* secret_read closed the descriptor; keep 0, 1 and 2 open (on
   * /dev/null) so that nothing opened later takes their place. */
  if (fd >= 0 && fd <= 2) {
    int null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd == -1 || (null_fd != fd && dup2 (null_fd, (int) fd) == -1))
      fatal_errno ("/dev/null");
    if (null_fd != fd)
      close (null_fd);
    else if (fcntl (null_fd, F_SETFD, 0) == -1)
      fatal_errno ("fcntl");
  }
  return secret;
}

/* Whom a secret read from the terminal is for, for its prompt: "USER at
 * HOST:PORT (export "NAME")", the host taken from a URL for logs
 * (scheme://host[:port]/...), USER left out when NULL. */
static const char *
secret_for (const char *user, const char *log_url, const char *export)
{
  static char whom[MAX_SECRET_LENGTH + MAX_LOG_URL_LENGTH + NBD_MAX_STRING + 32];
  const char *host = log_url ? strstr (log_url, "://") : NULL;
  int host_len;

  host = host ? host + 3 : "the web server";
  host_len = (int) strcspn (host, "/");
  snprintf (whom, sizeof whom, "%s%s%.*s (export \"%s\")", user ? user : "",
            user ? " at " : "", host_len, host, export);
  return whom;
}

/* Each export's password and cookie: a source given for several exports
 * (the long options, or keys before the first --export) is read once. */
static void
read_export_secrets (void)
{
  unsigned i, j;

  for (i = 0; i < opt.nexports; i++) {
    struct export_spec *e = &opt.exports[i];
    const char *c = e->keys.cookie_source;

    for (j = 0; j < i; j++) {
      const struct export_spec *p = &opt.exports[j];
      if (e->keys.password_source && p->keys.password_source == e->keys.password_source)
        e->auth_password = p->auth_password;
      if (c && p->keys.cookie_source == c)
        e->cookie = p->cookie;
    }
    /* cookiefile=: read once for the exports that share the key. */
    for (j = 0; j < i; j++)
      if (e->keys.cookie_file && opt.exports[j].keys.cookie_file == e->keys.cookie_file)
        e->cookie_lines = opt.exports[j].cookie_lines;
    if (e->keys.cookie_file && e->cookie_lines == NULL) {
      char err[MAX_PATH_LENGTH + 256];
      e->cookie_lines = e->keys.cookie_file[0] == '\0'
        ? strdup ("")
        : secret_read_cookie_file (e->keys.cookie_file, err, sizeof err);
      if (e->cookie_lines == NULL)
        fatal ("%s%s", export_where (e),
               e->keys.cookie_file[0] == '\0' ? "strdup: out of memory" : err);
      debug ("export \"%s\": the cookie engine is on, with %zu bytes of cookies",
             e->name, strlen (e->cookie_lines));
    }
    for (j = 0; j < i; j++)
      if (e->keys.proxy_password_source &&
          opt.exports[j].keys.proxy_password_source == e->keys.proxy_password_source)
        e->proxy_password = opt.exports[j].proxy_password;
    if (e->keys.proxy_password_source && e->proxy_password == NULL)
      e->proxy_password = read_secret_source (export_where (e), "proxy-password=",
                                              "proxy password",
                                              MAX_SECRET_LENGTH,
                                              e->keys.proxy_password_source,
                                              secret_for (e->keys.proxy_user,
                                                          e->proxy_log_url, e->name));
    if (e->keys.password_source && e->auth_password == NULL) {
      bool long_option = e->keys.password_source == opt.auth_password_source;
      e->auth_password = read_secret_source (
        long_option ? "" : export_where (e), long_option ? "--auth-password " : "password=",
        "password", MAX_SECRET_LENGTH, e->keys.password_source,
        secret_for (e->keys.auth_user, e->log_url, e->name));
      debug ("export \"%s\": read a password for user %s", e->name, e->keys.auth_user);
    }
    if (c && e->cookie == NULL) {
      if (c[0] == '-' || c[0] == '+')
        e->cookie = read_secret_source (export_where (e), "cookie=", "cookie",
                                        MAX_COOKIE_LENGTH, c,
                                        secret_for (NULL, e->log_url, e->name));
      else {
        size_t k;
        if (strlen (c) > MAX_COOKIE_LENGTH)
          fatal ("cookie=: longer than %u bytes", MAX_COOKIE_LENGTH);
        for (k = 0; c[k]; k++)
          if ((unsigned char) c[k] < 0x20 || (unsigned char) c[k] == 0x7f)
            fatal ("cookie=: a control character");
        notice ("export \"%s\": the cookie is on the command line, where every "
                "local user can read it: give it as cookie=+FILE", e->name);
        e->cookie = strdup (c);
        if (e->cookie == NULL)
          fatal_errno ("strdup");
      }
    }
  }
}

/* ---- CA certificates (ca-bundle.c). ---- */

/* Each network export's --cainfo and --capath (or cainfo= and capath=),
 * read now, as root if we were started so, and before the background's
 * change of directory; exports that share both share one bundle.  A file
 * we cannot use stops the start, saying which and why. */
static void
read_export_ca_files (void)
{
  unsigned i, j;

  for (i = 0; i < opt.nexports; i++) {
    struct export_spec *e = &opt.exports[i];
    const struct fetch_settings *k = &e->keys;
    char err[2 * MAX_PATH_LENGTH + 256];

    if (e->kind == URL_FILE || (k->cainfo == NULL && k->capath == NULL))
      continue;
    for (j = 0; j < i; j++)
      if (opt.exports[j].ca_bundle_len > 0 && opt.exports[j].keys.cainfo == k->cainfo &&
          opt.exports[j].keys.capath == k->capath)
        break;
    if (j < i) {
      e->ca_bundle_fd = opt.exports[j].ca_bundle_fd;
      e->ca_bundle_len = opt.exports[j].ca_bundle_len;
      continue;
    }
    e->ca_bundle_fd = ca_bundle_make (k->cainfo, k->cainfo == opt.cainfo ? "--cainfo " : "cainfo=",
                                      k->capath, k->capath == opt.capath ? "--capath " : "capath=",
                                      &e->ca_bundle_len, err, sizeof err);
    if (e->ca_bundle_fd == -1)
      fatal ("%s%s", k->cainfo == opt.cainfo && k->capath == opt.capath ? ""
             : export_where (e), err);
    debug ("export \"%s\": %u bytes of CA certificates for its fetchers", e->name,
           e->ca_bundle_len);
  }
}

/* ---- Paths. ---- */

/* The supervisor may change directory (to / when it goes into the
 * background) before a fetcher connects to its Unix socket or the
 * supervisor removes its socket and pid file: make relative paths
 * absolute now.  (CA files are read before that: read_export_ca_files.) */
static const char *
absolute_path (const char *what, const char *path, bool must_exist)
{
  char *abs = NULL, cwd[4096];

  if (path == NULL || path[0] == '/')
    return path;
  if (must_exist) {
    abs = realpath (path, NULL);
    if (abs == NULL)
      fatal_errno ("%s %s", what, path);
    return abs;
  }
  if (getcwd (cwd, sizeof cwd) == NULL)
    fatal_errno ("getcwd (to make %s %s absolute)", what, path);
  if (asprintf (&abs, "%s/%s", cwd, path) == -1)
    fatal_errno ("asprintf");
  return abs;
}

static void
make_paths_absolute (void)
{
  unsigned i;

  for (i = 0; i < opt.nexports; i++) {
    struct fetch_settings *k = &opt.exports[i].keys;
    /* The web server's socket may come later: it need not exist yet. */
    k->unix_socket_path = absolute_path ("unix-socket-path=", k->unix_socket_path, false);
    if (k->unix_socket_path && strlen (k->unix_socket_path) > MAX_UNIX_SOCKET_PATH)
      fatal ("unix-socket-path=%s: longer than %u bytes once made absolute (the most "
             "a Unix socket address holds): give a shorter path", k->unix_socket_path,
             MAX_UNIX_SOCKET_PATH);
  }
  opt.pidfile = absolute_path ("the pid file", opt.pidfile, false);
  if (opt.unix_path && strcmp (opt.unix_path, "-") != 0)
    opt.unix_path = absolute_path ("the socket", opt.unix_path, false);
}

void
exports_make_paths_absolute (struct options *o)
{
  options = o;
  make_paths_absolute ();
}

void
exports_prepare (struct options *o)
{
  options = o;
  check_exports ();
  read_export_secrets ();
  read_export_ca_files ();
  cache_backing_make (o);
}

bool
exports_multi_conn (void)
{
  return multi_conn;
}
