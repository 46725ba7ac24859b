/*
 * sandbox.c: sandbox_enter, the layers every role applies to itself (the
 * order and the reasons are in sandbox.h), and the helpers the supervisor
 * and the fetcher call before it.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <cap-ng.h>

#include "file-read.h"
#include "limits-sandbox.h"
#include "log.h"
#include "sandbox.h"
#include "wire.h"

/* ---- 1. Namespaces ---- */

static int
write_proc_file (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  ssize_t n;

  if (fd == -1)
    return -1;
  n = write (fd, text, strlen (text));
  close (fd);
  return n == (ssize_t) strlen (text) ? 0 : -1;
}

/* The user namespace a child makes at its start (sandbox_early_start),
 * and the namespaces this process (or the launcher it was forked from:
 * these are copied by the fork) has made since. */
static enum { EARLY_NOT_TRIED, EARLY_NOT_NEEDED, EARLY_MADE, EARLY_REFUSED } early_userns;
static int early_userns_errno;
static int namespaces_made;             /* CLONE_NEW* */

/* Unprivileged: a user namespace of our own gives the right to make the
 * others inside it (sandbox_enter).  It is made here, at the child's
 * start, because its identity maps are written through /proc/self, which
 * only a dumpable process may open, and the child goes undumpable right
 * after, before it holds any secret.  Map our own ids only, so files keep
 * their owners. */
static void
make_user_namespace (void)
{
  uid_t uid = getuid ();
  gid_t gid = getgid ();
  char map[64];

  if (early_userns != EARLY_NOT_TRIED)
    return;                     /* a fetcher forked in its launcher's */
  if (geteuid () == 0) {
    early_userns = EARLY_NOT_NEEDED;   /* root makes the others directly */
    return;
  }
  if (unshare (CLONE_NEWUSER) == -1) {
    early_userns = EARLY_REFUSED;
    early_userns_errno = errno;
    return;
  }
  early_userns = EARLY_MADE;
  snprintf (map, sizeof map, "%u %u 1\n", (unsigned) uid, (unsigned) uid);
  if (write_proc_file ("/proc/self/uid_map", map) == -1)
    fatal_errno ("sandbox: namespaces: cannot write the new user namespace's uid_map");
  /* The kernel refuses a gid map from an unprivileged process until
   * setgroups is disabled in the namespace (so groups cannot be shed to
   * escape a "deny" ACL). */
  if (write_proc_file ("/proc/self/setgroups", "deny") == -1)
    fatal_errno ("sandbox: namespaces: cannot write the new user namespace's setgroups");
  snprintf (map, sizeof map, "%u %u 1\n", (unsigned) gid, (unsigned) gid);
  if (write_proc_file ("/proc/self/gid_map", map) == -1)
    fatal_errno ("sandbox: namespaces: cannot write the new user namespace's gid_map");
}

static void
enter_namespaces (const struct sandbox_spec *s)
{
  int wanted = 0, flags;

  if (s->new_netns)
    wanted |= CLONE_NEWNET;     /* no interface at all: nothing to reach */
  if (s->new_ipc_uts)
    wanted |= CLONE_NEWIPC | CLONE_NEWUTS;  /* no shared SysV IPC, own host name */
  /* A fetcher forked by the launcher is in the launcher's IPC and UTS
   * namespaces already, and has no capability left to make its own. */
  flags = wanted & ~namespaces_made;
  if (wanted != 0 && flags == 0) {
    debug ("sandbox: namespaces: the launcher's user, IPC and UTS namespaces "
           "(shared with the other fetchers it forks)");
    return;
  }
  if (flags == 0)
    return;

  const char *names = (flags & CLONE_NEWNET)
    ? ((flags & CLONE_NEWIPC) ? "network, IPC and UTS" : "network") : "IPC and UTS";
  if (unshare (flags) == 0) {
    namespaces_made |= flags;
    debug ("sandbox: namespaces: new %s%s namespaces",
           early_userns == EARLY_MADE ? "user, " : "", names);
    return;
  }
  if (early_userns == EARLY_REFUSED)
    debug ("sandbox: namespaces: not permitted to unprivileged users here (%s): "
           "going on without", strerror (early_userns_errno));
  else
    debug ("sandbox: namespaces: new %s namespaces not permitted (%s): going on without",
           names, strerror (errno));
}

/* ---- 2. Resource limits ---- */

static void
set_limit (int resource, const char *name, rlim_t value)
{
  struct rlimit rl;

  if (getrlimit (resource, &rl) == -1)
    fatal_errno ("sandbox: getrlimit %s", name);
  /* Never raise: an administrator's lower limit stays. */
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < value)
    value = rl.rlim_max;
  rl.rlim_cur = rl.rlim_max = value;
  if (setrlimit (resource, &rl) == -1)
    fatal_errno ("sandbox: setrlimit %s %llu", name, (unsigned long long) value);
}

static void
set_rlimits (const struct sandbox_spec *s)
{
  struct stat st;
  bool fsize = false;

  /* A core file would hold clients' data and URLs with credentials. */
  set_limit (RLIMIT_CORE, "RLIMIT_CORE", 0);
  if (s->no_file_writes) {
    /* RLIMIT_FSIZE counts writes to regular files, stderr included: with
     * the log redirected to a file, a limit of 0 would kill the process
     * at its first log line. */
    if (fstat (STDERR_FILENO, &st) == 0 && S_ISREG (st.st_mode))
      debug ("sandbox: rlimits: standard error is a file: RLIMIT_FSIZE left as is");
    else {
      set_limit (RLIMIT_FSIZE, "RLIMIT_FSIZE", 0);
      fsize = true;
    }
  }
  if (s->nofile)
    set_limit (RLIMIT_NOFILE, "RLIMIT_NOFILE", s->nofile);
  if (s->nofile)
    debug ("sandbox: rlimits: no core files%s, at most %llu file descriptors",
           fsize ? ", no file writes" : "", (unsigned long long) s->nofile);
  else
    debug ("sandbox: rlimits: no core files%s", fsize ? ", no file writes" : "");
}

/* ---- 3. and 4. Credentials and capabilities ---- */

static uint64_t
keep_mask (const struct sandbox_spec *s)
{
  uint64_t mask = 0;
  size_t i;

  for (i = 0; i < s->nkeep_caps; i++)
    mask |= UINT64_C (1) << s->keep_caps[i];
  return mask;
}

static void
select_kept (const struct sandbox_spec *s, capng_type_t type)
{
  size_t i;

  for (i = 0; i < s->nkeep_caps; i++)
    if (capng_update (CAPNG_ADD, type, (unsigned) s->keep_caps[i]) == -1)
      fatal ("sandbox: capabilities: cannot keep capability %d", s->keep_caps[i]);
}

static unsigned
last_cap (void)
{
  unsigned cap = CAP_LAST_CAP;

  /* The running kernel may know more than our headers. */
  while (prctl (PR_CAPBSET_READ, cap + 1, 0, 0, 0) >= 0)
    cap++;
  return cap;
}

/* What the process holds now, read from the kernel, not from libcap-ng's
 * idea of it. */
static void
check_capabilities (const struct sandbox_spec *s, bool bounding)
{
  struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct data[2];
  uint64_t keep = keep_mask (s), eff, perm, inh;
  unsigned cap, last = last_cap ();

  if (syscall (SYS_capget, &hdr, data) == -1)
    fatal_errno ("sandbox: capget");
  eff = data[0].effective | (uint64_t) data[1].effective << 32;
  perm = data[0].permitted | (uint64_t) data[1].permitted << 32;
  inh = data[0].inheritable | (uint64_t) data[1].inheritable << 32;
  if ((perm & keep) != keep)
    fatal ("sandbox: capabilities to keep were lost (permitted %#llx, wanted %#llx)",
           (unsigned long long) perm, (unsigned long long) keep);
  if ((eff & ~keep) || (perm & ~keep) || inh)
    fatal ("sandbox: capabilities still held after clearing them "
           "(effective %#llx, permitted %#llx, inheritable %#llx)",
           (unsigned long long) eff, (unsigned long long) perm, (unsigned long long) inh);
  for (cap = 0; cap <= last; cap++) {
    if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) == 1)
      fatal ("sandbox: ambient capability %u still set", cap);
    if (bounding && cap < 64 &&
        prctl (PR_CAPBSET_READ, cap, 0, 0, 0) != (int) ((keep >> cap) & 1))
      fatal ("sandbox: capability %u %s the bounding set", cap,
             (keep >> cap) & 1 ? "missing from" : "still in");
  }
}

/* The parent-death signal (PR_SET_PDEATHSIG) and the parent it was set
 * against.  The kernel clears the signal whenever the process's user,
 * group or capabilities change other than by dropping them, so
 * drop_privileges sets it again after its changes (the supervisor's
 * --exit-with-parent, a child's death with the supervisor). */
static int death_signal;
static pid_t death_parent;

void
sandbox_parent_death (int sig)
{
  death_signal = sig;
  death_parent = getppid ();
  if (prctl (PR_SET_PDEATHSIG, sig) == -1)
    fatal_errno ("prctl PR_SET_PDEATHSIG");
}

static void
restore_parent_death (void)
{
  if (death_signal == 0)
    return;
  if (prctl (PR_SET_PDEATHSIG, death_signal) == -1)
    fatal_errno ("sandbox: prctl PR_SET_PDEATHSIG (again, after the change of user)");
  /* A parent that died while the signal was cleared sent nothing: we
   * were handed to another process meanwhile.  Act as the signal would
   * have (the supervisor reads it from its signalfd). */
  if (getppid () != death_parent) {
    debug ("sandbox: the parent exited while the user changed: signal %d", death_signal);
    raise (death_signal);
  }
}

static void
drop_privileges (const struct sandbox_spec *s)
{
  bool was_root = geteuid () == 0;
  bool bounding;

  if (capng_get_caps_process () == -1)
    fatal ("sandbox: capabilities: cannot read this process's capabilities");

  /* The bounding set (what an exec could ever give back) and the ambient
   * set go first: dropping from the bounding set needs CAP_SETPCAP, which
   * root loses when it changes its uid below.  Without CAP_SETPCAP (not
   * root, no user namespace) the bounding set cannot be changed, and no
   * new privileges (below) makes it moot. */
  bounding = capng_have_capability (CAPNG_EFFECTIVE, CAP_SETPCAP);
  capng_clear (CAPNG_SELECT_ALL);
  select_kept (s, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET);
  if (bounding && capng_apply (CAPNG_SELECT_BOUNDS) != 0)
    fatal ("sandbox: capabilities: cannot clear the bounding set");
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 && errno != EINVAL)
    fatal_errno ("sandbox: capabilities: cannot clear the ambient set");

  if (was_root && s->change_user) {
    gid_t rg, eg, sg;
    uid_t ru, eu, su;

    /* Groups first: root may still change them. */
    if (setgroups (0, NULL) == -1)
      fatal_errno ("sandbox: cannot drop supplementary groups");
    if (setresgid (s->gid, s->gid, s->gid) == -1)
      fatal_errno ("sandbox: cannot change to group %u", (unsigned) s->gid);
    if (setresuid (s->uid, s->uid, s->uid) == -1)
      fatal_errno ("sandbox: cannot change to user %u", (unsigned) s->uid);
    if (getresgid (&rg, &eg, &sg) == -1 || getresuid (&ru, &eu, &su) == -1 ||
        rg != s->gid || eg != s->gid || sg != s->gid ||
        ru != s->uid || eu != s->uid || su != s->uid || getgroups (0, NULL) != 0)
      fatal ("sandbox: the change to user %u group %u did not stick",
             (unsigned) s->uid, (unsigned) s->gid);
    if (s->uid != 0 && setresuid (0, 0, 0) != -1)
      fatal ("sandbox: could become root again after changing to user %u", (unsigned) s->uid);
    debug ("sandbox: user %u, group %u, no supplementary groups", (unsigned) s->uid,
           (unsigned) s->gid);
  }
  else if (was_root)
    debug ("sandbox: stays root (capabilities limited below)");
  else
    debug ("sandbox: not started as root: stays user %u, group %u",
           (unsigned) getuid (), (unsigned) getgid ());

  /* Effective, permitted and inheritable sets: the change of uid cleared
   * them already for root; this covers every other case. */
  /* CAPNG_SELECT_CAPS, not _BOTH: libcap-ng's "both" includes the
   * bounding set, which would be applied again (and emptied). */
  capng_clear (CAPNG_SELECT_CAPS);
  select_kept (s, CAPNG_EFFECTIVE | CAPNG_PERMITTED);
  if (capng_apply (CAPNG_SELECT_CAPS) != 0)
    fatal ("sandbox: capabilities: cannot clear the capability sets");
  check_capabilities (s, bounding);
  restore_parent_death ();
  debug ("sandbox: capabilities: %s, ambient set cleared, bounding set %s",
         s->nkeep_caps ? "all cleared but the ones kept" : "all cleared",
         bounding ? (s->nkeep_caps ? "reduced to them" : "cleared")
                      : "unchanged (not permitted; no effect with no_new_privs)");
}

/* ---- Everything, in order ---- */

void
sandbox_enter (const struct sandbox_spec *s)
{
  struct sandbox_landlock_result ll = { 0 };

  enter_namespaces (s);
  set_rlimits (s);
  drop_privileges (s);

  /* No exec can ever give privileges back (setuid files, file
   * capabilities), and Landlock and seccomp need it unless privileged. */
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
    fatal_errno ("sandbox: prctl PR_SET_NO_NEW_PRIVS");
  /* Undumpable since sandbox_early_start; again, because a change of
   * user above resets it to fs.suid_dumpable. */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
    fatal_errno ("sandbox: prctl PR_SET_DUMPABLE");

  if (s->landlock) {
    sandbox_landlock (s, &ll);
    if (ll.abi > 0)
      debug ("sandbox: Landlock ABI %d: files: %zu path%s allowed; TCP: %s; %s", ll.abi,
             s->npaths, s->npaths == 1 ? "" : "s",
             !ll.net ? "not restricted (ABI < 4)"
             : s->any_connect ? "bind refused, connect to any port"
             : s->nports == 0 ? "bind and connect refused"
             : "bind refused, connect to the listed ports only",
             ll.scoped ? "signals and abstract Unix sockets scoped"
                       : "signals not scoped (ABI < 6)");
  }
  else
    debug ("sandbox: Landlock: not used in this role");

  sandbox_seccomp (s->role, s->rules, s->nrules, s->debug);
}

/* ---- Before any secret: each role's first lines ---- */

/* The value of a "Name:\tvalue" line of a /proc status file, through the
 * bounded reader.  Returns 0, or -1 (no such file or line, or too long). */
static int
proc_status_field (const char *path, const char *name, char *value, size_t value_size)
{
  static char text[PROC_STATUS_MAX_BYTES];
  const size_t name_len = strlen (name);
  struct reader r;
  ssize_t len;
  int fd = open (path, O_RDONLY | O_CLOEXEC);

  if (fd == -1)
    return -1;
  len = fd_read_all (fd, text, sizeof text);
  close (fd);
  if (len == -1)
    return -1;                  /* an error, or more than we expect */
  reader_init (&r, text, (size_t) len);
  while (reader_remaining (&r) > 0) {
    const uint8_t *line, *rest = r.data + r.pos;
    const uint8_t *end = memchr (rest, '\n', reader_remaining (&r));
    size_t line_len = end ? (size_t) (end - rest) : reader_remaining (&r);

    if (reader_get_span (&r, &line, line_len) == -1 ||
        (end && reader_skip (&r, 1) == -1))
      return -1;
    if (line_len > name_len + 1 && memcmp (line, name, name_len) == 0 &&
        line[name_len] == ':') {
      size_t i = name_len + 1, j = 0;
      while (i < line_len && (line[i] == '\t' || line[i] == ' '))
        i++;
      while (i < line_len && j + 1 < value_size)
        value[j++] = (char) line[i++];
      value[j] = '\0';
      return i == line_len ? 0 : -1;
    }
  }
  return -1;
}

/* The process tracing us (TracerPid), 0 for none; exits if unreadable. */
static long
tracer_of_self (void)
{
  char value[32], *end;
  long pid;

  if (proc_status_field ("/proc/self/status", "TracerPid", value, sizeof value) == -1)
    fatal ("sandbox: cannot read TracerPid in /proc/self/status (is /proc mounted?)");
  errno = 0;
  pid = strtol (value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || pid < 0)
    fatal ("sandbox: unexpected TracerPid in /proc/self/status: \"%s\"", value);
  return pid;
}

/* Root (the administrator's strace or gdb) may read any process anyway. */
static bool
tracer_is_root (long pid)
{
  char path[64], value[64];
  unsigned real, effective, saved, fs;

  snprintf (path, sizeof path, "/proc/%ld/status", pid);
  return proc_status_field (path, "Uid", value, sizeof value) == 0 &&
         sscanf (value, "%u %u %u %u", &real, &effective, &saved, &fs) == 4 &&
         real == 0 && effective == 0 && saved == 0 && fs == 0;
}

void
sandbox_early_start (const char *who, bool user_namespace)
{
  long tracer;

  if (user_namespace)
    make_user_namespace ();
  /* From here on no other process of our user may attach with ptrace or
   * open our memory through /proc (process_vm_readv, /proc/PID/mem),
   * before we read any secret. */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
    fatal_errno ("sandbox: prctl PR_SET_DUMPABLE");
  /* A tracer that attached in the moment since our exec stays attached:
   * stop before any secret reaches us.  Read again after looking at the
   * tracer, so that a tracer that ended and whose pid a root process took
   * meanwhile is not mistaken for root. */
  tracer = tracer_of_self ();
  if (tracer != 0 && !(tracer_is_root (tracer) && tracer_of_self () == tracer))
    fatal ("%s is traced by process %ld, which attached before it could stop "
           "that: stopping before it reads any secret.  A program of the same "
           "user did this: give nbdcurld a user of its own (--user; the "
           "package's user nbdcurld), and do not run it under a debugger as "
           "another user than root", who, tracer);
}

/* ---- Before a fetcher's sandbox ---- */

/* Load the NSS modules the hosts line of nsswitch.conf names: glibc loads
 * them at the first lookup, with mmap(PROT_EXEC), which the fetcher's
 * policy refuses.  files and dns are inside glibc (2.34 and later). */
static void
preload_nss_modules (void)
{
  FILE *f = fopen ("/etc/nsswitch.conf", "re");
  char line[1024];

  if (f == NULL)
    return;
  while (fgets (line, sizeof line, f)) {
    char *p = line, *word, *save = NULL;

    while (isspace ((unsigned char) *p))
      p++;
    if (strncmp (p, "hosts:", 6) != 0)
      continue;
    for (word = strtok_r (p + 6, " \t\n", &save); word; word = strtok_r (NULL, " \t\n", &save)) {
      char lib[128];
      if (word[0] == '[' || word[0] == '#')
        continue;   /* [NOTFOUND=return] actions, comments */
      if (strcmp (word, "files") == 0 || strcmp (word, "dns") == 0)
        continue;
      snprintf (lib, sizeof lib, "libnss_%s.so.2", word);
      if (dlopen (lib, RTLD_NOW | RTLD_GLOBAL) == NULL)
        debug ("sandbox: cannot preload %s: host name lookups through it will fail", lib);
      else
        debug ("sandbox: preloaded %s", lib);
    }
  }
  fclose (f);
}

void
sandbox_prepare_fetcher (bool network)
{
  /* Time zone: OpenSSL and libcurl format dates with localtime(); load
   * /etc/localtime now (Landlock still lets glibc re-check it). */
  tzset ();
  if (network) {
    /* libcurl resolves names in threads: glibc's first thread start needs
     * rt_sigaction, which the fetcher's policy refuses. */
    sandbox_seccomp_prepare_threads ();
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
    struct addrinfo *res = NULL;

    preload_nss_modules ();
    /* One lookup now: glibc reads nsswitch.conf and resolv.conf and sets
     * up its resolver state in this thread, before the filter.  The
     * answer does not matter. */
    if (getaddrinfo ("localhost", "80", &hints, &res) == 0)
      freeaddrinfo (res);
  }
}

/* Paths a network fetcher reads once sandboxed.  The system CA store: the
 * bundle and hashed directory, and where their symlinks point. */
const struct sandbox_path sandbox_network_paths[] = {
  { "/etc/hosts", SANDBOX_READ },
  { "/etc/resolv.conf", SANDBOX_READ },
  { "/etc/nsswitch.conf", SANDBOX_READ },
  { "/etc/host.conf", SANDBOX_READ },
  { "/etc/gai.conf", SANDBOX_READ },
  { "/etc/localtime", SANDBOX_READ },
  { "/etc/ssl/certs", SANDBOX_READ },
  { "/etc/ssl/openssl.cnf", SANDBOX_READ },
  { "/usr/lib/ssl", SANDBOX_READ },                 /* Debian's OPENSSLDIR */
  { "/usr/share/ca-certificates", SANDBOX_READ },
  { "/usr/local/share/ca-certificates", SANDBOX_READ },
  { "/etc/pki/tls", SANDBOX_READ },                 /* Fedora, RHEL */
  { "/etc/pki/ca-trust", SANDBOX_READ },
  { "/var/lib/ca-certificates", SANDBOX_READ },     /* openSUSE */
};
const size_t sandbox_network_npaths = sizeof sandbox_network_paths / sizeof sandbox_network_paths[0];

/* ---- For the supervisor ---- */

static bool
parse_id (const char *s, unsigned long *id)
{
  char *end;

  if (!isdigit ((unsigned char) s[0]))
    return false;
  errno = 0;
  *id = strtoul (s, &end, 10);
  return errno == 0 && *end == '\0' && *id < (unsigned long) (uid_t) -1;
}

const char *
sandbox_default_user (void)
{
  /* nbdcurld's own user where the package made one: "nobody" is shared
   * with other daemons, which could then trace nbdcurld's processes in
   * the moment after each exec (SECURITY.md). */
  return getpwnam (DEFAULT_USER) != NULL ? DEFAULT_USER : FALLBACK_USER;
}

int
sandbox_lookup_user (const char *user, const char *group, uid_t *uid, gid_t *gid,
                     char *err, size_t errlen)
{
  const struct passwd *pw;
  unsigned long id;

  if (user == NULL)
    user = sandbox_default_user ();
  if (parse_id (user, &id)) {
    *uid = (uid_t) id;
    pw = getpwuid (*uid);
  }
  else {
    pw = getpwnam (user);
    if (pw == NULL) {
      snprintf (err, errlen, "--user %s: no such user (give another with --user, "
                "or a number)", user);
      return -1;
    }
    *uid = pw->pw_uid;
  }
  if (group == NULL) {
    if (pw == NULL) {
      snprintf (err, errlen, "--user %s has no entry in the user database: give "
                "its group with --group", user);
      return -1;
    }
    *gid = pw->pw_gid;
  }
  else if (parse_id (group, &id))
    *gid = (gid_t) id;
  else {
    const struct group *gr = getgrnam (group);
    if (gr == NULL) {
      snprintf (err, errlen, "--group %s: no such group (give another with --group, "
                "or a number)", group);
      return -1;
    }
    *gid = gr->gr_gid;
  }
  if (*uid == 0 || *gid == 0) {
    snprintf (err, errlen, "--user and --group must not be root: the children "
              "would keep full access to the system");
    return -1;
  }
  return 0;
}
