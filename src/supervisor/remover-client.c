/*
 * remover-client.c: the supervisor's side of the file remover
 * (src/remover/remover.c).
 *
 * Apart because it is the one thing the supervisor starts as root for
 * after its own exit, and deciding what it gets (which files, by device
 * and inode) means reading directories' modes as the user-to-be would.
 * It owns the files handed over, the remover's process and its lifeline.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "children.h"
#include "config.h"
#include "config-wire.h"
#include "launcher-client.h"
#include "limits-strings.h"
#include "log.h"
#include "remover-client.h"
#include "sockets.h"

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

/* The user the supervisor becomes (start_remover). */
static uid_t child_uid;
static gid_t child_gid;

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

bool
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
void
start_remover (const struct options *o, uid_t uid, gid_t gid)
{
  int fds[2];

  child_uid = uid;
  child_gid = gid;
  if (sockets_unix_path () && !sockets_private_dir ())
    hand_to_remover (sockets_unix_path ());
  if (o->pidfile)
    hand_to_remover (o->pidfile);
  if (to_remove.nfiles == 0)
    return;
  to_remove.flags = (o->verbose ? REMOVER_VERBOSE : 0) |
                    (o->sandbox_debug ? REMOVER_SANDBOX_DEBUG : 0);
  children_open_self ();
  if (pipe2 (fds, O_CLOEXEC) == -1)
    fatal_errno ("pipe for the file remover");
  remover_pid = start_child (ROLE_REMOVER, fds[0], NULL, 0, send_remover_config,
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
void
finish_remover (void)
{
  if (remover_fd >= 0)
    close (remover_fd);
  remover_fd = -1;
  while (remover_pid > 0 && waitpid (remover_pid, NULL, 0) == -1 && errno == EINTR)
    ;
  remover_pid = -1;
}

bool
remover_reaped (pid_t pid)
{
  if (pid != remover_pid)
    return false;
  remover_pid = -1;
  warn ("the file remover (process %d) ended early: the files it was to "
        "remove at exit will be left", (int) pid);
  return true;
}
