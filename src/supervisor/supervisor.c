/*
 * supervisor.c: the supervisor role.
 *
 * It parses the command line, has every URL checked (by the URL checker,
 * url-check.c: this executable does not link libcurl), makes the listening
 * sockets, then fork+execs the front-end and, at the front-end's request,
 * one fetcher per client connection.  It never reads a client byte or an
 * HTTP byte: its only peer is the front-end's control socket, which may
 * send exactly one kind of request (frontend requests table below).
 *
 * Peers: front-end (control socket, supervisor_dispatch_frontend), signals
 * (signalfd: children exiting, termination), the --run command (a child),
 * header-script= and cookie-script= runs and the fetchers' script
 * channels (scripts.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include "clock.h"
#include "config-build.h"
#include "ca-bundle.h"
#include "config.h"
#include "ipc.h"
#include "log.h"
#include "sandbox.h"
#include "scripts.h"
#include "secret.h"
#include "supervisor.h"
#include "wire.h"

/* Fetchers alive at once: one per client, plus ones still exiting after
 * their client moved to another export or left (--max-clients). */
#define MAX_FETCHERS (2 * opt.max_clients)

static struct options opt;
static int fetcher_exe_fd = -1;       /* FETCHER_EXE, for fexecve */
static int frontend_exe_fd = -1;      /* FRONTEND_EXE */
static int supervisor_exe_fd = -1;    /* this program, for the file remover */
static int listeners[64];
static unsigned nlisteners;
static char *private_dir;             /* -U - or --run: mkdtemp'd */
static char *unix_socket_path;        /* to unlink at exit */
static bool socket_activated;
static bool multi_conn;

/* --tls: the public files the front-end gets, and the descriptors of the
 * secret ones, opened here (as root if started so) but never read here:
 * only the key holder reads them. */
static struct tls_settings tls;
static int tls_key_fd = -1;           /* server-key.pem */
static int tls_psk_fd = -1;           /* --tls-psk */
static pid_t keyholder_pid = -1;

static pid_t frontend_pid = -1;
static int control_fd = -1;           /* our end of the front-end's control socket */
static pid_t run_pid = -1;
static int run_gate_fd = -1;          /* --run's command waits for a byte here */
static pid_t *fetcher_pids;           /* MAX_FETCHERS, from start_frontend */
static unsigned nfetchers;

/* A graceful stop under way (the first SIGTERM or SIGINT): the front-end
 * was told to stop accepting, and the server stops when it has exited or
 * at stop_deadline_ms (CLOCK_MONOTONIC), whichever comes first. */
static bool stopping;
static uint64_t stop_deadline_ms;

/* Started as root: the supervisor, and so every child, becomes this user
 * and group once the sockets and images are open. */
static bool change_user;
static uid_t child_uid;
static gid_t child_gid;

/* ---- Exports. ---- */

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
    if (e->kind == URL_FILE) {
      struct stat st;
      /* O_NONBLOCK for the open alone: a FIFO in place of the image must
       * not hang the start; the type check refuses it. */
      int fd = open (e->file_path,
                     (e->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
      int flags;
      if (fd == -1 && !e->readonly && (errno == EACCES || errno == EROFS || errno == EPERM))
        fatal_errno ("export \"%s\": cannot open %s for writing (serve it "
                     "read-only with -r or --export-ro)", e->name, e->file_path);
      if (fd == -1)
        fatal_errno ("export \"%s\": cannot open %s", e->name, e->file_path);
      if (fstat (fd, &st) == -1 || !(S_ISREG (st.st_mode) || S_ISBLK (st.st_mode)))
        fatal ("export \"%s\": %s is not a regular file or block device",
               e->name, e->file_path);
      flags = fcntl (fd, F_GETFL);
      if (flags == -1 || fcntl (fd, F_SETFL, flags & ~O_NONBLOCK) == -1)
        fatal_errno ("export \"%s\": fcntl", e->name);
      e->fd = fd;
    }
    else if (!e->readonly) {
      notice ("export \"%s\": %s cannot be written at an offset: serving it "
              "read-only", e->name, shown);
      e->readonly = true;
    }
    if (!e->readonly)
      multi_conn = false;
    if (e->keys.protocols != 0 && e->kind != URL_FILE) {
      static const uint32_t bit[] = {
        [URL_HTTP] = FETCHER_PROTO_HTTP, [URL_HTTPS] = FETCHER_PROTO_HTTPS,
        [URL_FTP] = FETCHER_PROTO_FTP, [URL_FTPS] = FETCHER_PROTO_FTPS,
      };
      if (!(e->keys.protocols & bit[e->kind]))
        fatal ("export \"%s\": %s uses a protocol that protocols= does not allow",
               e->name, shown);
    }
    /* Proxies and Unix sockets carry HTTP: libcurl would send FTP
     * through an HTTP proxy as HTTP (or not at all through a socket). */
    if ((e->proxy || e->keys.unix_socket_path) && e->kind != URL_HTTP && e->kind != URL_HTTPS)
      fatal ("export \"%s\": %s: %s serves http and https URLs only", e->name, shown,
             e->proxy ? "a proxy" : "unix-socket-path=");
    if (e->proxy)
      debug ("export \"%s\": through the proxy %s%s%s", e->name, e->proxy_log_url,
             e->noproxy ? ", except for no_proxy: " : "", e->noproxy ? e->noproxy : "");
    /* A configuration file names secrets by file only (nbdcurld.conf(5)). */
    if (e->has_password && !e->url_from_file && e->conf_path)
      fatal ("export \"%s\": the URL in %s holds a password: give the URL as "
             "url = +FILE, or user = NAME and password = +FILE", e->name, e->conf_path);
    if (e->has_password && !e->url_from_file)
      notice ("export \"%s\": the URL holds a password, which every local user "
              "can read on the command line: use --auth-user and --auth-password, "
              "or give the URL as +FILE", e->name);
  }
}

/* False when the one client of -s sits on something splice cannot write. */
static bool data_pipe_usable = true;

/* ---- Executables. ---- */

/* Each child role has its own executable.  FRONTEND_EXE is linked
 * without libcurl, OpenSSL and their libraries: the process that reads
 * every client byte maps none of their code.  FETCHER_EXE (fetchers and
 * the URL checker) is the only one linked with them; this executable,
 * the supervisor, is not either, which saves each running nbdcurld the
 * megabyte of private pages that loading them costs a process.  Each is
 * looked for next to this binary (a build tree, or a package that
 * installs all three in one directory), then in LIBEXECDIR.  Opened at
 * start, before any privilege is dropped, and executed by descriptor. */
static int
open_child_executable (const char *name)
{
  char self[4096], *slash, *path = NULL;
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  int fd = -1;

  if (n > 0) {
    self[n] = '\0';
    slash = strrchr (self, '/');
    if (slash != NULL) {
      *slash = '\0';
      if (asprintf (&path, "%s/%s", self, name) == -1)
        fatal_errno ("asprintf");
      fd = open (path, O_RDONLY | O_CLOEXEC);
      free (path);
    }
  }
  if (fd == -1) {
    if (asprintf (&path, "%s/%s", LIBEXECDIR, name) == -1)
      fatal_errno ("asprintf");
    fd = open (path, O_RDONLY | O_CLOEXEC);
    free (path);
    if (fd == -1)
      fatal_errno ("cannot open nbdcurld's executable %s (next to this "
                   "program or in %s): is nbdcurld installed completely?",
                   name, LIBEXECDIR);
  }
  return fd;
}

/* ---- Credentials. ---- */

/* A secret from where the command line says (-, -FD or +FILE): read
 * once, before anything runs in the background, and handed to each
 * fetcher of its export through its configuration pipe. */
static char *
read_secret_source (const char *option, const char *noun, size_t max, const char *source)
{
  char err[512], *secret;
  long fd = -1;
  unsigned i;

  if (source[0] == '-' && source[1] != '\0') {
    fd = strtol (source + 1, NULL, 10);     /* digits: checked by options_parse */
    for (i = 0; i < nlisteners; i++)
      if (listeners[i] == fd)
        fatal ("%s%s: descriptor %ld is a socket-activated listener", option, source, fd);
  }
  secret = secret_read_named (option, noun, max, source, err, sizeof err);
  if (secret == NULL)
    fatal ("%s", err);
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
        fatal ("%s", e->keys.cookie_file[0] == '\0' ? "strdup: out of memory" : err);
      debug ("export \"%s\": the cookie engine is on, with %zu bytes of cookies",
             e->name, strlen (e->cookie_lines));
    }
    for (j = 0; j < i; j++)
      if (e->keys.proxy_password_source &&
          opt.exports[j].keys.proxy_password_source == e->keys.proxy_password_source)
        e->proxy_password = opt.exports[j].proxy_password;
    if (e->keys.proxy_password_source && e->proxy_password == NULL)
      e->proxy_password = read_secret_source ("proxy-password=", "proxy password",
                                              MAX_SECRET_LENGTH,
                                              e->keys.proxy_password_source);
    if (e->keys.password_source && e->auth_password == NULL) {
      e->auth_password = read_secret_source (
        e->keys.password_source == opt.auth_password_source ? "--auth-password " : "password=",
        "password", MAX_SECRET_LENGTH, e->keys.password_source);
      debug ("export \"%s\": read a password for user %s", e->name, e->keys.auth_user);
    }
    if (c && e->cookie == NULL) {
      if (c[0] == '-' || c[0] == '+')
        e->cookie = read_secret_source ("cookie=", "cookie", MAX_COOKIE_LENGTH, c);
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
      fatal ("%s", err);
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

/* ---- Listening sockets. ---- */

static void
add_listener (int fd)
{
  if (nlisteners >= sizeof listeners / sizeof listeners[0])
    fatal ("too many listening sockets");
  listeners[nlisteners++] = fd;
}

/* systemd socket activation: LISTEN_PID names us, LISTEN_FDS counts the
 * sockets from fd 3.  Taken before anything else opens a file. */
static void
take_activated_sockets (void)
{
  const char *pid_s = getenv ("LISTEN_PID"), *fds_s = getenv ("LISTEN_FDS");
  long pid, n, i;
  char *end;

  if (pid_s == NULL || fds_s == NULL)
    return;
  pid = strtol (pid_s, &end, 10);
  if (*end != '\0' || pid != (long) getpid ())
    return;
  n = strtol (fds_s, &end, 10);
  if (*end != '\0' || n < 1 || n > 16)
    fatal ("LISTEN_FDS=%s: expected 1 to 16 sockets", fds_s);
  for (i = 0; i < n; i++) {
    int fd = 3 + (int) i;
    if (fcntl (fd, F_SETFD, FD_CLOEXEC) == -1)
      fatal_errno ("socket activation: fd %d", fd);
    add_listener (fd);
  }
  unsetenv ("LISTEN_PID");
  unsetenv ("LISTEN_FDS");
  unsetenv ("LISTEN_FDNAMES");
  socket_activated = true;
}

/* A socket file nobody listens on is what a server leaves when it could
 * not remove it at exit (as --user, it may lack the right to write the
 * directory).  Replace only that: a socket that answers belongs to a
 * running server, and anything else is not ours to delete. */
static bool
remove_stale_socket (const struct sockaddr_un *sun)
{
  struct stat st;
  int probe, r;

  if (lstat (sun->sun_path, &st) == -1 || !S_ISSOCK (st.st_mode))
    return false;
  probe = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe == -1)
    return false;
  r = connect (probe, (const struct sockaddr *) sun, sizeof *sun);
  close (probe);
  if (r == 0 || errno != ECONNREFUSED)
    return false;
  return unlink (sun->sun_path) == 0;
}

static void
listen_unix (const char *path)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  int fd;

  if (strlen (path) >= sizeof sun.sun_path)
    fatal ("Unix socket path %s is too long (at most %zu bytes)", path,
           sizeof sun.sun_path - 1);
  strcpy (sun.sun_path, path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd == -1)
    fatal_errno ("socket");
  if (bind (fd, (struct sockaddr *) &sun, sizeof sun) == -1) {
    if (errno != EADDRINUSE)
      fatal_errno ("cannot listen on %s", path);
    if (!remove_stale_socket (&sun))
      fatal ("cannot listen on %s: it exists and is not a stale socket (a "
             "server answers on it, or it is not a socket): remove it or "
             "pick another path", path);
    notice ("removed the stale socket %s left by an earlier server", path);
    if (bind (fd, (struct sockaddr *) &sun, sizeof sun) == -1)
      fatal_errno ("cannot listen on %s", path);
  }
  if (listen (fd, SOMAXCONN) == -1)
    fatal_errno ("listen");
  unix_socket_path = strdup (path);
  add_listener (fd);
}

static void
listen_private_unix (void)
{
  const char *tmpdir = getenv ("TMPDIR");
  char *path;

  if (asprintf (&private_dir, "%s/nbdcurldXXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp") == -1)
    fatal_errno ("asprintf");
  if (mkdtemp (private_dir) == NULL)
    fatal_errno ("mkdtemp %s", private_dir);
  if (asprintf (&path, "%s/socket", private_dir) == -1)
    fatal_errno ("asprintf");
  listen_unix (path);
  free (path);
}

static void
listen_tcp (void)
{
  struct addrinfo hints = {
    .ai_family = opt.family, .ai_socktype = SOCK_STREAM,
    .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
  }, *ai, *res;
  const char *port = opt.port ? opt.port : "10809";
  int r;

  r = getaddrinfo (opt.ipaddr, port, &hints, &res);
  if (r != 0)
    fatal ("cannot listen on %s port %s: %s", opt.ipaddr ? opt.ipaddr : "*", port,
           gai_strerror (r));
  for (ai = res; ai; ai = ai->ai_next) {
    int one = 1;
    int fd = socket (ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd == -1) {
      if (errno == EAFNOSUPPORT)
        continue;                          /* e.g. no IPv6 on this host */
      fatal_errno ("socket");
    }
    setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    /* Accepted sockets inherit it: replies are sent whole (one writev per
     * batch), so Nagle's delay would only add latency. */
    setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (ai->ai_family == AF_INET6)
      setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind (fd, ai->ai_addr, ai->ai_addrlen) == -1) {
      if (errno == EADDRNOTAVAIL && opt.ipaddr == NULL) {
        close (fd);
        continue;
      }
      fatal_errno ("cannot listen on port %s%s", port,
                   errno == EADDRINUSE ? " (in use: pick another with -p)" : "");
    }
    if (listen (fd, SOMAXCONN) == -1)
      fatal_errno ("listen");
    add_listener (fd);
  }
  freeaddrinfo (res);
  if (nlisteners == 0)
    fatal ("no address to listen on for port %s", port);
}

/* ---- URIs for --print-uri and --run. ---- */

static char *
uri_escape (const char *s)
{
  static const char hex[] = "0123456789ABCDEF";
  char *out = malloc (3 * strlen (s) + 1), *p = out;
  if (out == NULL)
    fatal_errno ("malloc");
  for (; *s; s++) {
    unsigned char ch = (unsigned char) *s;
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
        (ch >= '0' && ch <= '9') || strchr ("-._~", ch))
      *p++ = (char) ch;
    else {
      *p++ = '%';
      *p++ = hex[ch >> 4];
      *p++ = hex[ch & 15];
    }
  }
  *p = '\0';
  return out;
}

static char *
server_uri (void)
{
  char *export = uri_escape (opt.exports[0].name), *uri = NULL;
  int r;

  if (unix_socket_path) {
    char *sock = uri_escape (unix_socket_path);
    r = asprintf (&uri, "nbd%s+unix:///%s?socket=%s", opt.tls == TLS_REQUIRE ? "s" : "",
                  export, sock);
    free (sock);
  }
  else {
    const char *host = opt.ipaddr ? opt.ipaddr : "localhost";
    bool v6 = strchr (host, ':') != NULL;
    r = asprintf (&uri, "nbd%s://%s%s%s:%s/%s", opt.tls == TLS_REQUIRE ? "s" : "",
                  v6 ? "[" : "", host, v6 ? "]" : "",
                  opt.port ? opt.port : "10809", export);
  }
  free (export);
  if (r == -1)
    fatal_errno ("asprintf");
  return uri;
}

/* ---- Children. ---- */

/* The environment a child gets: one fixed setting for GnuTLS, and
 * sanitizer settings, which a sanitizer build needs in every process and
 * which carry no secrets. */
static char **
child_environment (const char *role_arg)
{
  static const char *keep[] = { "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS" };
  static char *env[sizeof keep / sizeof keep[0] + 3];
  size_t i, n = 0;

  /* The fetcher launcher binds every symbol of its libraries at load,
   * once: left lazy, each fetcher it forks would look up the functions it
   * calls first itself, and write the answers into pages it shares with
   * the launcher, copying them (measured: about 3% of a fetcher's CPU).
   * An exec'd child binds lazily, which costs it less. */
  if (strcmp (role_arg, ROLE_ARG_LAUNCHER) == 0)
    env[n++] = (char *) "LD_BIND_NOW=1";

  /* GnuTLS initialises itself when it is loaded, at a cost of about
   * 120 KiB of heap in every fetcher.  Nothing there uses it: libcurl is
   * built with OpenSSL, and GnuTLS is loaded only as a dependency of
   * libraries for protocols nbdcurld refuses (librtmp, libldap), which
   * initialise it themselves when used. */
  env[n++] = (char *) "GNUTLS_NO_IMPLICIT_INIT=1";

  for (i = 0; i < sizeof keep / sizeof keep[0]; i++) {
    const char *v = getenv (keep[i]);
    /* In the forked child, single-threaded: malloc is safe here. */
    if (v && asprintf (&env[n], "%s=%s", keep[i], v) != -1)
      n++;
  }
  env[n] = NULL;
  return env;
}

/* The executable of a role: FRONTEND_EXE for the front-end and the key
 * holder, this program for the file remover, FETCHER_EXE for the others. */
static int
role_executable (const char *role_arg)
{
  if (strcmp (role_arg, ROLE_ARG_FRONTEND) == 0 || strcmp (role_arg, ROLE_ARG_KEYHOLDER) == 0)
    return frontend_exe_fd;
  if (strcmp (role_arg, ROLE_ARG_REMOVER) == 0)
    return supervisor_exe_fd;
  return fetcher_exe_fd;
}

/* fork+exec the role's executable (role_executable) as `role` with fds[i]
 * at fd 3 + i and nothing else open but stdin, stdout and stderr.  Returns
 * the pid. */
static pid_t
spawn_child (const char *role_arg, const int *fds, unsigned nfds)
{
  pid_t pid = fork ();

  if (pid == -1)
    return -1;
  if (pid == 0) {
    char *argv[] = { (char *) "nbdcurld", (char *) role_arg, NULL };
    sigset_t none;
    int exe;

    /* Move every fd out of the way first (this binary's too), above the
     * places they go to, so that no dup2 below can overwrite one that has
     * not been placed yet.  Just above, not at a fixed high number: under
     * a low RLIMIT_NOFILE that number may not exist. */
    const int above = 3 + (int) nfds;
    exe = fcntl (role_executable (role_arg), F_DUPFD_CLOEXEC, above);
    if (exe == -1 || child_place_fds (fds, nfds) == -1)
      _exit (127);
    if (close_range (3 + nfds, ~0U, CLOSE_RANGE_CLOEXEC) == -1)
      _exit (127);
    signal (SIGPIPE, SIG_DFL);
    /* The file remover keeps our mask (SIGTERM, SIGINT, SIGHUP blocked),
     * so that a terminal's signal to the process group cannot end it
     * before it has blocked them itself: it must outlive us. */
    if (strcmp (role_arg, ROLE_ARG_REMOVER) != 0) {
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
    }
    /* exe is close-on-exec and goes away with the exec. */
    fexecve (exe, argv, child_environment (role_arg));
    _exit (127);
  }
  return pid;
}

/* ---- The fetcher launcher (launcher.c; nbdcurld.h, LAUNCHER_*). ---- */

/* One launcher at a time.  It forks each fetcher as our child; until it
 * has said it is ready, and whenever it fails, fetchers are exec'd
 * (spawn_child), so a broken launcher costs speed, never a client. */
static pid_t launcher_pid = -1;
static int launcher_fd = -1;            /* our end of its socket */
static bool launcher_ready;             /* it sent IPC_LAUNCHER_READY */
static unsigned launcher_forked;        /* fetchers of this generation */
static unsigned launcher_failures;      /* ends nobody asked for, in a row */
static uint64_t launcher_restart_ms;    /* a new one is due then; 0: none */

static bool
launcher_wanted (void)
{
  return !opt.exec_fetchers && !opt.single && !stopping &&
         launcher_failures < LAUNCHER_MAX_FAILURES;
}

static int
send_launcher_config (int fd, const void *arg)
{
  (void) arg;
  return config_send_launcher (fd, (opt.verbose ? LAUNCHER_VERBOSE : 0) |
                                   (opt.sandbox_debug ? LAUNCHER_SANDBOX_DEBUG : 0));
}

static pid_t start_child (const char *role_arg, int peer_fd, const int *extra,
                          unsigned nextra, int (*send_config) (int fd, const void *arg),
                          const void *arg);

static void
launcher_start (void)
{
  int sv[2];

  launcher_restart_ms = 0;
  if (!launcher_wanted () || launcher_pid > 0)
    return;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
    warn_errno ("socketpair for the fetcher launcher (fetchers are started "
                "without it meanwhile)");
    launcher_restart_ms = monotonic_ms () + LAUNCHER_RESTART_DELAY_MS;
    return;
  }
  launcher_pid = start_child (ROLE_ARG_LAUNCHER, sv[1], NULL, 0, send_launcher_config, NULL);
  close (sv[1]);
  if (launcher_pid == -1) {
    warn_errno ("starting the fetcher launcher (fetchers are started without "
                "it meanwhile)");
    close (sv[0]);
    launcher_restart_ms = monotonic_ms () + LAUNCHER_RESTART_DELAY_MS;
    return;
  }
  launcher_fd = sv[0];
  launcher_ready = false;
  launcher_forked = 0;
  debug ("started the fetcher launcher, process %d", (int) launcher_pid);
}

/* Let the launcher go and reap it.  It holds nothing (no configuration,
 * no secret, no client), so SIGKILL is its whole end; the fetchers it
 * forked are our children and serve on. */
static void
launcher_retire (const char *why)
{
  pid_t pid = launcher_pid;

  if (pid <= 0)
    return;
  debug ("retiring the fetcher launcher, process %d: %s", (int) pid, why);
  close (launcher_fd);
  launcher_fd = -1;
  launcher_pid = -1;
  launcher_ready = false;
  kill (pid, SIGKILL);
  while (waitpid (pid, NULL, 0) == -1 && errno == EINTR)
    ;
}

/* After a launcher failed: a new one after a pause, or after
 * LAUNCHER_MAX_FAILURES in a row, none. */
static void
launcher_failed (void)
{
  launcher_failures++;
  if (launcher_wanted ())
    launcher_restart_ms = monotonic_ms () + LAUNCHER_RESTART_DELAY_MS;
  else if (!stopping && !opt.exec_fetchers)
    warn ("the fetcher launcher failed %u times in a row: every fetcher is "
          "executed anew from now on, as with --exec-fetchers", launcher_failures);
}

/* The launcher misbehaved: a new one. */
static void
launcher_broken (const char *why)
{
  warn ("the fetcher launcher (process %d) %s: replacing it; fetchers are "
        "started without it meanwhile", (int) launcher_pid, why);
  launcher_retire (why);
  launcher_failed ();
}

/* The launcher ended without being asked to (reaped already). */
static void
launcher_ended (int status)
{
  pid_t pid = launcher_pid;

  close (launcher_fd);
  launcher_fd = -1;
  launcher_pid = -1;
  launcher_ready = false;
  if (stopping)
    return;
  if (WIFSIGNALED (status))
    warn ("the fetcher launcher (process %d) was killed by signal %d (%s): "
          "fetchers are started without it until a new one is ready",
          (int) pid, WTERMSIG (status), strsignal (WTERMSIG (status)));
  else
    warn ("the fetcher launcher (process %d) exited with status %d: fetchers "
          "are started without it until a new one is ready", (int) pid,
          WEXITSTATUS (status));
  launcher_failed ();
}

/* A message the launcher sent unasked: only IPC_LAUNCHER_READY, once. */
static void
launcher_dispatch (void)
{
  struct ipc_header h;
  int fds[IPC_MAX_FDS];
  unsigned nfds, i;

  if (ipc_recv_packet (launcher_fd, &h, fds, &nfds) == -1) {
    int status, e = errno;
    if (e == EAGAIN || e == EINTR)
      return;
    /* End of file mostly means it died, which SIGCHLD tells too: say
     * how it ended rather than that its socket closed. */
    if (e == 0) {
      int tries;
      for (tries = 0; tries < 100; tries++) {
        if (waitpid (launcher_pid, &status, WNOHANG) == launcher_pid) {
          launcher_ended (status);
          return;
        }
        usleep (1000);
      }
    }
    launcher_broken (e == 0 ? "closed its socket" : "sent a malformed message");
    return;
  }
  for (i = 0; i < nfds; i++)
    close (fds[i]);
  if (h.type != IPC_LAUNCHER_READY || launcher_ready || nfds != 0 || h.flags != 0 ||
      h.id != 0 || h.offset != 0 || h.length != 0 || h.error != 0 || h.area_offset != 0) {
    launcher_broken ("sent an unexpected message");
    return;
  }
  launcher_ready = true;
  debug ("the fetcher launcher is ready");
}

/* Have the launcher fork a fetcher on fds[0 .. nfds) (its fds 3, 4, ...).
 * Returns the new fetcher's pid, checked to be our child, or -1 when
 * there is no launcher, it is not ready within LAUNCHER_START_WAIT_MS,
 * or it failed (the caller execs one). */
static pid_t
launcher_fork_fetcher (const int *fds, unsigned nfds)
{
  const struct ipc_header req = { .type = IPC_LAUNCH_FETCHER, .length = nfds };
  uint64_t deadline_ready = monotonic_ms () + LAUNCHER_START_WAIT_MS, deadline;
  struct ipc_header h;
  int got[IPC_MAX_FDS];
  unsigned ngot, i;
  siginfo_t si;
  pid_t pid;

  /* A launcher still starting is waited for: its start is the very work
   * an exec would repeat, so the wait costs less, in CPU and in memory,
   * than executing this fetcher beside it. */
  while (!launcher_ready && launcher_pid > 0) {
    struct pollfd pfd = { .fd = launcher_fd, .events = POLLIN };
    uint64_t now = monotonic_ms ();
    int r;

    if (now >= deadline_ready)
      return -1;
    r = poll (&pfd, 1, (int) (deadline_ready - now));
    if (r == -1 && errno != EINTR)
      return -1;
    if (r > 0)
      launcher_dispatch ();
  }
  if (!launcher_ready)
    return -1;
  if (ipc_send_packet (launcher_fd, &req, fds, nfds) == -1) {
    launcher_broken ("cannot be written to");
    return -1;
  }
  deadline = monotonic_ms () + LAUNCHER_REPLY_TIMEOUT_MS;
  for (;;) {
    struct pollfd pfd = { .fd = launcher_fd, .events = POLLIN };
    uint64_t now = monotonic_ms ();
    int r;

    if (now >= deadline) {
      launcher_broken ("did not answer in time");
      return -1;
    }
    r = poll (&pfd, 1, (int) (deadline - now));
    if (r == -1 && errno != EINTR) {
      launcher_broken ("cannot be waited for");
      return -1;
    }
    if (r <= 0)
      continue;
    if (ipc_recv_packet (launcher_fd, &h, got, &ngot) == 0)
      break;
    if (errno == EAGAIN || errno == EINTR)
      continue;
    launcher_broken (errno == 0 ? "closed its socket" : "sent a malformed answer");
    return -1;
  }
  for (i = 0; i < ngot; i++)
    close (got[i]);
  if (h.type != IPC_FETCHER_LAUNCHED || ngot != 0 || h.flags != 0 || h.offset != 0 ||
      h.length != 0 || h.area_offset != 0 ||
      (h.error == 0) == (h.id == 0) || h.id > (uint64_t) INT_MAX) {
    launcher_broken ("sent an unexpected answer");
    return -1;
  }
  if (h.error != 0) {
    /* It said why (a full process table, say); an exec may still work. */
    errno = (int) h.error;
    return -1;
  }
  pid = (pid_t) h.id;
  /* Only our own child may be counted as a fetcher: waitid answers for
   * our children alone (a zombie included), and leaves it to be reaped. */
  memset (&si, 0, sizeof si);
  if (waitid (P_PID, (id_t) pid, &si, WEXITED | WNOHANG | WNOWAIT) == -1) {
    launcher_broken ("named a process that is not ours");
    return -1;
  }
  launcher_failures = 0;
  if (++launcher_forked >= LAUNCHER_GENERATION_FETCHERS) {
    /* A new layout for the next ones (nbdcurld.h). */
    launcher_retire ("it has started its share of fetchers");
    launcher_start ();
  }
  return pid;
}

/* A fetcher died of a signal that a crash or a refused system call
 * sends: whoever caused it may be probing the address-space layout that
 * the launcher's fetchers share, so the next fetchers get a new one. */
static void
launcher_fetcher_crashed (int sig)
{
  if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE &&
      sig != SIGABRT && sig != SIGSYS && sig != SIGTRAP)
    return;
  if (launcher_pid > 0) {
    launcher_retire ("a fetcher crashed");
    launcher_start ();
  }
}

/* Make a config pipe, spawn the child with its peer socket and the pipe,
 * then write its configuration.  Returns the pid or -1. */
static pid_t
start_child (const char *role_arg, int peer_fd, const int *extra, unsigned nextra,
             int (*send_config) (int fd, const void *arg), const void *arg)
{
  int pipefd[2], fds[2 + 64];
  unsigned i;
  pid_t pid;

  if (pipe2 (pipefd, O_CLOEXEC) == -1)
    return -1;
  fds[0] = peer_fd;
  fds[1] = pipefd[0];
  for (i = 0; i < nextra; i++)
    fds[2 + i] = extra[i];
  pid = -1;
  if (strcmp (role_arg, ROLE_ARG_FETCHER) == 0)
    pid = launcher_fork_fetcher (fds, 2 + nextra);
  if (pid == -1)
    pid = spawn_child (role_arg, fds, 2 + nextra);
  close (pipefd[0]);
  if (pid == -1) {
    close (pipefd[1]);
    return -1;
  }
  if (send_config (pipefd[1], arg) == -1)
    warn_errno ("sending the configuration to a child");
  close (pipefd[1]);
  return pid;
}

/* ---- The URL checker (url-check.c). ---- */

enum url_answer { URL_ACCEPTED, URL_REFUSED, URL_NO_ANSWER, URL_MALFORMED };

/* Read the checker's answer for export e through the bounded reader:
 * the checker is a child like any other, and its answer is checked like
 * any other child's message.  For a refused URL, message says why. */
static enum url_answer
take_url_answer (int sock, struct export_spec *e, char message[MAX_URL_MESSAGE + 1])
{
  struct url_checked_wire w;
  struct ipc_header h;
  struct reader r;
  uint8_t *payload;
  bool ok;

  if (ipc_recv (sock, &h, &payload, sizeof w + MAX_URL_MESSAGE + 2 * MAX_LOG_URL_LENGTH +
                MAX_PATH_LENGTH) == -1)
    return errno == 0 ? URL_NO_ANSWER : URL_MALFORMED;   /* EOF; too long or cut short */
  reader_init (&r, payload, h.payload_len);
  if (h.type != IPC_URL_CHECKED || reader_get_bytes (&r, &w, sizeof w) == -1 ||
      (w.flags & ~(URL_CHECKED_OK | URL_CHECKED_HAS_PASSWORD)) != 0 ||
      w.script_url_len > MAX_LOG_URL_LENGTH || (!(w.flags & URL_CHECKED_OK) && w.script_url_len) ||
      w.log_url_len < 1 || w.log_url_len > MAX_LOG_URL_LENGTH ||
      w.message_len > MAX_URL_MESSAGE || w.file_path_len > MAX_PATH_LENGTH)
    goto malformed;
  ok = (w.flags & URL_CHECKED_OK) != 0;
  if (ok ? (w.kind > URL_FILE || w.message_len != 0 ||
            (w.kind == URL_FILE) != (w.file_path_len > 0))
         : (w.message_len < 1 || w.file_path_len != 0))
    goto malformed;
  e->log_url = malloc ((size_t) w.log_url_len + 1);
  e->file_path = w.file_path_len > 0 ? malloc ((size_t) w.file_path_len + 1) : NULL;
  e->script_url = w.script_url_len > 0 ? malloc ((size_t) w.script_url_len + 1) : NULL;
  if (e->log_url == NULL || (w.file_path_len > 0 && e->file_path == NULL) ||
      (w.script_url_len > 0 && e->script_url == NULL))
    fatal_errno ("malloc");
  if (reader_get_string (&r, message, w.message_len, MAX_URL_MESSAGE) == -1 ||
      reader_get_string (&r, e->log_url, w.log_url_len, MAX_LOG_URL_LENGTH) == -1 ||
      (e->file_path != NULL &&
       (reader_get_string (&r, e->file_path, w.file_path_len, MAX_PATH_LENGTH) == -1 ||
        e->file_path[0] != '/')) ||
      (e->script_url != NULL &&
       reader_get_string (&r, e->script_url, w.script_url_len, MAX_LOG_URL_LENGTH) == -1) ||
      reader_end (&r) == -1)
    goto malformed;
  free (payload);
  e->kind = (enum url_kind) w.kind;
  e->has_password = (w.flags & URL_CHECKED_HAS_PASSWORD) != 0;
  return ok ? URL_ACCEPTED : URL_REFUSED;
 malformed:
  free (payload);
  return URL_MALFORMED;
}

/* ---- Proxies (proxy=, --proxy-from-env). ---- */

/* The first of the environment variables names that is set and not
 * empty, or NULL. */
static const char *
first_env (const char *const *names)
{
  for (; *names; names++) {
    const char *v = getenv (*names);
    if (v && v[0] != '\0')
      return v;
  }
  return NULL;
}

/* e's proxy: proxy=, or with --proxy-from-env the variable libcurl would
 * read for the URL's scheme (http_proxy only in lower case: a CGI
 * program's HTTP_PROXY can come from a request header), then all_proxy;
 * and no_proxy.  Chosen once here, so that the fetcher, its sandbox and
 * the log agree on one proxy (libcurl in the fetcher never reads the
 * environment: child_environment has none of these).  A URL without a
 * scheme is an http:// proxy, as libcurl reads it. */
static void
choose_proxy (struct export_spec *e)
{
  static const char *const http_names[] = { "http_proxy", "all_proxy", "ALL_PROXY", NULL };
  static const char *const https_names[] = { "https_proxy", "HTTPS_PROXY", "all_proxy",
                                             "ALL_PROXY", NULL };
  static const char *const ftp_names[] = { "ftp_proxy", "FTP_PROXY", "all_proxy",
                                           "ALL_PROXY", NULL };
  static const char *const no_names[] = { "no_proxy", "NO_PROXY", NULL };
  const char *p = e->keys.proxy;

  if (p == NULL && opt.proxy_from_env && e->kind != URL_FILE) {
    p = first_env (e->kind == URL_HTTP ? http_names :
                   e->kind == URL_HTTPS ? https_names : ftp_names);
    if (p != NULL) {
      const char *no = first_env (no_names);
      if (no != NULL && strlen (no) > MAX_NOPROXY_LENGTH)
        fatal ("no_proxy is longer than %u bytes", MAX_NOPROXY_LENGTH);
      if (no != NULL && (e->noproxy = strdup (no)) == NULL)
        fatal_errno ("strdup");
    }
  }
  if (p == NULL)
    return;
  if (asprintf (&e->proxy, "%s%s", strstr (p, "://") ? "" : "http://", p) == -1)
    fatal_errno ("asprintf");
  if (strlen (e->proxy) > MAX_URL_LENGTH)
    fatal ("export \"%s\": the proxy's URL is longer than %u bytes", e->name,
           MAX_URL_LENGTH);
}

/* What export e needs of libcurl, for the URL checker (URL_CHECK_*). */
static uint16_t
url_check_needs (const struct export_spec *e)
{
  uint16_t needs = 0;

  switch (e->keys.http_version) {
  case FETCHER_HTTP_2_0: case FETCHER_HTTP_2TLS: case FETCHER_HTTP_2_PRIOR_KNOWLEDGE:
    needs |= URL_CHECK_NEEDS_HTTP2;
    break;
  case FETCHER_HTTP_3: case FETCHER_HTTP_3ONLY:
    needs |= URL_CHECK_NEEDS_HTTP3;
    break;
  }
  if (e->keys.unix_socket_path)
    needs |= URL_CHECK_NEEDS_UNIX;
  return needs;
}

/* Have e's proxy checked like its URL (url_parse_proxy in the checker). */
static enum url_answer
check_proxy (int config_fd, int sock, struct export_spec *e,
             char message[MAX_URL_MESSAGE + 1])
{
  struct export_spec answered = { .fd = -1 };
  struct ipc_header u = { .type = IPC_CONFIG_URL, .flags = URL_CHECK_PROXY,
                          .payload_len = (uint32_t) strlen (e->proxy) };
  enum url_answer a;

  if (ipc_send (config_fd, &u, e->proxy) == -1)
    return URL_NO_ANSWER;
  a = take_url_answer (sock, &answered, message);
  e->proxy_log_url = answered.log_url;
  free (answered.file_path);
  if (a == URL_ACCEPTED && answered.kind != URL_HTTP && answered.kind != URL_HTTPS)
    return URL_MALFORMED;
  /* A password on the command line is visible to every local user; from
   * the environment (--proxy-from-env) it is not, and libcurl takes it. */
  if (a == URL_ACCEPTED && answered.has_password && e->keys.proxy) {
    snprintf (message, MAX_URL_MESSAGE + 1, "the proxy URL holds a password, which "
              "every local user can read on the command line: give proxy-user= and "
              "proxy-password=");
    return URL_REFUSED;
  }
  return a;
}

/* Have every export's URL read by libcurl's URL API in the checker,
 * one at a time, before anything else depends on what a URL means. */
static void
check_urls (void)
{
  struct ipc_header h = { .type = IPC_CONFIG_URL_CHECK };
  char message[MAX_URL_MESSAGE + 1];
  int sock[2], pipefd[2], fds[2], status;
  enum url_answer answer = URL_ACCEPTED;
  struct export_spec *e = NULL;
  unsigned i;
  pid_t pid;

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock) == -1 ||
      pipe2 (pipefd, O_CLOEXEC) == -1)
    fatal_errno ("cannot make the URL checker's sockets");
  fds[0] = sock[1];                 /* CHILD_FD_PEER: its answers */
  fds[1] = pipefd[0];               /* CHILD_FD_CONFIG: the URLs */
  pid = spawn_child (ROLE_ARG_URL_CHECK, fds, 2);
  if (pid == -1)
    fatal_errno ("cannot start the URL checker");
  close (sock[1]);
  close (pipefd[0]);

  h.flags = (uint16_t) ((opt.verbose ? FETCHER_VERBOSE : 0) |
                        (opt.sandbox_debug ? FETCHER_SANDBOX_DEBUG : 0));
  if (change_user) {
    h.length = 1;
    h.id = child_uid;
    h.offset = child_gid;
  }
  if (ipc_send (pipefd[1], &h, NULL) == -1)
    fatal_errno ("cannot talk to the URL checker");
  for (i = 0; i < opt.nexports && answer == URL_ACCEPTED; i++) {
    struct ipc_header u;
    e = &opt.exports[i];
    /* options.c bounds every URL by MAX_URL_LENGTH; an empty one is
     * refused there too. */
    u = (struct ipc_header) { .type = IPC_CONFIG_URL, .flags = url_check_needs (e),
                              .payload_len = (uint32_t) strlen (e->url) };
    answer = ipc_send (pipefd[1], &u, e->url) == -1 ? URL_NO_ANSWER
                                                    : take_url_answer (sock[0], e, message);
    if (answer == URL_ACCEPTED)
      choose_proxy (e);
    if (answer == URL_ACCEPTED && e->proxy) {
      answer = check_proxy (pipefd[1], sock[0], e, message);
      if (answer == URL_REFUSED) {
        /* The message is the proxy's, not the URL's. */
        char *m = strdup (message);
        if (m == NULL)
          fatal_errno ("strdup");
        snprintf (message, MAX_URL_MESSAGE + 1, "proxy %s: %s",
                  e->proxy_log_url ? e->proxy_log_url : "(from the environment)", m);
        free (m);
      }
    }
  }
  /* After a refused URL, EOF instead of IPC_CONFIG_END: the checker
   * ends either way; after a malformed answer it is stopped.  It is
   * waited for before any error below, so none outlives nbdcurld. */
  h = (struct ipc_header) { .type = IPC_CONFIG_END };
  if (answer == URL_ACCEPTED && ipc_send (pipefd[1], &h, NULL) == -1)
    answer = URL_NO_ANSWER;
  if (answer == URL_MALFORMED)
    kill (pid, SIGKILL);
  close (pipefd[1]);
  close (sock[0]);
  while (waitpid (pid, &status, 0) == -1)
    if (errno != EINTR)
      fatal_errno ("waitpid");
  if (answer == URL_REFUSED)
    fatal ("export \"%s\": %s: %s", e->name, e->log_url, message);
  if (answer == URL_MALFORMED)
    fatal ("the URL checker sent a malformed answer for export \"%s\"", e->name);
  if (answer == URL_NO_ANSWER)
    fatal ("the URL checker (%s) ended without answering: see the messages "
           "above", FETCHER_EXE);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    fatal ("the URL checker failed (%s %d): see the messages above",
           WIFEXITED (status) ? "exit status" : "signal",
           WIFEXITED (status) ? WEXITSTATUS (status) : WTERMSIG (status));
}

static int
send_frontend_config (int fd, const void *arg)
{
  return config_send_frontend (fd, arg);
}

static int
send_fetcher_config (int fd, const void *arg)
{
  return config_send_fetcher (fd, arg);
}

/* ---- NBD over TLS. ---- */

/* Read a public PEM file of --tls-certificates DIR into *text.  Returns 0,
 * or -1 when an optional file is not there. */
static int
read_tls_file (const char *name, bool required, char **text, uint32_t *len)
{
  char path[MAX_PATH_LENGTH + 1];
  uint8_t *buf;
  ssize_t n;
  size_t got = 0;
  int fd;

  snprintf (path, sizeof path, "%s/%s", opt.tls_certificates, name);
  fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd == -1) {
    if (errno == ENOENT && !required) {
      *text = (char *) "";
      *len = 0;
      return -1;
    }
    fatal_errno ("--tls-certificates: cannot open %s", path);
  }
  buf = malloc (MAX_TLS_FILE_SIZE + 1);
  if (buf == NULL)
    fatal_errno ("malloc");
  while ((n = read (fd, buf + got, MAX_TLS_FILE_SIZE + 1 - got)) > 0)
    got += (size_t) n;
  if (n == -1)
    fatal_errno ("--tls-certificates: reading %s", path);
  close (fd);
  if (got > MAX_TLS_FILE_SIZE)
    fatal ("--tls-certificates: %s is larger than %u bytes: put only the "
           "certificates needed there", path, MAX_TLS_FILE_SIZE);
  if (got == 0 || memchr (buf, '\0', got) != NULL)
    fatal ("--tls-certificates: %s is empty or not PEM text", path);
  buf[got] = '\0';
  *text = (char *) buf;
  *len = (uint32_t) got;
  return 0;
}

/* Before our sandbox: read the certificates, open the key and the PSK
 * file for the key holder. */
static void
prepare_tls (void)
{
  tls = (struct tls_settings) {
    .mode = opt.tls, .priority = (char *) (opt.tls_priority ? opt.tls_priority : ""),
    .cert = (char *) "", .ca = (char *) "", .crl = (char *) "",
  };
  if (opt.tls == TLS_OFF)
    return;
  if (opt.tls_certificates) {
    char path[MAX_PATH_LENGTH + 1];
    tls.flags |= TLS_CERTIFICATES;
    read_tls_file ("server-cert.pem", true, &tls.cert, &tls.cert_len);
    read_tls_file ("ca-cert.pem", opt.tls_verify_peer, &tls.ca, &tls.ca_len);
    if (opt.tls_verify_peer) {
      tls.flags |= TLS_VERIFY_PEER;
      read_tls_file ("ca-crl.pem", false, &tls.crl, &tls.crl_len);
    }
    snprintf (path, sizeof path, "%s/server-key.pem", opt.tls_certificates);
    tls_key_fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (tls_key_fd == -1)
      fatal_errno ("--tls-certificates: cannot open %s", path);
  }
  if (opt.tls_psk) {
    tls.flags |= TLS_PSK;
    tls_psk_fd = open (opt.tls_psk, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (tls_psk_fd == -1)
      fatal_errno ("--tls-psk: cannot open %s", opt.tls_psk);
  }
}

static int
send_keyholder_config (int fd, const void *arg)
{
  return config_send_keyholder (fd, arg);
}

/* The key holder: the only process that reads the private key and the
 * PSK file.  Returns the front-end's end of its socket. */
static int
start_keyholder (void)
{
  struct keyholder_config kc = {
    .flags = (tls_key_fd >= 0 ? KEYHOLDER_KEY : 0) | (tls_psk_fd >= 0 ? KEYHOLDER_PSK : 0) |
             (opt.verbose ? KEYHOLDER_VERBOSE : 0) |
             (opt.sandbox_debug ? KEYHOLDER_SANDBOX_DEBUG : 0),
    .cert = tls.cert, .cert_len = tls.cert_len,
  };
  int sv[2], extra[2], null;

  null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null == -1)
    fatal_errno ("/dev/null");
  /* Both places filled: a file the key holder does not use is /dev/null. */
  extra[0] = tls_key_fd >= 0 ? tls_key_fd : null;     /* KEYHOLDER_FD_KEY */
  extra[1] = tls_psk_fd >= 0 ? tls_psk_fd : null;     /* KEYHOLDER_FD_PSK */
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
    fatal_errno ("socketpair");
  keyholder_pid = start_child (ROLE_ARG_KEYHOLDER, sv[1], extra, 2,
                               send_keyholder_config, &kc);
  if (keyholder_pid == -1)
    fatal_errno ("starting the key holder");
  close (sv[1]);
  close (null);
  /* Ours were only for passing on. */
  if (tls_key_fd >= 0)
    close (tls_key_fd);
  if (tls_psk_fd >= 0)
    close (tls_psk_fd);
  tls_key_fd = tls_psk_fd = -1;
  return sv[0];
}

/* --allow rules as the front-end gets them: one per export it names. */
static struct access_rule *
expand_access_rules (uint32_t *n)
{
  struct access_rule *out = calloc ((size_t) MAX_ACCESS_RULES, sizeof *out);
  unsigned i, j;

  if (out == NULL)
    fatal_errno ("calloc");
  *n = 0;
  for (i = 0; i < opt.nrules; i++) {
    const struct access_spec *a = &opt.rules[i];
    for (j = 0; j < opt.nexports; j++) {
      if (a->export != ALL_EXPORTS && a->export != j)
        continue;
      if (*n >= MAX_ACCESS_RULES)
        fatal ("--allow: %u rules over all exports is the most (rules given "
               "before the first --export count once per export)", MAX_ACCESS_RULES);
      out[*n] = (struct access_rule) {
        .export_index = j, .kind = a->kind, .prefix = a->prefix,
        .name = (char *) a->name,
      };
      memcpy (out[*n].addr, a->addr, sizeof out[*n].addr);
      (*n)++;
    }
  }
  return out;
}

static void
start_frontend (void)
{
  struct frontend_config fc = {
    .flags = (opt.single ? FRONTEND_SINGLE : 0) | (multi_conn ? FRONTEND_MULTI_CONN : 0) |
             (opt.verbose ? FRONTEND_VERBOSE : 0) |
             (opt.sandbox_debug ? FRONTEND_SANDBOX_DEBUG : 0),
    .handshake_timeout = opt.handshake_timeout,
    .client_memory = opt.client_memory,
    .max_clients = opt.max_clients,
    .nexports = opt.nexports,
    .nlisteners = opt.single ? 0 : nlisteners,
  };
  struct export_info exports[MAX_EXPORTS];
  int sv[2], fe_fds[64 + 1];
  unsigned i, nfe_fds = 0;

  for (i = 0; i < opt.nexports; i++) {
    exports[i].name = opt.exports[i].name;
    exports[i].description = opt.exports[i].description;
    exports[i].readonly = opt.exports[i].readonly;
  }
  fc.exports = exports;
  fc.tls = tls;
  fc.rules = expand_access_rules (&fc.nrules);

  /* Its listeners (or the -s client), then the key holder's socket. */
  if (opt.single) {
    fe_fds[nfe_fds++] = STDIN_FILENO;
    fe_fds[nfe_fds++] = STDOUT_FILENO;
  }
  else
    for (i = 0; i < nlisteners; i++)
      fe_fds[nfe_fds++] = listeners[i];
  if (opt.tls != TLS_OFF)
    fe_fds[nfe_fds++] = start_keyholder ();

  fetcher_pids = calloc (MAX_FETCHERS, sizeof *fetcher_pids);
  if (fetcher_pids == NULL)
    fatal_errno ("calloc");
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
    fatal_errno ("socketpair");
  frontend_pid = start_child (ROLE_ARG_FRONTEND, sv[1], fe_fds, nfe_fds,
                              send_frontend_config, &fc);
  if (frontend_pid == -1)
    fatal_errno ("starting the front-end");
  close (sv[1]);
  if (opt.tls != TLS_OFF)
    close (fe_fds[nfe_fds - 1]);
  free (fc.rules);
  control_fd = sv[0];

  /* The front-end owns the client side now: our copies only keep sockets
   * alive after it is gone. */
  for (i = 0; i < nlisteners; i++)
    close (listeners[i]);
  if (opt.single) {
    struct stat st;
    int null;

    /* splice(2) writes to sockets and pipes only: a client on another
     * kind of standard output gets its reads through the data area. */
    data_pipe_usable = fstat (STDOUT_FILENO, &st) == 0 &&
      (S_ISSOCK (st.st_mode) || S_ISFIFO (st.st_mode));
    null = open ("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      dup2 (null, STDIN_FILENO);
      dup2 (null, STDOUT_FILENO);
      close (null);
    }
  }
}

static void
remove_fetcher (pid_t pid)
{
  unsigned i;
  for (i = 0; i < nfetchers; i++)
    if (fetcher_pids[i] == pid) {
      fetcher_pids[i] = fetcher_pids[--nfetchers];
      return;
    }
}

/* A fetcher's data area (nbdcurld.h): a memfd of DATA_AREA_SIZE, sealed
 * so that neither the fetcher nor the front-end can resize it (a shrunk
 * mapping would kill the other side with SIGBUS) or lift the seals. */
static int
make_data_area (void)
{
  int fd = memfd_create ("nbdcurld-data-area", MFD_CLOEXEC | MFD_ALLOW_SEALING);

  if (fd == -1)
    return -1;
  if (ftruncate (fd, DATA_AREA_SIZE) == -1 ||
      fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == -1) {
    int e = errno;
    close (fd);
    errno = e;
    return -1;
  }
  return fd;
}

/* A fetcher's data pipe (nbdcurld.h), with as much capacity as the
 * kernel gives up to DATA_PIPE_SIZE: a refusal (fs.pipe-max-size, or a user
 * over fs.pipe-user-pages-soft) leaves the default, and the fetcher then
 * sends fewer reads through it. */
static int
make_data_pipe (int fds[2])
{
  if (pipe2 (fds, O_CLOEXEC) == -1)
    return -1;
  (void) fcntl (fds[1], F_SETPIPE_SZ, (int) DATA_PIPE_SIZE);
  return 0;
}

/* What a fetcher of export e is told (config.c). */
static void
fetcher_config_of (const struct export_spec *e, struct fetcher_config *fc)
{
  *fc = (struct fetcher_config) {
    .flags = (e->readonly ? FETCHER_READONLY : 0) | (opt.verbose ? FETCHER_VERBOSE : 0) |
             e->keys.protocols |
             (opt.allow_local_redirects ? FETCHER_ALLOW_LOCAL_REDIRECTS : 0) |
             (opt.curl_verbose ? FETCHER_CURL_VERBOSE : 0) |
             (opt.sandbox_debug ? FETCHER_SANDBOX_DEBUG : 0) |
             (e->cookie_lines ? FETCHER_COOKIE_ENGINE : 0) |
             (data_pipe_usable ? FETCHER_DATA_PIPE : 0),
    .connections = e->keys.connections,
    .connect_timeout = opt.connect_timeout,
    .timeout = e->keys.timeout,
    .stall_timeout = opt.stall_timeout,
    .url = e->url,
    .ca_bundle_len = e->ca_bundle_len,
    .export_name = e->name,
    .auth_password = e->auth_password ? e->auth_password : (char *) "",
    .cookie = e->cookie ? e->cookie : (char *) "",
    .ip_version = (uint32_t) e->keys.ip_version,
    .tls_min = e->keys.tls_min,
    .proxy = e->proxy ? e->proxy : (char *) "",
    .proxy_password = e->proxy_password ? e->proxy_password : (char *) "",
    .noproxy = e->noproxy ? e->noproxy : (char *) "",
    .http_version = (uint32_t) e->keys.http_version,
    .retries = (uint32_t) e->keys.retries,
    .retry_delay_ms = (uint32_t) e->keys.retry_delay_ms,
    .cookie_file = e->cookie_lines ? e->cookie_lines : (char *) "",
    /* Readahead: the client's memory budget bounds the prefetch store
     * as it bounds the data area. */
    .readahead = opt.client_memory < READAHEAD_MAX_BYTES
                 ? opt.client_memory : READAHEAD_MAX_BYTES,
  };
  memcpy (fc->allow_ports, opt.allow_ports, sizeof fc->allow_ports);
  fetch_settings_to_fetcher (&e->keys, fc);
}

/* Start a fetcher of export idx, counted among the fetchers (reaped like
 * any other).  Returns its pid and our ends: its socket, its data area
 * and the data pipe's read end (fds[0..2]); or -1 with errno, after
 * logging why. */
static pid_t
launch_fetcher (unsigned idx, int fds[3])
{
  const struct export_spec *e = &opt.exports[idx];
  struct fetcher_config fc;
  int sv[2], area, extra[4], pipe_fds[2], script_sv[2] = { -1, -1 }, err;
  unsigned nextra = 0;
  pid_t pid;

  if (nfetchers >= MAX_FETCHERS) {
    warn ("%u fetchers are running already: refusing another", nfetchers);
    errno = EAGAIN;
    return -1;
  }
  fetcher_config_of (e, &fc);
  fc.flags |= scripts_fetcher_flags (idx);
  area = make_data_area ();
  if (area == -1) {
    err = errno;
    warn_errno ("making the data area for a fetcher");
    goto fail;
  }
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
    err = errno;
    warn_errno ("socketpair for a fetcher");
    close (area);
    goto fail;
  }
  if (make_data_pipe (pipe_fds) == -1) {
    err = errno;
    warn_errno ("making the data pipe for a fetcher");
    close (sv[0]);
    close (sv[1]);
    close (area);
    goto fail;
  }
  /* header-script=, cookie-script=: the fetcher's script channel
   * (scripts.c), open while it lives. */
  if (scripts_configured (idx) &&
      socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, script_sv) == -1) {
    err = errno;
    warn_errno ("socketpair for a fetcher's scripts");
    close (sv[0]);
    close (sv[1]);
    close (area);
    close (pipe_fds[0]);
    close (pipe_fds[1]);
    goto fail;
  }
  extra[nextra++] = area;              /* CHILD_FD_DATA_AREA */
  extra[nextra++] = pipe_fds[1];       /* CHILD_FD_DATA_PIPE */
  if (e->fd >= 0)
    extra[nextra++] = e->fd;           /* CHILD_FD_EXPORT */
  else if (script_sv[1] >= 0)
    extra[nextra++] = script_sv[1];    /* CHILD_FD_SCRIPTS */
  if (e->ca_bundle_len > 0)
    extra[nextra++] = e->ca_bundle_fd; /* CHILD_FD_CA_BUNDLE, after the scripts' */
  pid = start_child (ROLE_ARG_FETCHER, sv[1], extra, nextra, send_fetcher_config, &fc);
  close (sv[1]);
  close (pipe_fds[1]);
  if (script_sv[1] >= 0)
    close (script_sv[1]);
  if (pid == -1) {
    err = errno;
    warn_errno ("starting a fetcher");
    close (sv[0]);
    close (area);
    close (pipe_fds[0]);
    if (script_sv[0] >= 0)
      close (script_sv[0]);
    goto fail;
  }
  fetcher_pids[nfetchers++] = pid;
  /* It waits for the values before it opens anything. */
  if (script_sv[0] >= 0 && scripts_new_fetcher (idx, pid, script_sv[0]) == -1)
    warn_errno ("fetcher %d: cannot follow its scripts", (int) pid);
  debug ("started fetcher %d for export \"%s\"", (int) pid, e->name);
  fds[0] = sv[0];
  fds[1] = area;
  fds[2] = pipe_fds[0];
  return pid;
 fail:
  errno = err;
  return -1;
}

/* The word that lets a fetcher open its export (IPC_FETCHER_OPEN), on
 * our end of its socket, before anyone else has that end: so it is the
 * first message the fetcher reads.  The socket is new and empty, so the
 * write does not block. */
static int
tell_fetcher_to_open (int fd)
{
  const struct ipc_header h = { .type = IPC_FETCHER_OPEN };

  if (ipc_send (fd, &h, NULL) == -1) {
    warn_errno ("telling a fetcher to open its export");
    return -1;
  }
  return 0;
}

/* ---- Spare fetchers (nbdcurld.h, SPARE_FETCHERS). ---- */

/* A fetcher started ahead of need for one export, waiting for
 * IPC_FETCHER_OPEN; we hold its three descriptors as launch_fetcher gave
 * them.  Closing its socket lets it go: it exits at the end of file. */
static struct spare {
  unsigned export;
  pid_t pid;
  int fds[3];
  uint64_t since_ms;            /* started then: the longest waiting goes first */
} spares[MAX_SPARE_FETCHERS];
static unsigned nspares;
static unsigned spare_target;   /* 0 until every export has been opened once */

static void
spare_drop (unsigned i)
{
  close (spares[i].fds[0]);
  close (spares[i].fds[1]);
  close (spares[i].fds[2]);
  spares[i] = spares[--nspares];
}

/* Start a spare for export idx, if there is room.  A failure is logged
 * and costs nothing else: the next client's fetcher starts on demand. */
/* Network exports only.  A file: export's fetcher checks its image
 * before it enters its sandbox (fetcher.c), so a spare of one would wait
 * unsandboxed.  Exports with header-script= or cookie-script= have none
 * either: a fetcher must open with the scripts' values of the moment it
 * is needed (a renewal time may have passed, or a token changed, since a
 * spare started), and their run costs more than a fetcher's start. */
static bool
spare_allowed (unsigned idx)
{
  return opt.exports[idx].kind != URL_FILE && !scripts_configured (idx);
}

static void
spare_start (unsigned idx)
{
  struct spare *sp;

  if (nspares >= spare_target || !spare_allowed (idx))
    return;
  sp = &spares[nspares];
  sp->pid = launch_fetcher (idx, sp->fds);
  if (sp->pid == -1)
    return;
  sp->export = idx;
  sp->since_ms = monotonic_ms ();
  nspares++;
}

/* Take the spare of export idx that has waited longest, if any: its pid,
 * and its descriptors in fds. */
static pid_t
spare_take (unsigned idx, int fds[3])
{
  unsigned i, best = nspares;
  pid_t pid;

  for (i = 0; i < nspares; i++)
    if (spares[i].export == idx &&
        (best == nspares || spares[i].since_ms < spares[best].since_ms))
      best = i;
  if (best == nspares)
    return -1;
  pid = spares[best].pid;
  memcpy (fds, spares[best].fds, sizeof spares[best].fds);
  spares[best] = spares[--nspares];
  return pid;
}

/* A client of export idx found no spare: when every place is taken, the
 * spare that has waited longest, if it has waited SPARE_REBALANCE_SECONDS,
 * makes room for one of idx.  The wait bounds what changing demand can
 * waste: at most one start per place per that time. */
static void
spare_follow_demand (unsigned idx)
{
  uint64_t now = monotonic_ms ();
  unsigned i, oldest = 0;

  if (spare_target == 0 || !spare_allowed (idx))
    return;
  if (nspares >= spare_target) {
    for (i = 1; i < nspares; i++)
      if (spares[i].since_ms < spares[oldest].since_ms)
        oldest = i;
    if (now - spares[oldest].since_ms < SPARE_REBALANCE_SECONDS * 1000ull)
      return;
    debug ("export \"%s\" has clients: its spare fetcher replaces one of \"%s\"",
           opt.exports[idx].name, opt.exports[spares[oldest].export].name);
    spare_drop (oldest);
  }
  spare_start (idx);
}

/* Once every export has been opened (or needed no check): the spares
 * start, shared out among the exports in turn.  With -s the one client
 * has its fetcher already, and none start. */
static void
spares_begin (void)
{
  unsigned i;

  static bool begun;
  unsigned eligible = 0, k;

  if (begun || opt.single)
    return;
  begun = true;
  for (i = 0; i < opt.nexports; i++)
    eligible += spare_allowed (i);
  if (eligible == 0)
    return;
  spare_target = opt.spare_fetchers;
  if (spare_target > opt.max_clients)
    spare_target = opt.max_clients;
  /* In turn over the exports that may have spares. */
  for (i = 0, k = 0; nspares < spare_target && k < spare_target; i = (i + 1) % opt.nexports)
    if (spare_allowed (i)) {
      spare_start (i);
      k++;
    }
  if (spare_target > 0)
    debug ("%u spare fetchers started", nspares);
}

/* A graceful stop: no client will want one now. */
static void
spares_end (void)
{
  spare_target = 0;
  while (nspares > 0)
    spare_drop (0);
}

/* Process pid ended: if it was a spare, forget it.  It is not replaced
 * (a spare that cannot live must not start over and over); the next
 * client's fetcher starts on demand and brings a new spare with it. */
static void
spare_exited (pid_t pid)
{
  unsigned i;

  for (i = 0; i < nspares; i++)
    if (spares[i].pid == pid) {
      warn ("spare fetcher %d for export \"%s\" ended before it was needed",
            (int) pid, opt.exports[spares[i].export].name);
      spare_drop (i);
      return;
    }
}

/* IPC_SPAWN_FETCHER: give the front-end a fetcher for export `length`,
 * a spare if there is one, else started now, and tell it to open.
 * Returns the errno to report, 0 on success. */
static int
spawn_fetcher (const struct ipc_header *req)
{
  struct ipc_header reply = { .type = IPC_FETCHER_SPAWNED, .id = req->id };
  int fds[3], err = 0;
  bool took_spare = false;
  pid_t pid;

  /* The export index was checked by the caller. */
  pid = spare_take (req->length, fds);
  if (pid != -1 && tell_fetcher_to_open (fds[0]) == -1) {
    /* It died and is not reaped yet: SIGCHLD tells of it; a new one. */
    close (fds[0]);
    close (fds[1]);
    close (fds[2]);
    pid = -1;
  }
  if (pid != -1)
    took_spare = true;
  else {
    pid = launch_fetcher (req->length, fds);
    if (pid == -1) {
      err = errno;
      goto reply;
    }
  }
  if (!took_spare && tell_fetcher_to_open (fds[0]) == -1) {
    err = EIO;
    kill (pid, SIGTERM);
    close (fds[0]);
    close (fds[1]);
    close (fds[2]);
    goto reply;
  }
  if (ipc_send_packet (control_fd, &reply, fds, data_pipe_usable ? 3 : 2) == -1) {
    /* The kernel bounds the descriptors a user has in flight by its
     * RLIMIT_NOFILE (ETOOMANYREFS), and a busy front-end may not have
     * taken the earlier ones yet: that client goes without a fetcher,
     * nobody else is touched.  Only the answer without descriptors
     * failing means the front-end is gone. */
    err = errno;
    warn_errno ("passing a fetcher to the front-end");
    kill (pid, SIGTERM);                /* reaped like any other */
  }
  close (fds[0]);
  close (fds[1]);
  close (fds[2]);
  if (err == 0) {
    /* After the hand-over, so that the client does not wait for a fork:
     * a spare in its place, or one for this export from now on. */
    if (took_spare)
      spare_start (req->length);
    else
      spare_follow_demand (req->length);
    return 0;
  }
 reply:
  reply.error = (uint32_t) err;
  if (ipc_send_packet (control_fd, &reply, NULL, 0) == -1)
    fatal_errno ("answering the front-end");
  return err;
}

/* ---- Opening every export once at start. ---- */

/* With --run, -s or socket activation somebody is there at the start: the
 * person who typed the command, or the service manager's journal.  An
 * export that cannot be opened (a certificate, DNS, a 404, a refused
 * redirect, credentials) should stop nbdcurld then, with the reason on
 * standard error, rather than let --run's command or the first client
 * fail later with a vaguer error.  So each network export is opened once
 * by a fetcher started as for a client, whose peer is the supervisor,
 * which reads its IPC_FETCHER_STARTED and IPC_FETCHER_OPENED and the
 * reason it gives through the bounded reader, in the main loop (a header
 * script of the export runs meanwhile, scripts.c), with a time limit, and
 * then closes it (the fetcher exits, reaped like any other).  --run's
 * command starts once every export is open.  file: exports were opened by
 * the supervisor already. */
static struct open_check {
  unsigned export;
  int fd;                       /* our end of its socket, -1 once done */
  uint8_t buf[IPC_HEADER_SIZE + MAX_OPEN_FAILURE_MESSAGE];
  size_t len;
} open_checks[MAX_EXPORTS];
static unsigned nopen_checks, open_checks_left;
static uint64_t open_checks_deadline_ms;

static void
open_checks_start (void)
{
  /* Long enough for a connect, a HEAD and a probe that each take their
   * full time, a script's run, and the start of the fetcher on top. */
  const unsigned limit_s = opt.connect_timeout + 2 * opt.stall_timeout + 10 +
                           2 * opt.timeout + SCRIPT_TIMEOUT;
  unsigned i;

  open_checks_deadline_ms = monotonic_ms () + 1000ull * limit_s;
  for (i = 0; i < opt.nexports; i++) {
    struct open_check *c = &open_checks[nopen_checks];
    int fds[3];

    if (opt.exports[i].kind == URL_FILE)
      continue;
    debug ("export \"%s\": opening it once before serving", opt.exports[i].name);
    if (launch_fetcher (i, fds) == -1 || tell_fetcher_to_open (fds[0]) == -1)
      fatal ("export \"%s\": cannot start a fetcher to open it", opt.exports[i].name);
    close (fds[1]);
    close (fds[2]);
    if (fcntl (fds[0], F_SETFL, O_NONBLOCK) == -1)
      fatal_errno ("fcntl");
    *c = (struct open_check) { .export = i, .fd = fds[0] };
    nopen_checks++;
    open_checks_left++;
  }
}

/* Why export c failed to open, and the server stops.  The reason is
 * untrusted text (the fetcher read a web server): printable ASCII only
 * reaches the terminal. */
__attribute__((noreturn)) static void shutdown_and_exit (int status);
__attribute__((noreturn)) PRINTF_LIKE (2, 3) static void
open_check_failed (const struct open_check *c, const char *fmt, ...)
{
  char why[MAX_OPEN_FAILURE_MESSAGE + 1];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (why, sizeof why, fmt, ap);
  va_end (ap);
  warn ("export \"%s\" cannot be opened: %s; %s", opt.exports[c->export].name, why,
        opt.run ? "--run's command was not started" : "not serving");
  /* The command never ran: it is still our fork, waiting at the gate,
   * and ends when the gate closes (started as root, it may be root,
   * which we can no longer signal). */
  if (run_pid > 0 && run_gate_fd >= 0) {
    close (run_gate_fd);
    run_gate_fd = -1;
    while (waitpid (run_pid, NULL, 0) == -1 && errno == EINTR)
      ;
    run_pid = -1;
  }
  shutdown_and_exit (EXIT_FAILURE);
}

/* Check c's socket is readable (or closed): take what came. */
static void
open_check_input (struct open_check *c)
{
  struct ipc_header h;
  ssize_t r = read (c->fd, c->buf + c->len, sizeof c->buf - c->len);

  if (r == 0)
    open_check_failed (c, "its fetcher ended before it opened the export");
  if (r == -1) {
    if (errno == EAGAIN || errno == EINTR)
      return;
    open_check_failed (c, "reading from its fetcher: %s", strerror (errno));
  }
  c->len += (size_t) r;
  while (c->fd >= 0 && c->len >= IPC_HEADER_SIZE) {
    ipc_decode_header (c->buf, &h);
    if (h.payload_len > MAX_OPEN_FAILURE_MESSAGE ||
        (h.type == IPC_FETCHER_STARTED && h.payload_len != 0) ||
        (h.type == IPC_FETCHER_OPENED && h.error == 0 && h.payload_len != 0) ||
        (h.type != IPC_FETCHER_STARTED && h.type != IPC_FETCHER_OPENED))
      open_check_failed (c, "an unexpected message from its fetcher");
    if (c->len < IPC_HEADER_SIZE + h.payload_len)
      return;                           /* the rest is coming */
    if (h.type == IPC_FETCHER_OPENED) {
      if (h.error != 0) {
        char why[MAX_OPEN_FAILURE_MESSAGE + 1];
        uint32_t j;
        for (j = 0; j < h.payload_len; j++) {
          uint8_t b = c->buf[IPC_HEADER_SIZE + j];
          why[j] = b >= 0x20 && b < 0x7f ? (char) b : '?';
        }
        why[j] = '\0';
        open_check_failed (c, "%s", why[0] ? why : strerror ((int) h.error));
      }
      debug ("export \"%s\": opened, %" PRIu64 " bytes", opt.exports[c->export].name,
             h.offset);
      close (c->fd);                    /* its fetcher exits */
      c->fd = -1;
      open_checks_left--;
      return;
    }
    memmove (c->buf, c->buf + IPC_HEADER_SIZE, c->len - IPC_HEADER_SIZE);
    c->len -= IPC_HEADER_SIZE;
  }
}

/* Every export open: --run's command may start. */
static void
open_checks_done (void)
{
  spares_begin ();
  if (run_gate_fd >= 0) {
    if (write (run_gate_fd, "r", 1) != 1)
      warn_errno ("starting --run's command");
    close (run_gate_fd);
    run_gate_fd = -1;
  }
}

/* The front-end's requests, and when each is allowed.  Anything else
 * means the front-end is broken or taken over: the server stops, since
 * every client goes through it. */
static void
supervisor_dispatch_frontend (void)
{
  struct ipc_header h;
  int fds[IPC_MAX_FDS];
  unsigned nfds, i;

  if (ipc_recv_packet (control_fd, &h, fds, &nfds) == -1) {
    if (errno == EAGAIN || errno == EINTR)
      return;
    if (errno == 0) {           /* the front-end exited; SIGCHLD tells why */
      close (control_fd);
      control_fd = -1;
      return;
    }
    fatal_errno ("bad message from the front-end");
  }
  if (nfds > 0) {
    for (i = 0; i < nfds; i++)
      close (fds[i]);
    fatal ("the front-end sent a file descriptor: stopping");
  }
  switch (h.type) {
  case IPC_SPAWN_FETCHER:
    if (h.length >= opt.nexports || h.flags != 0 || h.offset != 0 || h.error != 0)
      fatal ("the front-end asked for a fetcher for export %u of %u: stopping",
             h.length, opt.nexports);
    /* Asked before it read IPC_STOP_ACCEPTING: that client is being
     * closed, and the front-end may exit before an answer reaches it. */
    if (stopping)
      break;
    spawn_fetcher (&h);
    break;
  default:
    fatal ("unexpected message type %u from the front-end: stopping", h.type);
  }
}

/* ---- The file remover (remover.c). ---- */

/* Started as root, nbdcurld makes -U's socket and -P's pid file with
 * root's rights and then runs as --user, which may not be allowed to
 * remove them at exit: in a directory only root may write (/run), or a
 * sticky one (/tmp: only the file's owner may remove it).  Such files
 * are handed to the file remover, a child executed before the supervisor
 * drops its rights, given only their paths and device and inode numbers
 * (so that it removes the very files made, never one put in their place)
 * and the read end of a lifeline whose write end only the supervisor
 * holds: its end comes however the supervisor ends (exit, fatal error,
 * SIGKILL).  At a normal exit the supervisor waits for it. */
static struct remover_config to_remove;  /* the socket and the pid file */
static pid_t remover_pid = -1;
static int remover_fd = -1;           /* the lifeline's write end: closed = remove now */

/* The directory of an absolute path (make_paths_absolute), into dir of
 * MAX_PATH_LENGTH bytes; -1 if it does not fit. */
static int
parent_dir (const char *path, char dir[MAX_PATH_LENGTH])
{
  const char *slash = strrchr (path, '/');
  size_t len;

  if (slash == NULL)
    return -1;
  len = slash == path ? 1 : (size_t) (slash - path);    /* "/" for /file */
  if (len >= MAX_PATH_LENGTH)
    return -1;
  memcpy (dir, path, len);
  dir[len] = '\0';
  return 0;
}

/* May --user remove path once it runs as that user?  Its directory's
 * mode bits for child_uid and child_gid (its only group then) must allow
 * writing and searching, and a sticky directory must be that user's. */
static bool
user_may_remove (const char *path)
{
  char dir[MAX_PATH_LENGTH];
  struct stat st;
  mode_t bits;

  if (parent_dir (path, dir) == -1 || stat (dir, &st) == -1)
    return false;
  bits = st.st_uid == child_uid ? st.st_mode >> 6
       : st.st_gid == child_gid ? st.st_mode >> 3 : st.st_mode;
  if ((bits & (S_IWOTH | S_IXOTH)) != (S_IWOTH | S_IXOTH))
    return false;
  return !(st.st_mode & S_ISVTX) || st.st_uid == child_uid;
}

static void
hand_to_remover (const char *path)
{
  struct stat st;

  if (user_may_remove (path) || lstat (path, &st) == -1)
    return;
  if (strlen (path) > MAX_PATH_LENGTH)
    fatal ("%s: a path longer than %u bytes", path, MAX_PATH_LENGTH);
  to_remove.files[to_remove.nfiles++] = (struct removed_file) {
    .path = (char *) path, .dev = (uint64_t) st.st_dev, .ino = (uint64_t) st.st_ino,
  };
}

static bool
handed_to_remover (const char *path)
{
  unsigned i;
  for (i = 0; i < to_remove.nfiles; i++)
    if (to_remove.files[i].path == path)
      return true;
  return false;
}

static int
send_remover_config (int fd, const void *arg)
{
  return config_send_remover (fd, arg);
}

/* Started as root, before our rights go: execute the file remover if a
 * file we made is one --user may not remove. */
static void
start_remover (void)
{
  int fds[2];

  if (unix_socket_path && !private_dir)
    hand_to_remover (unix_socket_path);
  if (opt.pidfile)
    hand_to_remover (opt.pidfile);
  if (to_remove.nfiles == 0)
    return;
  to_remove.flags = (opt.verbose ? REMOVER_VERBOSE : 0) |
                    (opt.sandbox_debug ? REMOVER_SANDBOX_DEBUG : 0);
  if (supervisor_exe_fd == -1) {
    supervisor_exe_fd = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (supervisor_exe_fd == -1)
      fatal_errno ("cannot open this program (/proc/self/exe) to start the file remover");
  }
  if (pipe2 (fds, O_CLOEXEC) == -1)
    fatal_errno ("pipe for the file remover");
  remover_pid = start_child (ROLE_ARG_REMOVER, fds[0], NULL, 0, send_remover_config,
                             &to_remove);
  if (remover_pid == -1)
    fatal_errno ("cannot start the file remover");
  close (fds[0]);
  remover_fd = fds[1];
  debug ("%s%s%s: user %u may not remove %s at exit: process %d (root, without "
         "capabilities) will", to_remove.files[0].path, to_remove.nfiles > 1 ? " and " : "",
         to_remove.nfiles > 1 ? to_remove.files[1].path : "", (unsigned) child_uid,
         to_remove.nfiles > 1 ? "them" : "it", (int) remover_pid);
}

/* At exit: let the remover remove its files now, and wait for it. */
static void
finish_remover (void)
{
  if (remover_fd >= 0)
    close (remover_fd);
  remover_fd = -1;
  while (remover_pid > 0 && waitpid (remover_pid, NULL, 0) == -1 && errno == EINTR)
    ;
  remover_pid = -1;
}

/* ---- Running and stopping. ---- */

static void
cleanup_files (void)
{
  if (unix_socket_path && !handed_to_remover (unix_socket_path))
    unlink (unix_socket_path);
  if (private_dir)
    rmdir (private_dir);
  if (opt.pidfile && !handed_to_remover (opt.pidfile))
    unlink (opt.pidfile);
  finish_remover ();
}

/* Wait up to ms milliseconds for a child to end.  SIGCHLD is blocked
 * (supervisor_main's mask), so one that ended since the last waitpid is
 * pending and this returns at once: a stop takes as long as the slowest
 * child, not a multiple of a fixed sleep (a 20 ms sleep here had been a
 * fifth of a short --run's whole time). */
static void
wait_for_child_exit (unsigned ms)
{
  const struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000 };
  sigset_t chld;

  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  (void) sigtimedwait (&chld, NULL, &ts);
}

static void
stop_children (void)
{
  unsigned i, tries;

  launcher_retire ("stopping");
  if (frontend_pid > 0)
    kill (frontend_pid, SIGTERM);
  if (keyholder_pid > 0)
    kill (keyholder_pid, SIGTERM);
  for (i = 0; i < nfetchers; i++)
    kill (fetcher_pids[i], SIGTERM);
  /* Give them a moment, then make sure. */
  for (tries = 0; tries < 50; tries++) {
    pid_t pid;
    while ((pid = waitpid (-1, NULL, WNOHANG)) > 0) {
      if (pid == frontend_pid)
        frontend_pid = -1;
      if (pid == keyholder_pid)
        keyholder_pid = -1;
      remove_fetcher (pid);
    }
    if (frontend_pid == -1 && keyholder_pid == -1 && nfetchers == 0)
      return;
    wait_for_child_exit (20);
  }
  /* SIGKILL cannot be ignored: reap them, so none outlives us even as a
   * zombie. */
  if (frontend_pid > 0) {
    kill (frontend_pid, SIGKILL);
    waitpid (frontend_pid, NULL, 0);
    frontend_pid = -1;
  }
  if (keyholder_pid > 0) {
    kill (keyholder_pid, SIGKILL);
    waitpid (keyholder_pid, NULL, 0);
    keyholder_pid = -1;
  }
  for (i = 0; i < nfetchers; i++) {
    kill (fetcher_pids[i], SIGKILL);
    waitpid (fetcher_pids[i], NULL, 0);
  }
  nfetchers = 0;
}

__attribute__((noreturn))
static void
shutdown_and_exit (int status)
{
  stop_children ();
  scripts_cleanup ();
  cleanup_files ();
  exit (status);
}

static void
start_run_command (void)
{
  char *uri = server_uri ();
  char port[16] = "";

  if (!unix_socket_path)
    snprintf (port, sizeof port, "%s", opt.port ? opt.port : "10809");
  int gate[2];

  /* The command is started now, before our sandbox (it is not ours), but
   * runs only once every export has been opened (open_exports_once): it
   * waits for a byte on the gate, and ends without running at its EOF. */
  if (pipe2 (gate, O_CLOEXEC) == -1)
    fatal_errno ("pipe for --run");
  run_pid = fork ();
  if (run_pid == -1)
    fatal_errno ("fork for --run");
  if (run_pid == 0) {
    sigset_t none;
    char go;
    ssize_t n;

    close (gate[1]);
    do
      n = read (gate[0], &go, 1);
    while (n == -1 && errno == EINTR);
    if (n != 1)
      _exit (EXIT_FAILURE);   /* nbdcurld stopped: nothing to run against */
    close (gate[0]);
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    signal (SIGPIPE, SIG_DFL);
    setenv ("uri", uri, 1);
    setenv ("port", port, 1);
    setenv ("unixsocket", unix_socket_path ? unix_socket_path : "", 1);
    setenv ("exportname", opt.exports[0].name, 1);
    /* As nbdkit: "1" for --tls=on, "2" for --tls=require, unset when off. */
    if (opt.tls != TLS_OFF)
      setenv ("tls", opt.tls == TLS_ON ? "1" : "2", 1);
    else
      unsetenv ("tls");
    if (opt.tls_certificates)
      setenv ("tls_certificates", opt.tls_certificates, 1);
    if (opt.tls_psk)
      setenv ("tls_psk", opt.tls_psk, 1);
    execl ("/bin/sh", "sh", "-c", opt.run, (char *) NULL);
    fprintf (stderr, "nbdcurld: cannot run /bin/sh: %s\n", strerror (errno));
    _exit (127);
  }
  close (gate[0]);
  run_gate_fd = gate[1];
  free (uri);
}

static int
exit_status_of (int status)
{
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return EXIT_FAILURE;
}

/* What a stop by signal exits with: success, but with --run failure,
 * since the command did not get to finish. */
static int
stop_status (void)
{
  return opt.run ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* SIGTERM, SIGINT: the first starts a graceful stop (SHUTDOWN_GRACE_SECONDS,
 * nbdcurld.h), the second stops at once. */
static void
stop_on_signal (uint32_t sig)
{
  const struct ipc_header h = { .type = IPC_STOP_ACCEPTING };

  if (stopping) {
    notice ("signal %u again: stopping at once", sig);
    shutdown_and_exit (stop_status ());
  }
  if (frontend_pid == -1 || control_fd == -1 ||
      ipc_send_packet (control_fd, &h, NULL, 0) == -1) {
    debug ("stopping on signal %u", sig);
    shutdown_and_exit (stop_status ());
  }
  stopping = true;
  spares_end ();
  stop_deadline_ms = monotonic_ms () + (uint64_t) SHUTDOWN_GRACE_SECONDS * 1000;
  notice ("stopping on signal %u: no new connections; requests in flight have "
          "%u seconds to finish (send the signal again to stop at once)",
          sig, SHUTDOWN_GRACE_SECONDS);
}

/* A child the server cannot go on without ended: say how, and stop. */
__attribute__((noreturn))
static void
stop_without (const char *who, int status)
{
  if (WIFSIGNALED (status))
    warn ("%s was killed by signal %d (%s): stopping", who,
          WTERMSIG (status), strsignal (WTERMSIG (status)));
  else
    warn ("%s exited with status %d: stopping", who, exit_status_of (status));
  shutdown_and_exit (EXIT_FAILURE);
}

static void
reap_children (void)
{
  pid_t pid;
  int status;

  while ((pid = waitpid (-1, &status, WNOHANG)) > 0) {
    if (pid == run_pid) {
      debug ("--run command exited with status %d", exit_status_of (status));
      shutdown_and_exit (exit_status_of (status));
    }
    if (pid == frontend_pid) {
      frontend_pid = -1;
      if (stopping && WIFEXITED (status) && WEXITSTATUS (status) == 0) {
        debug ("every client is done: stopping");
        shutdown_and_exit (stop_status ());
      }
      if (opt.single && WIFEXITED (status) && WEXITSTATUS (status) == 0)
        shutdown_and_exit (EXIT_SUCCESS);
      stop_without ("the front-end", status);
    }
    if (pid == keyholder_pid) {
      /* Without it no TLS client can be served: stop, as for the
       * front-end, rather than refuse every client from now on. */
      keyholder_pid = -1;
      if (WIFEXITED (status) && WEXITSTATUS (status) == 0) {
        /* It ends so when the front-end closed its socket: the front-end's
         * own end (reaped next) says whether that was a stop. */
        debug ("the key holder ended with the front-end");
        continue;
      }
      stop_without ("the key holder", status);
    }
    if (pid == remover_pid) {
      remover_pid = -1;
      warn ("the file remover (process %d) ended early: the files it was to "
            "remove at exit will be left", (int) pid);
      continue;
    }
    if (pid == launcher_pid) {
      launcher_ended (status);
      continue;
    }
    if (scripts_child_exited (pid, status))
      continue;
    if (WIFSIGNALED (status))
      launcher_fetcher_crashed (WTERMSIG (status));
    remove_fetcher (pid);
    spare_exited (pid);
    scripts_fetcher_exited (pid);
    if (WIFSIGNALED (status))
      warn ("fetcher %d was killed by signal %d (%s)", (int) pid,
            WTERMSIG (status), strsignal (WTERMSIG (status)));
    else
      debug ("fetcher %d exited with status %d", (int) pid, exit_status_of (status));
  }
}

static void
daemonize (void)
{
  pid_t pid = fork ();
  int null;

  if (pid == -1)
    fatal_errno ("fork");
  if (pid > 0)
    _exit (EXIT_SUCCESS);
  setsid ();
  if (chdir ("/") == -1)
    fatal_errno ("chdir /");
  null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    dup2 (null, STDIN_FILENO);
    dup2 (null, STDOUT_FILENO);
    close (null);
  }
}

static void
write_pidfile (void)
{
  char buf[32];
  int fd, n;

  fd = open (opt.pidfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd == -1)
    fatal_errno ("cannot write the pid file %s", opt.pidfile);
  n = snprintf (buf, sizeof buf, "%d\n", (int) getpid ());
  if (write_full (fd, buf, (size_t) n) == -1 || close (fd) == -1)
    fatal_errno ("writing the pid file %s", opt.pidfile);
}

int
supervisor_main (int argc, char **argv)
{
  sigset_t mask;
  int sfd;

  /* Before anything opens a file: the activated sockets are at fd 3... */
  take_activated_sockets ();
  /* ...and before anything secret is read (--config files, passwords,
   * the TLS key and PSKs): not dumpable, and not traced.  No user
   * namespace here: the programs we execute would inherit it, and every
   * process of our user holds every capability in a user namespace it
   * owns, ptrace of undumpable processes included. */
  sandbox_early_start ("nbdcurld", false);
  options_parse (argc, argv, &opt);
  log_init (NULL, opt.verbose);
  make_paths_absolute ();
  /* Before any child: writes to a child that died must be errors.  (The
   * children and --run's command get the default back.) */
  signal (SIGPIPE, SIG_IGN);

  if (geteuid () == 0) {
    char err[256];
    if (sandbox_lookup_user (opt.user, opt.group, &child_uid, &child_gid,
                             err, sizeof err) == -1)
      fatal ("%s", err);
    change_user = true;
    debug ("will run as %s%s, uid %u gid %u, once the sockets are made",
           opt.user ? "--user " : "", opt.user ? opt.user : sandbox_default_user (),
           (unsigned) child_uid, (unsigned) child_gid);
  }
  else if (opt.user || opt.group)
    fatal ("--user and --group need nbdcurld to be started as root; as "
           "another user, every process runs as that user (without any "
           "capabilities)");

  /* SIGTERM: a graceful stop.  Set again when we become --user. */
  if (opt.exit_with_parent)
    sandbox_parent_death (SIGTERM);

  fetcher_exe_fd = open_child_executable (FETCHER_EXE);
  frontend_exe_fd = open_child_executable (FRONTEND_EXE);
  check_urls ();
  check_exports ();
  read_export_secrets ();
  read_export_ca_files ();
  prepare_tls ();

  if (socket_activated) {
    if (opt.single || opt.port || opt.ipaddr || opt.unix_path)
      fatal ("started by socket activation: -s, -p, -i and -U do not apply");
  }
  else if (opt.single)
    ;
  else if (opt.unix_path && strcmp (opt.unix_path, "-") == 0)
    listen_private_unix ();
  else if (opt.unix_path)
    listen_unix (opt.unix_path);
  else if (opt.run && !opt.port && !opt.ipaddr)
    listen_private_unix ();           /* --run alone: nothing on the network */
  else
    listen_tcp ();

  /* --log=null: from here on (start-up errors above were still shown),
   * every process's log lines go nowhere. */
  if (opt.log_null) {
    int null_fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd == -1 || dup2 (null_fd, STDERR_FILENO) == -1)
      fatal_errno ("--log=null: /dev/null");
    close (null_fd);
  }

  if (opt.print_uri) {
    if (opt.single || socket_activated)
      notice ("--print-uri: no URI when serving stdin or activated sockets");
    else {
      char *uri = server_uri ();
      printf ("%s\n", uri);
      fflush (stdout);
      free (uri);
    }
  }

  sigemptyset (&mask);
  sigaddset (&mask, SIGCHLD);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGHUP);
  if (sigprocmask (SIG_BLOCK, &mask, NULL) == -1)
    fatal_errno ("sigprocmask");

  if (!opt.foreground && !opt.single && !opt.run && !socket_activated &&
      !opt.exit_with_parent)
    daemonize ();
  if (opt.pidfile)
    write_pidfile ();

  sfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd == -1)
    fatal_errno ("signalfd");

  if (opt.run)
    start_run_command ();             /* before our sandbox: it is not ours */

  /* Everything that needed our rights is done: sockets made, images open,
   * pid file written.  Become --user (started as root), drop every
   * capability, and load our filter; the children inherit all of it and
   * add their own layers. */
  /* Before the sandbox: the scripts' temporary directories. */
  scripts_prepare (&opt, MAX_FETCHERS, change_user, child_uid, child_gid);
  if (change_user)
    start_remover ();
  if (change_user && private_dir) {
    /* So that the socket and its directory can still be removed at exit. */
    if (chown (private_dir, child_uid, child_gid) == -1 ||
        (unix_socket_path && chown (unix_socket_path, child_uid, child_gid) == -1))
      warn_errno ("cannot hand %s to the unprivileged user", private_dir);
  }
  {
    const struct sandbox_spec spec = {
      .role = "supervisor",
      .rules = supervisor_policy_rules, .nrules = supervisor_policy_nrules,
      .debug = opt.sandbox_debug,
      .change_user = change_user, .uid = child_uid, .gid = child_gid,
    };
    sandbox_enter (&spec);
  }

  start_frontend ();
  launcher_start ();
  scripts_alloc_fetchers ();
  if (opt.run || opt.single || socket_activated)
    open_checks_start ();
  if (open_checks_left == 0)
    open_checks_done ();

  /* The signalfd, the control socket, the launcher's socket, the
   * scripts' pipes and the fetchers' script channels, then the open
   * checks' sockets. */
  const unsigned max_pfd = 3 + 4 * MAX_EXPORTS + MAX_FETCHERS + MAX_EXPORTS;
  struct pollfd *pfd = calloc (max_pfd, sizeof *pfd);
  if (pfd == NULL)
    fatal_errno ("calloc");
  for (;;) {
    struct signalfd_siginfo si;
    unsigned nscript, nchecks = 0, i;
    int timeout = -1, script_timeout;

    pfd[0] = (struct pollfd) { .fd = sfd, .events = POLLIN };
    pfd[1] = (struct pollfd) { .fd = control_fd, .events = POLLIN };
    pfd[2] = (struct pollfd) { .fd = launcher_fd, .events = POLLIN };
    nscript = scripts_poll_fds (pfd + 3, max_pfd - 3 - MAX_EXPORTS);
    if (open_checks_left > 0) {
      uint64_t now = monotonic_ms ();
      for (i = 0; i < nopen_checks; i++)
        if (open_checks[i].fd >= 0) {
          if (now >= open_checks_deadline_ms)
            open_check_failed (&open_checks[i], "not open in time");
          pfd[3 + nscript + nchecks++] = (struct pollfd) { .fd = open_checks[i].fd,
                                                           .events = POLLIN };
        }
      timeout = (int) (open_checks_deadline_ms - now);
    }

    if (stopping) {
      uint64_t now = monotonic_ms ();
      if (now >= stop_deadline_ms) {
        warn ("requests still in flight after %u seconds: stopping them",
              SHUTDOWN_GRACE_SECONDS);
        shutdown_and_exit (stop_status ());
      }
      timeout = (int) (stop_deadline_ms - now);   /* <= the grace period */
    }
    script_timeout = scripts_timeout_ms ();
    if (script_timeout >= 0 && (timeout < 0 || script_timeout < timeout))
      timeout = script_timeout;
    if (launcher_restart_ms != 0) {
      uint64_t now = monotonic_ms ();
      int until = now >= launcher_restart_ms ? 0 : (int) (launcher_restart_ms - now);
      if (timeout < 0 || until < timeout)
        timeout = until;
    }
    /* A closed control socket (fd -1) is skipped by poll. */
    if (poll (pfd, 3 + nscript + nchecks, timeout) == -1) {
      if (errno == EINTR)
        continue;
      fatal_errno ("poll");
    }
    if (control_fd >= 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
      supervisor_dispatch_frontend ();
    /* The same descriptor only: a start above may have replaced it. */
    if (launcher_fd >= 0 && launcher_fd == pfd[2].fd &&
        (pfd[2].revents & (POLLIN | POLLHUP | POLLERR)))
      launcher_dispatch ();
    if (launcher_restart_ms != 0 && monotonic_ms () >= launcher_restart_ms)
      launcher_start ();
    scripts_dispatch (pfd + 3, nscript);
    scripts_run_due ();
    if (nchecks > 0) {
      unsigned k = 0;
      for (i = 0; i < nopen_checks; i++)
        if (open_checks[i].fd >= 0 && open_checks[i].fd == pfd[3 + nscript + k].fd) {
          if (pfd[3 + nscript + k].revents & (POLLIN | POLLHUP | POLLERR))
            open_check_input (&open_checks[i]);
          k++;
        }
      if (open_checks_left == 0)
        open_checks_done ();
    }
    while (read (sfd, &si, sizeof si) == (ssize_t) sizeof si) {
      if (si.ssi_signo == SIGCHLD)
        reap_children ();
      else if (si.ssi_signo == SIGHUP)
        /* Nothing to reopen: every line goes to standard error, which
         * belongs to whoever started us (a service manager's journal, a
         * shell's redirection).  Never a reason to stop serving. */
        notice ("SIGHUP: nbdcurld writes no log file of its own (it logs to "
                "standard error): nothing to reopen, serving on");
      else
        stop_on_signal (si.ssi_signo);
    }
  }
}
