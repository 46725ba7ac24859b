/*
 * sockets.c: the server's listening sockets (TCP, a Unix socket, a
 * private one in a mkdtemp'd directory, or socket activation's) and the
 * URI that names them.
 *
 * Apart because the sockets are made once, before the rights go, and only
 * handed on: the front-end accepts on them, so here they are a list, the
 * Unix socket's path to remove at exit, and the URI for --print-uri and
 * --run.  It owns the list and those paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "log.h"
#include "sockets.h"
#include "tls-modes.h"

/* The parsed options, read-only here (sockets_listen). */
static const struct options *options;
#define opt (*options)

static int listeners[64];
static unsigned nlisteners;
static char *private_dir;             /* -U - or --run: mkdtemp'd */
static char *unix_socket_path;        /* to unlink at exit */
static bool socket_activated;

static void
add_listener (int fd)
{
  if (nlisteners >= sizeof listeners / sizeof listeners[0])
    fatal ("too many listening sockets");
  listeners[nlisteners++] = fd;
}

/* systemd socket activation: LISTEN_PID names us, LISTEN_FDS counts the
 * sockets from fd 3.  Taken before anything else opens a file. */
void
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

/* bind failed on port (errno): why, and what to do instead. */
__attribute__((noreturn))
static void
bind_failed (const char *port)
{
  int e = errno;

  if (e == EADDRINUSE)
    fatal ("cannot listen on port %s: %s (another server has it: pick another "
           "port with -p)", port, strerror (e));
  if (e == EACCES && atoi (port) < 1024)
    fatal ("cannot listen on port %s: %s (a port below 1024 needs root: start "
           "nbdcurld as root (it drops privileges itself), use a port of 1024 or "
           "more with -p, or let systemd pass the socket (socket activation))",
           port, strerror (e));
  fatal ("cannot listen on port %s: %s", port, strerror (e));
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
      bind_failed (port);
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

char *
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

void
sockets_listen (const struct options *o)
{
  options = o;
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
}

bool
sockets_activated (void)
{
  return socket_activated;
}

bool
sockets_is_listener (long fd)
{
  unsigned i;

  for (i = 0; i < nlisteners; i++)
    if (listeners[i] == fd)
      return true;
  return false;
}

unsigned
sockets_count (void)
{
  return nlisteners;
}

int
sockets_listener (unsigned i)
{
  return listeners[i];
}

void
sockets_close_all (void)
{
  unsigned i;

  for (i = 0; i < nlisteners; i++)
    close (listeners[i]);
}

const char *
sockets_unix_path (void)
{
  return unix_socket_path;
}

const char *
sockets_private_dir (void)
{
  return private_dir;
}
