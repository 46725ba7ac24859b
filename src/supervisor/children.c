/*
 * children.c: how the supervisor executes a child: each role's
 * executable, opened at start, and fork+exec with the descriptors it is
 * given, in a scrubbed environment.
 *
 * Apart because every part that starts a role's process comes through
 * here (start_child in launcher-client.c, the URL checker in
 * urlcheck-client.c), and it needs nothing of theirs: it owns only the
 * executables' descriptors.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "config-build.h"
#include "child.h"
#include "children.h"
#include "log.h"
#include "roles.h"

static int fetcher_exe_fd = -1;       /* FETCHER_EXE, for fexecve */
static int frontend_exe_fd = -1;      /* FRONTEND_EXE */
static int supervisor_exe_fd = -1;    /* this program, for the file remover */

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

void
children_open_executables (void)
{
  fetcher_exe_fd = open_child_executable (FETCHER_EXE);
  frontend_exe_fd = open_child_executable (FRONTEND_EXE);
}

void
children_open_self (void)
{
  if (supervisor_exe_fd == -1) {
    supervisor_exe_fd = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (supervisor_exe_fd == -1)
      fatal_errno ("cannot open this program (/proc/self/exe) to start the file remover");
  }
}

/* ---- Children. ---- */

/* The environment a child gets: one fixed setting for GnuTLS, its log's
 * style (log-format.h), and sanitizer settings, which a sanitizer build
 * needs in every process and which carry no secrets. */
static char **
child_environment (const struct role *r)
{
  static const char *keep[] = { "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS" };
  static char *env[sizeof keep / sizeof keep[0] + 4];
  static char style[sizeof LOG_STYLE_ENV + 16];
  size_t i, n = 0;

  /* The launcher's (roles.c says why). */
  if (r->bind_now)
    env[n++] = (char *) "LD_BIND_NOW=1";

  /* GnuTLS initialises itself when it is loaded, at a cost of heap in
   * every fetcher.  Nothing there uses it: libcurl is
   * built with OpenSSL, and GnuTLS is loaded only as a dependency of
   * libraries for protocols nbdcurld refuses (librtmp, libldap), which
   * initialise it themselves when used. */
  env[n++] = (char *) "GNUTLS_NO_IMPLICIT_INIT=1";

  /* How its log lines look on the standard error it inherits. */
  snprintf (style, sizeof style, "%s=%s", LOG_STYLE_ENV, log_style_name (log_get_style ()));
  env[n++] = style;

  for (i = 0; i < sizeof keep / sizeof keep[0]; i++) {
    const char *v = getenv (keep[i]);
    /* In the forked child, single-threaded: malloc is safe here. */
    if (v && asprintf (&env[n], "%s=%s", keep[i], v) != -1)
      n++;
  }
  env[n] = NULL;
  return env;
}

/* The open executable a role runs in (roles.c). */
static int
role_executable (const struct role *r)
{
  switch (r->exe) {
  case EXE_FRONTEND:
    return frontend_exe_fd;
  case EXE_SUPERVISOR:
    return supervisor_exe_fd;
  case EXE_FETCHER:
    break;
  }
  return fetcher_exe_fd;
}

/* fork+exec the role's executable (role_executable) as `role` with fds[i]
 * at fd 3 + i and nothing else open but stdin, stdout and stderr.  Returns
 * the pid. */
pid_t
spawn_child (enum role_id id, const int *fds, unsigned nfds)
{
  const struct role *r = &roles[id];
  pid_t pid = fork ();

  if (pid == -1)
    return -1;
  if (pid == 0) {
    char *argv[] = { (char *) "nbdcurld", (char *) r->arg, NULL };
    sigset_t none;
    int exe;

    /* Move every fd out of the way first (this binary's too), above the
     * places they go to, so that no dup2 below can overwrite one that has
     * not been placed yet.  Just above, not at a fixed high number: under
     * a low RLIMIT_NOFILE that number may not exist. */
    const int above = 3 + (int) nfds;
    exe = fcntl (role_executable (r), F_DUPFD_CLOEXEC, above);
    if (exe == -1 || child_place_fds (fds, nfds) == -1)
      _exit (127);
    if (close_range (3 + nfds, ~0U, CLOSE_RANGE_CLOEXEC) == -1)
      _exit (127);
    signal (SIGPIPE, SIG_DFL);
    /* The file remover keeps our mask (roles.c says why). */
    if (!r->keeps_signal_mask) {
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
    }
    /* exe is close-on-exec and goes away with the exec. */
    fexecve (exe, argv, child_environment (r));
    _exit (127);
  }
  return pid;
}
