/*
 * unit-seccomp.c: every role's real compiled filter (policy/ROLE.policy)
 * kills the calls it must refuse, lets through the calls the role needs,
 * fails the ones marked errno with that errno, kills x32 calls, and in
 * debug mode names the blocked call.
 *
 * Each case runs in a forked child that loads the filter and then makes
 * one call with harmless arguments (bad pointers, bad descriptors), so
 * that a filter which wrongly allows it does no harm: the call fails, the
 * child exits 0, and the test reports that it was not killed.  TAP output.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netinet/in.h>

#include "log.h"
#include "policy.h"
#include "sandbox.h"

#define X32_BIT 0x40000000L

struct role {
  const char *name;
  const struct policy_rule *rules;
  const size_t *nrules;
};

static const struct role frontend = { "front-end", frontend_policy_rules, &frontend_policy_nrules };
static const struct role fetcher = { "fetcher", fetcher_policy_rules, &fetcher_policy_nrules };
static const struct role supervisor = { "supervisor", supervisor_policy_rules, &supervisor_policy_nrules };
static const struct role keyholder = { "key holder", keyholder_policy_rules, &keyholder_policy_nrules };
/* The fetcher launcher: its own entries and a fetcher's of either kind,
 * which the fetchers it forks run under. */
static const struct role launcher = { "launcher", launcher_policy_rules, &launcher_policy_nrules };
static const struct role remover = { "file remover", remover_policy_rules, &remover_policy_nrules };
/* A fetcher of an export with unix-socket-path= (fetcher-unix.policy). */
static const struct role fetcher_unix = { "fetcher (unix-socket-path=)", fetcher_unix_policy_rules,
                                          &fetcher_unix_policy_nrules };

/* One system call with its arguments. */
struct call {
  const char *what;
  long nr;
  long a[6];
};

#define CALL(nr, ...) { #nr " " #__VA_ARGS__, nr, { __VA_ARGS__ } }

/* Refused in every role (the supervisor's filter is inherited by every
 * child, so it refuses these too). */
static const struct call forbidden_everywhere[] = {
  CALL (SYS_ptrace, -1, 0, 0, 0),
  CALL (SYS_process_vm_readv, 0, 0, 0, 0, 0, 0),
  CALL (SYS_process_vm_writev, 0, 0, 0, 0, 0, 0),
  CALL (SYS_mount, 0, 0, 0, 0, 0),
  CALL (SYS_umount2, 0, 0),
  CALL (SYS_pivot_root, 0, 0),
  CALL (SYS_chroot, 0),
  CALL (SYS_setns, -1, 0),
  CALL (SYS_init_module, 0, 0, 0),
  CALL (SYS_finit_module, -1, 0, 0),
  CALL (SYS_delete_module, 0, 0),
  CALL (SYS_bpf, -1, 0, 0),
  CALL (SYS_perf_event_open, 0, 0, -1, -1, 0),
  CALL (SYS_keyctl, -1, 0, 0, 0, 0),
  CALL (SYS_add_key, 0, 0, 0, 0, 0),
  CALL (SYS_request_key, 0, 0, 0, 0),
  CALL (SYS_userfaultfd, -1),
  CALL (SYS_kexec_load, 0, 0, 0, -1),
  CALL (SYS_kexec_file_load, -1, -1, 0, 0, -1),
  CALL (SYS_open_by_handle_at, -1, 0, 0),
  CALL (SYS_iopl, 99),
  CALL (SYS_ioperm, 0, 0, 0),
  CALL (SYS_swapon, 0, 0),
  CALL (SYS_acct, 0),
  CALL (SYS_settimeofday, 0, 0),
  CALL (SYS_clock_settime, -1, 0),
  CALL (SYS_adjtimex, 0),
  /* Only the four namespaces the children ask for. */
  CALL (SYS_unshare, CLONE_NEWNS),
  CALL (SYS_unshare, CLONE_NEWPID),
  CALL (SYS_clone, CLONE_NEWUSER | SIGCHLD, -1, 0, 0, 0),
};

/* Refused in the front-end, the fetchers and the launcher, on top of the
 * above: no program, no plain process, no identity change, no listening,
 * nothing executable. */
static const struct call forbidden_children[] = {
  CALL (SYS_execve, 0, 0, 0),
  CALL (SYS_execveat, -1, 0, 0, 0, 0),
  CALL (SYS_fork),
  CALL (SYS_vfork),
  CALL (SYS_clone, SIGCHLD, 0, 0, 0, 0),
  CALL (SYS_setuid, 0),
  CALL (SYS_setresuid, -1, -1, -1),
  CALL (SYS_listen, -1, 0),
  CALL (SYS_bind, -1, 0, 0),
  CALL (SYS_socket, AF_PACKET, SOCK_RAW, 0),
  CALL (SYS_mmap, 0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
  CALL (SYS_mprotect, 0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC),
  CALL (SYS_ioctl, 0, 0x5412 /* TIOCSTI */, 0),
  CALL (SYS_kill, 1, 0),
  CALL (SYS_memfd_create, 0, 0),
  CALL (SYS_open, 0, 0),
  /* Only splice moves data between descriptors: vmsplice would put user
   * memory into a pipe, where a later change alters what is sent. */
  CALL (SYS_vmsplice, -1, 0, 0, 0),
  CALL (SYS_tee, -1, -1, 0, 0),
  CALL (SYS_sendfile, -1, -1, 0, 0),
  CALL (SYS_copy_file_range, -1, 0, -1, 0, 0, 0),
};

/* Refused in the front-end and the fetchers, which enter their sandbox
 * before their own filter: the calls that do so (the launcher allows
 * them for the fetchers it forks, under their filters). */
static const struct call forbidden_sandboxed[] = {
  CALL (SYS_unshare, 0),
  CALL (SYS_capset, 0, 0),
  CALL (SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0),
  CALL (SYS_seccomp, -1, 0, 0),
  CALL (SYS_landlock_create_ruleset, 0, 0, 1),
};

/* Refused in the launcher, on top of forbidden_children: a process that
 * is not the supervisor's or shares memory, any new namespace (its
 * fetchers stay in the launcher's), another way to a filter, a directory
 * made writable. */
static const struct call forbidden_launcher[] = {
  CALL (SYS_clone, CLONE_PARENT | CLONE_VM, 0, 0, 0, 0),
  CALL (SYS_clone, CLONE_PARENT | CLONE_NEWNET, 0, 0, 0, 0),
  CALL (SYS_unshare, CLONE_NEWNET),
  CALL (SYS_unshare, 0),
  CALL (SYS_unshare, CLONE_NEWIPC | CLONE_NEWUTS),
  CALL (SYS_prctl, PR_SET_SECCOMP, 0, 0, 0, 0),
  CALL (SYS_openat, AT_FDCWD, 0, O_RDWR | O_CREAT | O_DIRECTORY, 0600),
  /* No directory is listed: --capath is read by the supervisor. */
  CALL (SYS_getdents64, -1, 0, 0),
};

/* The file remover (root's uid): nothing but looking at and removing the
 * files it was given. */
static const struct call forbidden_remover[] = {
  CALL (SYS_openat, AT_FDCWD, 0, O_RDONLY),
  CALL (SYS_socket, AF_INET, SOCK_STREAM, 0),
  CALL (SYS_connect, -1, 0, 0),
  CALL (SYS_rename, 0, 0),
  CALL (SYS_chmod, 0, 0),
  CALL (SYS_chown, 0, 0, 0),
  CALL (SYS_mmap, 0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
  CALL (SYS_clone, CLONE_THREAD, 0, 0, 0, 0),
};

static const struct call allowed_remover[] = {
  CALL (SYS_read, -1, 0, 0),
  CALL (SYS_newfstatat, AT_FDCWD, 0, 0, AT_SYMLINK_NOFOLLOW),
  CALL (SYS_unlink, 0),
};

static const struct call allowed_launcher[] = {
  CALL (SYS_recvmsg, -1, 0, 0),
  CALL (SYS_sendmsg, -1, 0, 0),
  CALL (SYS_poll, 0, 0, 0),
  /* Its clone, made to fail in the kernel (CLONE_SIGHAND needs
   * CLONE_VM), so that no process comes of the test. */
  CALL (SYS_clone, CLONE_PARENT | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | CLONE_SIGHAND, 0, 0, 0, 0),
  CALL (SYS_dup2, -1, -1),
  CALL (SYS_close_range, ~0U, ~0U, 0),
  CALL (SYS_getrandom, 0, 0, 0),     /* a fetcher's own stack guard */
  CALL (SYS_capset, 0, 0),
  CALL (SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0),
  CALL (SYS_landlock_create_ruleset, 0, 0, 1),
  CALL (SYS_seccomp, -1, 0, 0),
  /* And serving (fetcher.policy). */
  CALL (SYS_socket, AF_INET, SOCK_STREAM, 0),
  CALL (SYS_connect, -1, 0, 0),
  CALL (SYS_splice, -1, 0, -1, 0, 0, 0),
};

/* Refused in the front-end only: it opens nothing and connects nowhere. */
static const struct call forbidden_frontend[] = {
  CALL (SYS_openat, AT_FDCWD, 0, O_RDONLY),
  CALL (SYS_socket, AF_INET, SOCK_STREAM, 0),
  CALL (SYS_socket, AF_UNIX, SOCK_STREAM, 0),
  CALL (SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, 0),
  CALL (SYS_connect, -1, 0, 0),
  CALL (SYS_clone, CLONE_VM | CLONE_THREAD | CLONE_SIGHAND, 0, 0, 0, 0),
  CALL (SYS_newfstatat, AT_FDCWD, 0, 0, 0),
  /* Only SO_SNDBUF may be set: not SO_RCVBUF, not a TCP option. */
  CALL (SYS_setsockopt, -1, SOL_SOCKET, SO_RCVBUF, 0, 0),
  CALL (SYS_setsockopt, -1, IPPROTO_TCP, 1 /* TCP_NODELAY */, 0, 0),
};

/* Refused in the key holder: it answers on the socket it has, and
 * nothing else, not even what the front-end may do. */
static const struct call forbidden_keyholder[] = {
  CALL (SYS_openat, AT_FDCWD, 0, O_RDONLY),
  CALL (SYS_read, -1, 0, 0),
  CALL (SYS_accept4, -1, 0, 0, 0),
  CALL (SYS_socket, AF_UNIX, SOCK_STREAM, 0),
  CALL (SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, 0),
  CALL (SYS_splice, -1, 0, -1, 0, 0, 0),
  CALL (SYS_fcntl, -1, F_GETFL),
  CALL (SYS_setsockopt, -1, SOL_SOCKET, SO_SNDBUF, 0, 0),
  CALL (SYS_clone, CLONE_VM | CLONE_THREAD | CLONE_SIGHAND, 0, 0, 0, 0),
  CALL (SYS_futex, 0, 0, 0, 0, 0, 0),
};

/* Refused in fetchers: creating or truncating files, packet sockets,
 * ioctls but FIONREAD. */
static const struct call forbidden_fetcher[] = {
  CALL (SYS_openat, AT_FDCWD, 0, O_RDWR | O_CREAT, 0600),
  CALL (SYS_openat, AT_FDCWD, 0, O_RDWR | O_TRUNC),
  CALL (SYS_socket, AF_PACKET, SOCK_DGRAM, 0),
  CALL (SYS_ioctl, 0, 0x5401 /* TCGETS */, 0),
};

/* Allowed: the call must come back (its result does not matter). */
static const struct call allowed_frontend[] = {
  CALL (SYS_read, -1, 0, 0),
  CALL (SYS_write, -1, 0, 0),
  CALL (SYS_poll, 0, 0, 0),
  CALL (SYS_accept4, -1, 0, 0, 0),
  CALL (SYS_recvmsg, -1, 0, 0),
  CALL (SYS_sendmsg, -1, 0, 0),
  CALL (SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
  CALL (SYS_fcntl, -1, F_GETFL),
  CALL (SYS_fcntl, -1, F_DUPFD_CLOEXEC, 0),   /* the reserve descriptor */
  CALL (SYS_getpid),
  CALL (SYS_setsockopt, -1, SOL_SOCKET, SO_SNDBUF, 0, 0),
  CALL (SYS_restart_syscall),
  CALL (SYS_splice, -1, 0, -1, 0, 0, 0),   /* data pipe into a client */
  CALL (SYS_getrandom, 0, 0, 0),           /* TLS nonces and key shares */
  CALL (SYS_futex, 0, 0x81 /* FUTEX_WAKE_PRIVATE */, 1, 0, 0, 0),   /* GnuTLS's locks */
};

static const struct call allowed_keyholder[] = {
  CALL (SYS_recvmsg, -1, 0, 0),
  CALL (SYS_sendmsg, -1, 0, 0),
  CALL (SYS_write, -1, 0, 0),
  CALL (SYS_poll, 0, 0, 0),
  CALL (SYS_getrandom, 0, 0, 0),     /* ECDSA nonces, RSA blinding */
  CALL (SYS_getpid),
  CALL (SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
  CALL (SYS_restart_syscall),
};

static const struct call allowed_fetcher[] = {
  CALL (SYS_read, -1, 0, 0),
  CALL (SYS_pread64, -1, 0, 0, 0),
  CALL (SYS_poll, 0, 0, 0),
  CALL (SYS_openat, AT_FDCWD, 0, O_RDONLY),
  CALL (SYS_openat, AT_FDCWD, 0, O_RDWR),
  CALL (SYS_socket, AF_INET, SOCK_STREAM, 0),
  CALL (SYS_socket, AF_INET6, SOCK_DGRAM, 0),
  CALL (SYS_connect, -1, 0, 0),
  CALL (SYS_getrandom, 0, 0, 0),
  CALL (SYS_ioctl, -1, 0x541B /* FIONREAD */, 0),
  CALL (SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
  CALL (SYS_fdatasync, -1),
  CALL (SYS_splice, -1, 0, -1, 0, 0, 0),   /* socket or image into the data pipe */
};

static const struct call allowed_supervisor[] = {
  CALL (SYS_wait4, -1, 0, WNOHANG, 0),
  CALL (SYS_kill, 0x7fffffff, 0),
  CALL (SYS_pipe2, 0, 0),
  CALL (SYS_execveat, -1, 0, 0, 0, 0),
  CALL (SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, 0),
  CALL (SYS_unshare, 0),
  CALL (SYS_prctl, PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0),
};

static unsigned test_number;
static unsigned failures;

/* One TAP line: "ok N - ROLE: WHAT OUTCOME". */
static void
result (bool ok, const char *role, const char *what, const char *outcome)
{
  test_number++;
  printf ("%s %u - %s: %s %s\n", ok ? "ok" : "not ok", test_number, role, what, outcome);
  fflush (stdout);
  if (!ok)
    failures++;
}

/* Fork, load the role's filter, make the call; returns the wait status.
 * With err_fd >= 0, the child's stderr goes there.  *ret_errno gets the
 * errno the call returned (through the exit status) when it returned. */
static int
run_call (const struct role *r, const struct call *c, bool trap, int err_fd)
{
  int status;
  pid_t pid;

  fflush (stdout);
  pid = fork ();
  if (pid == -1) {
    perror ("fork");
    exit (EXIT_FAILURE);
  }
  if (pid == 0) {
    long rc;
    if (err_fd >= 0)
      dup2 (err_fd, STDERR_FILENO);
    log_init (r->name, false);          /* as child_start does */
    sandbox_seccomp (r->name, r->rules, *r->nrules, trap);
    rc = syscall (c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]);
    /* A fork that was let through: the new process leaves at once. */
    if (rc == 0 && (c->nr == SYS_fork || c->nr == SYS_vfork || c->nr == SYS_clone))
      _exit (100);
    /* Returned: exit with its errno (0 when it succeeded), < 100. */
    _exit (rc == -1 ? (errno < 100 ? errno : 99) : 0);
  }
  while (waitpid (pid, &status, 0) == -1)
    if (errno != EINTR) {
      perror ("waitpid");
      exit (EXIT_FAILURE);
    }
  return status;
}

/* A sanitizer build adds policy/sanitizer.policy to every role (the
 * runtime's own calls, such as open for /proc/self/maps): a call that file
 * allows cannot be expected to die there.  Release builds have no such
 * rules, so nothing is skipped in them. */
static bool
skipped_for_sanitizer (const struct role *r, const struct call *c, const char *outcome)
{
  size_t i;

  for (i = 0; i < *r->nrules; i++)
    if (r->rules[i].syscall == c->nr && strstr (r->rules[i].file, "sanitizer.policy")) {
      test_number++;
      printf ("ok %u - %s: %s %s # SKIP allowed by %s in sanitizer builds\n",
              test_number, r->name, c->what, outcome, r->rules[i].file);
      return true;
    }
  return false;
}

static bool
killed_by_sigsys (int status)
{
  return WIFSIGNALED (status) && WTERMSIG (status) == SIGSYS;
}

static void
expect_killed (const struct role *r, const struct call *calls, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++) {
    int status;
    if (skipped_for_sanitizer (r, &calls[i], "is killed"))
      continue;
    status = run_call (r, &calls[i], false, -1);
    result (killed_by_sigsys (status), r->name, calls[i].what, "is killed");
    if (!killed_by_sigsys (status))
      printf ("# wait status %#x\n", (unsigned) status);
  }
}

static void
expect_allowed (const struct role *r, const struct call *calls, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++) {
    int status = run_call (r, &calls[i], false, -1);
    bool ok = WIFEXITED (status) && WEXITSTATUS (status) < 100;
    result (ok, r->name, calls[i].what, "returns");
    if (!ok)
      printf ("# wait status %#x\n", (unsigned) status);
  }
}

static void
expect_errno (const struct role *r, const struct call *c, int e)
{
  int status = run_call (r, c, false, -1);
  bool ok = WIFEXITED (status) && WEXITSTATUS (status) == e;
  result (ok, r->name, c->what, "fails with the policy's errno");
  if (!ok)
    printf ("# wait status %#x, expected exit %d\n", (unsigned) status, e);
}

/* x32: the x86_64 number of getpid with the x32 bit, which the kernel
 * would otherwise run as x32's getpid. */
static void
expect_x32_killed (const struct role *r)
{
  const struct call c = { "x32 getpid", X32_BIT | SYS_getpid, { 0 } };
  int status = run_call (r, &c, false, -1);
  result (killed_by_sigsys (status), r->name, c.what, "is killed");
  /* Killed even in debug mode: a foreign ABI is never trapped. */
  status = run_call (r, &c, true, -1);
  result (killed_by_sigsys (status), r->name, c.what, "is killed in debug mode");
}

/* Debug mode: the blocked call is named, and the process exits 1. */
static void
expect_named (const struct role *r, const struct call *c, const char *name)
{
  char out[1024] = "", want[128];
  int pipefd[2], status;
  ssize_t n, got = 0;
  bool ok;

  if (skipped_for_sanitizer (r, c, "is named in debug mode"))
    return;
  if (pipe (pipefd) == -1) {
    perror ("pipe");
    exit (EXIT_FAILURE);
  }
  status = run_call (r, c, true, pipefd[1]);
  close (pipefd[1]);
  while (got < (ssize_t) sizeof out - 1 &&
         (n = read (pipefd[0], out + got, sizeof out - 1 - (size_t) got)) > 0)
    got += n;
  out[got] = '\0';
  close (pipefd[0]);
  snprintf (want, sizeof want, "nbdcurld: %s: error: sandbox: blocked system call %s (%ld)",
            r->name, name, c->nr);
  ok = WIFEXITED (status) && WEXITSTATUS (status) == 1 && strstr (out, want) != NULL;
  result (ok, r->name, name, "is named in debug mode");
  if (!ok)
    printf ("# wait status %#x, stderr: %s\n", (unsigned) status, out);
}

static void *
thread_main (void *arg)
{
  return arg;
}

/* The fetcher's libcurl starts resolver threads: pthread_create must work
 * under its filter (clone3 fails with ENOSYS, glibc falls back to clone
 * with thread flags), and must kill the front-end. */
static void
check_threads (const struct role *r, bool allowed)
{
  int status;
  pid_t pid;

  fflush (stdout);
  pid = fork ();
  if (pid == 0) {
    pthread_t t;
    void *ret;
    if (allowed)
      sandbox_seccomp_prepare_threads ();   /* as sandbox_prepare_fetcher does */
    sandbox_seccomp (r->name, r->rules, *r->nrules, false);
    if (pthread_create (&t, NULL, thread_main, &status) != 0 ||
        pthread_join (t, &ret) != 0 || ret != &status)
      _exit (2);
    _exit (0);
  }
  waitpid (pid, &status, 0);
  if (allowed)
    result (WIFEXITED (status) && WEXITSTATUS (status) == 0, r->name, "pthread_create",
            "works");
  else
    result (killed_by_sigsys (status), r->name, "pthread_create", "is killed");
}

#define N(a) (sizeof (a) / sizeof (a)[0])

int
main (void)
{
  static const struct call clone3 = CALL (SYS_clone3, 0, 0);
  static const struct call unix_socket = CALL (SYS_socket, AF_UNIX, SOCK_STREAM, 0);
  static const struct call netlink_socket = CALL (SYS_socket, AF_NETLINK, SOCK_RAW, 0);
  static const struct call ptrace_call = CALL (SYS_ptrace, -1, 0, 0, 0);
  static const struct call execve_call = CALL (SYS_execve, 0, 0, 0);
  static const struct call openat_call = CALL (SYS_openat, AT_FDCWD, 0, O_RDONLY);
  const struct role *children[] = { &frontend, &fetcher, &fetcher_unix, &keyholder, &remover };
  size_t i;

  for (i = 0; i < N (children); i++) {
    expect_killed (children[i], forbidden_everywhere, N (forbidden_everywhere));
    expect_killed (children[i], forbidden_children, N (forbidden_children));
    expect_killed (children[i], forbidden_sandboxed, N (forbidden_sandboxed));
    expect_x32_killed (children[i]);
  }
  expect_killed (&frontend, forbidden_frontend, N (forbidden_frontend));
  expect_killed (&fetcher, forbidden_fetcher, N (forbidden_fetcher));
  expect_killed (&fetcher_unix, forbidden_fetcher, N (forbidden_fetcher));
  expect_killed (&keyholder, forbidden_keyholder, N (forbidden_keyholder));
  expect_killed (&remover, forbidden_remover, N (forbidden_remover));
  expect_killed (&launcher, forbidden_everywhere, N (forbidden_everywhere));
  expect_killed (&launcher, forbidden_children, N (forbidden_children));
  expect_killed (&launcher, forbidden_launcher, N (forbidden_launcher));
  expect_x32_killed (&launcher);
  expect_killed (&supervisor, forbidden_everywhere, N (forbidden_everywhere));
  expect_x32_killed (&supervisor);

  expect_allowed (&frontend, allowed_frontend, N (allowed_frontend));
  expect_allowed (&fetcher, allowed_fetcher, N (allowed_fetcher));
  expect_allowed (&fetcher_unix, allowed_fetcher, N (allowed_fetcher));
  expect_allowed (&fetcher_unix, &unix_socket, 1);
  expect_allowed (&keyholder, allowed_keyholder, N (allowed_keyholder));
  expect_allowed (&remover, allowed_remover, N (allowed_remover));
  expect_allowed (&launcher, allowed_launcher, N (allowed_launcher));
  expect_allowed (&launcher, allowed_fetcher, N (allowed_fetcher));
  expect_allowed (&launcher, &unix_socket, 1);
  expect_allowed (&supervisor, allowed_supervisor, N (allowed_supervisor));

  expect_errno (&fetcher, &clone3, ENOSYS);
  expect_errno (&supervisor, &clone3, ENOSYS);
  expect_errno (&fetcher, &unix_socket, EACCES);
  expect_errno (&fetcher, &netlink_socket, EACCES);
  expect_errno (&fetcher_unix, &netlink_socket, EACCES);
  check_threads (&fetcher, true);
  check_threads (&frontend, false);
  check_threads (&keyholder, false);
  check_threads (&launcher, true);

  expect_named (&frontend, &ptrace_call, "ptrace");
  expect_named (&frontend, &openat_call, "openat");
  expect_named (&fetcher, &execve_call, "execve");
  expect_named (&keyholder, &openat_call, "openat");
  expect_named (&remover, &openat_call, "openat");
  expect_named (&launcher, &execve_call, "execve");
  expect_named (&supervisor, &ptrace_call, "ptrace");

  printf ("1..%u\n", test_number);
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
