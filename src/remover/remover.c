/*
 * remover.c: the file remover (nbdcurld-rm), executed by the supervisor
 * when it was started as root and --user may not remove the -U socket or
 * the -P pid file at exit (a directory only root may write, such as /run,
 * or a sticky one, such as /tmp).
 *
 * Peer: the supervisor, which holds the other end of the lifeline on
 * CHILD_FD_PEER and writes nothing into it: its end (the supervisor's
 * exit, a fatal error or SIGKILL) is the one event.  Configuration, on
 * CHILD_FD_CONFIG: the paths and the device and inode numbers of the files
 * made (config.c), nothing else of the supervisor's.  It is executed, not
 * forked, so that it holds no copy of the supervisor's memory (URLs,
 * passwords, cookies); it keeps root's uid because that is what may remove
 * those files, and no capability: root owns the files and the directory
 * of each (or the sticky directory lets the file's owner remove it).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child-fds.h"
#include "config.h"
#include "config-wire.h"
#include "limits-strings.h"
#include "log.h"
#include "policy.h"
#include "roles.h"
#include "sandbox.h"

/* The directory of absolute path into dir; -1 if there is none. */
static int
parent_of (const char *path, char dir[MAX_PATH_LENGTH + 1])
{
  const char *slash = strrchr (path, '/');
  size_t len;

  if (slash == NULL)
    return -1;
  len = slash == path ? 1 : (size_t) (slash - path);    /* "/" for /file */
  if (len > MAX_PATH_LENGTH)
    return -1;
  memcpy (dir, path, len);
  dir[len] = '\0';
  return 0;
}

/* Landlock: removing files in the files' directories, and nothing else
 * (no other path, no TCP port); its own small filter. */
static void
remover_sandbox (const struct remover_config *c)
{
  static char dir_names[REMOVER_MAX_FILES][MAX_PATH_LENGTH + 1];
  struct sandbox_path dirs[REMOVER_MAX_FILES];
  uint32_t i;

  for (i = 0; i < c->nfiles; i++) {
    if (parent_of (c->files[i].path, dir_names[i]) == -1)
      fatal ("%s: no directory", c->files[i].path);
    dirs[i] = (struct sandbox_path) { dir_names[i], SANDBOX_REMOVE };
  }
  {
    const struct sandbox_spec spec = {
      .role = roles[ROLE_REMOVER].name,
      .rules = roles[ROLE_REMOVER].rules, .nrules = *roles[ROLE_REMOVER].nrules,
      .debug = (c->flags & REMOVER_SANDBOX_DEBUG) != 0,
      .landlock = true, .paths = dirs, .npaths = c->nfiles,
      .nofile = 16, .no_file_writes = true,
    };
    sandbox_enter (&spec);
  }
}

int
remover_main (void)
{
  static struct remover_config cfg;
  char buf[64];
  sigset_t mask;
  uint32_t i;
  ssize_t n;
  int null;

  /* The supervisor's start blocks SIGTERM, SIGINT and SIGHUP (kept
   * across the exec), which a terminal sends to the whole process group:
   * blocked here too, with SIGQUIT, so that we outlive the supervisor's
   * own stop.  Unlike the other roles, no death signal: the supervisor's
   * end is what we wait for. */
  sigemptyset (&mask);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGHUP);
  sigaddset (&mask, SIGQUIT);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  signal (SIGPIPE, SIG_IGN);
  (void) prctl (PR_SET_NAME, roles[ROLE_REMOVER].comm);
  log_init (roles[ROLE_REMOVER].name, false);
  if (fcntl (CHILD_FD_PEER, F_GETFD) == -1 || fcntl (CHILD_FD_CONFIG, F_GETFD) == -1)
    fatal ("started without its file descriptors: this program is run by "
           "nbdcurld itself, not by hand");

  config_recv_remover (CHILD_FD_CONFIG, &cfg);
  if (close (CHILD_FD_CONFIG) == -1)
    fatal_errno ("close configuration pipe");
  log_init ("remover", (cfg.flags & REMOVER_VERBOSE) != 0);
  /* Nothing of whoever started nbdcurld but standard error: not --run's
   * or a terminal's input, not the standard output a caller waits on. */
  null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null == -1 || dup2 (null, STDIN_FILENO) == -1 || dup2 (null, STDOUT_FILENO) == -1)
    fatal_errno ("/dev/null");
  close (null);
  remover_sandbox (&cfg);

  while ((n = read (CHILD_FD_PEER, buf, sizeof buf)) != 0)
    if (n == -1 && errno != EINTR)
      break;
  for (i = 0; i < cfg.nfiles; i++) {
    const struct removed_file *f = &cfg.files[i];
    struct stat st;
    if (lstat (f->path, &st) == -1)
      continue;                         /* gone already */
    if ((uint64_t) st.st_dev != f->dev || (uint64_t) st.st_ino != f->ino)
      notice ("%s was replaced while nbdcurld ran: left as it is", f->path);
    else if (unlink (f->path) == -1)
      warn_errno ("cannot remove %s", f->path);
  }
  return EXIT_SUCCESS;
}
