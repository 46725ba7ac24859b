/*
 * fetchers.c: starting a fetcher (its socket, data area, data pipe,
 * script channel and configuration) and the table of those alive.
 *
 * Apart because a fetcher starts from three places (a client's request,
 * a spare, an open check at start), each the same way, and what a fetcher
 * is told (fetcher_config_of) is the one translation of an export's keys
 * into the fetcher's configuration.  It owns the table of fetchers'
 * pids and whether they get a data pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "config.h"
#include "data-path.h"
#include "fetcher-wire.h"
#include "fetchers.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "launcher-client.h"
#include "limits-readahead.h"
#include "log.h"
#include "scripts.h"

/* The parsed options, read-only here (fetchers_alloc). */
static const struct options *options;
#define opt (*options)

/* The number the next fetcher gets, for its share of its export's cache
 * (limits-cache.h): every fetcher's differs from those alive with it. */
static uint32_t cache_owners;

static pid_t *fetcher_pids;           /* max_fetchers (&opt), from fetchers_alloc */
static unsigned nfetchers;

/* False when the one client of -s sits on something splice cannot write. */
static bool data_pipe_usable = true;

static int
send_fetcher_config (int fd, const void *arg)
{
  return config_send_fetcher (fd, arg);
}

void
remove_fetcher (pid_t pid)
{
  unsigned i;
  for (i = 0; i < nfetchers; i++)
    if (fetcher_pids[i] == pid) {
      fetcher_pids[i] = fetcher_pids[--nfetchers];
      return;
    }
}

/* A fetcher's data area (data-path.h): a memfd of DATA_AREA_SIZE, sealed
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

/* A fetcher's data pipe (data-path.h), with as much capacity as the
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
             (opt.prefetch_all && e->cache_fd >= 0 ? FETCHER_PREFETCH_ALL : 0) |
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
    .cache_entries = e->cache_fd >= 0 ? e->cache_entries : 0,
    .cache_block_size = e->cache_fd >= 0 ? e->cache_block_size : 0,
    .cache_owner = ++cache_owners,
  };
  memcpy (fc->allow_ports, opt.allow_ports, sizeof fc->allow_ports);
  fetch_settings_to_fetcher (&e->keys, fc);
}

/* The descriptors a new fetcher of export idx needs: its socket (sv), its
 * data area, its data pipe, and with header-script= or cookie-script= its
 * script channel (scripts.c), open while it lives (script_sv, else -1).
 * Returns 0, or -1 with errno after logging why and closing what was
 * made. */
static int
make_fetcher_fds (unsigned idx, int sv[2], int *area, int pipe_fds[2], int script_sv[2])
{
  int err;

  *area = make_data_area ();
  if (*area == -1) {
    err = errno;
    warn_errno ("making the data area for a fetcher");
    goto fail;
  }
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
    err = errno;
    warn_errno ("socketpair for a fetcher");
    close (*area);
    goto fail;
  }
  if (make_data_pipe (pipe_fds) == -1) {
    err = errno;
    warn_errno ("making the data pipe for a fetcher");
    close (sv[0]);
    close (sv[1]);
    close (*area);
    goto fail;
  }
  if (scripts_configured (idx) &&
      socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, script_sv) == -1) {
    err = errno;
    warn_errno ("socketpair for a fetcher's scripts");
    close (sv[0]);
    close (sv[1]);
    close (*area);
    close (pipe_fds[0]);
    close (pipe_fds[1]);
    goto fail;
  }
  return 0;
 fail:
  errno = err;
  return -1;
}

/* Start a fetcher of export idx, counted among the fetchers (reaped like
 * any other).  Returns its pid and our ends: its socket, its data area
 * and the data pipe's read end (fds[0..2]); or -1 with errno, after
 * logging why. */
pid_t
launch_fetcher (unsigned idx, int fds[3])
{
  const struct export_spec *e = &opt.exports[idx];
  struct fetcher_config fc;
  int sv[2], area, extra[5], pipe_fds[2], script_sv[2] = { -1, -1 }, err;
  unsigned nextra = 0;
  pid_t pid;

  if (nfetchers >= max_fetchers (&opt)) {
    warn ("%u fetchers are running already: refusing another", nfetchers);
    errno = EAGAIN;
    return -1;
  }
  fetcher_config_of (e, &fc);
  fc.flags |= scripts_fetcher_flags (idx);
  if (make_fetcher_fds (idx, sv, &area, pipe_fds, script_sv) == -1)
    return -1;
  extra[nextra++] = area;              /* CHILD_FD_DATA_AREA */
  extra[nextra++] = pipe_fds[1];       /* CHILD_FD_DATA_PIPE */
  if (e->fd >= 0)
    extra[nextra++] = e->fd;           /* CHILD_FD_EXPORT */
  else if (script_sv[1] >= 0)
    extra[nextra++] = script_sv[1];    /* CHILD_FD_SCRIPTS */
  if (e->ca_bundle_len > 0)
    extra[nextra++] = e->ca_bundle_fd; /* CHILD_FD_CA_BUNDLE, after the scripts' */
  if (e->cache_fd >= 0)
    extra[nextra++] = e->cache_fd;     /* CHILD_FD_CACHE_FIRST or after */
  pid = start_child (ROLE_FETCHER, sv[1], extra, nextra, send_fetcher_config, &fc);
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
    errno = err;
    return -1;
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
}

/* The word that lets a fetcher open its export (IPC_FETCHER_OPEN), on
 * our end of its socket, before anyone else has that end: so it is the
 * first message the fetcher reads.  The socket is new and empty, so the
 * write does not block. */
int
tell_fetcher_to_open (int fd)
{
  const struct ipc_header h = { .type = IPC_FETCHER_OPEN };

  if (ipc_send (fd, &h, NULL) == -1) {
    warn_errno ("telling a fetcher to open its export");
    return -1;
  }
  return 0;
}

void
fetchers_alloc (const struct options *o)
{
  options = o;
  fetcher_pids = calloc (max_fetchers (&opt), sizeof *fetcher_pids);
  if (fetcher_pids == NULL)
    fatal_errno ("calloc");
}

void
fetchers_check_data_pipe (void)
{
  struct stat st;

  /* splice(2) writes to sockets and pipes only: a client on another
   * kind of standard output gets its reads through the data area. */
  data_pipe_usable = fstat (STDOUT_FILENO, &st) == 0 &&
    (S_ISSOCK (st.st_mode) || S_ISFIFO (st.st_mode));
}

bool
fetchers_data_pipe_usable (void)
{
  return data_pipe_usable;
}

unsigned
fetchers_count (void)
{
  return nfetchers;
}

void
fetchers_signal (int sig)
{
  unsigned i;

  for (i = 0; i < nfetchers; i++)
    kill (fetcher_pids[i], sig);
}

void
fetchers_kill_all (void)
{
  unsigned i;

  for (i = 0; i < nfetchers; i++) {
    kill (fetcher_pids[i], SIGKILL);
    waitpid (fetcher_pids[i], NULL, 0);
  }
  nfetchers = 0;
}
