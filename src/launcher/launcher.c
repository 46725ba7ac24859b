/*
 * launcher.c: the fetcher launcher role (limits-launcher.h,
 * LAUNCHER_GENERATION_FETCHERS; SECURITY.md).
 *
 * Exec'ing nbdcurld-fetcher for every client costs CPU, most of it the
 * dynamic loader relocating libcurl's 35 libraries, and a burst of
 * clients pays it once each.  The launcher pays it once: it is
 * exec'd like any child, loads and starts libcurl, OpenSSL and the
 * resolver, enters a sandbox of its own, and then forks one fetcher per
 * IPC_LAUNCH_FETCHER from the supervisor, on the descriptors that came
 * with it.  A fork costs a small part of an exec.
 *
 * Peer: the supervisor only, on CHILD_FD_PEER (SOCK_SEQPACKET).  The
 * launcher reads nothing from clients or web servers, holds no export's
 * configuration or secret (each fetcher reads its own from the
 * configuration pipe it is given), and answers each start with the new
 * fetcher's pid.  An unexpected message ends it; end of file is its
 * retirement.
 *
 * Each fetcher is cloned with CLONE_PARENT, so it is the supervisor's
 * child like an exec'd one: reaped, counted and signalled the same way,
 * and untouched when the launcher ends.  In the new process the stack
 * guard is replaced before any fetcher code runs, the descriptors are put
 * at their fixed numbers and every other one is closed, and fetcher_main
 * runs exactly as after an exec: its own configuration, its own sandbox
 * (narrower than the launcher's, stacked on it).
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <unistd.h>

#include <cap-ng.h>
#include <curl/curl.h>

#include "child.h"
#include "child-fds.h"
#include "config.h"
#include "config-wire.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "launcher-parse.h"
#include "log.h"
#include "roles.h"
#include "sandbox.h"

/* glibc's record of this thread's id (the address glibc gave the kernel
 * with set_tid_address).  A fork through glibc has the kernel write the
 * child's id there (CLONE_CHILD_SETTID); our clone must do the same, or
 * the fetcher's glibc would go on believing it is the launcher's thread. */
static pid_t *own_tid_record;

/* ---- In the new fetcher ---- */

/* A stack guard of its own for each fetcher: the launcher's, shared by
 * every fetcher it forks, would let a guard leaked by one fetcher defeat
 * the stack protector of all.  Only the frames below this one hold the
 * old value, and none of them returns in the fetcher (become_fetcher
 * never does), so changing it here is safe; this function and its caller
 * have no guard check of their own. */
__attribute__((no_stack_protector)) static void
renew_stack_guard (void)
{
  uintptr_t guard;

  if (getrandom (&guard, sizeof guard, 0) != (ssize_t) sizeof guard)
    _exit (127);
  /* As glibc makes it: a zero low byte stops string copies at the guard. */
  guard &= ~(uintptr_t) 0xff;
#if defined (__x86_64__)
  __asm__ volatile ("movq %0, %%fs:0x28" : : "r" (guard) : "memory");
#elif defined (__aarch64__)
  {
    extern uintptr_t __stack_chk_guard;
    __stack_chk_guard = guard;
  }
#else
#error "renew_stack_guard: add this architecture's stack guard location"
#endif
}

/* The fetcher's start: fds[0 .. nfds) become fds 3 .. 3 + nfds, as
 * spawn_child in supervisor/children.c places them for an exec'd fetcher. */
__attribute__((noreturn, no_stack_protector)) static void
become_fetcher (const int *fds, unsigned nfds)
{
  sigset_t none;

  renew_stack_guard ();
  /* Its name at once, so that no one counts it as a second launcher. */
  (void) prctl (PR_SET_NAME, roles[ROLE_FETCHER].comm);
  /* Not dumpable, as the launcher is not: from its first instruction no
   * other process of our user may read it.  Its namespaces are the
   * launcher's (made at the launcher's start, while it could still write
   * its user namespace's maps), and its own sandbox adds the rest. */
  /* The launcher's own socket, at 3, is overwritten here; every other
   * descriptor is closed (there is no exec to close the rest). */
  if (child_place_fds (fds, nfds) == -1 || close_range (3 + nfds, ~0U, 0) == -1)
    _exit (127);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  /* glibc's fork handlers (pthread_atfork) do not run after a raw clone.
   * Three libraries in this process register one: libcap-ng's forgets
   * the process it acts on, which capng_setpid does here (else the
   * sandbox's capset would aim at the launcher and fail); GnuTLS's and
   * p11-kit's reset state that a fetcher never starts (libcurl uses
   * OpenSSL, and GNUTLS_NO_IMPLICIT_INIT keeps GnuTLS unstarted).
   * OpenSSL needs none: its random generator reseeds when getpid()
   * changes. */
  capng_setpid ((int) getpid ());
  exit (fetcher_main ());
}

/* ---- In the launcher ---- */

/* clone(2) with CLONE_PARENT: the new process is the supervisor's child.
 * Raw, because glibc's fork() takes no flags; the kernel records the
 * child's id in glibc's place for it, as glibc's own fork does. */
static pid_t
clone_fetcher (void)
{
  const unsigned long flags = CLONE_PARENT | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;
#if defined (__x86_64__)
  /* flags, stack, parent_tid, child_tid, tls */
  return (pid_t) syscall (SYS_clone, flags, NULL, NULL, own_tid_record, 0UL);
#elif defined (__aarch64__)
  /* flags, stack, parent_tid, tls, child_tid */
  return (pid_t) syscall (SYS_clone, flags, NULL, NULL, 0UL, own_tid_record);
#else
#error "clone_fetcher: add this architecture's clone argument order"
#endif
}

static void
answer (pid_t pid, int error)
{
  const struct ipc_header h = {
    .type = IPC_FETCHER_LAUNCHED,
    .id = pid > 0 ? (uint64_t) pid : 0,
    .error = (uint32_t) error,
  };

  if (ipc_send_packet (CHILD_FD_PEER, &h, NULL, 0) == -1)
    fatal_errno ("answering the supervisor");
}

/* One message from the supervisor: a start, or the end. */
static void
launcher_dispatch (void)
{
  struct ipc_header h;
  int fds[IPC_MAX_FDS];
  unsigned nfds, i;
  pid_t pid;

  if (ipc_recv_packet (CHILD_FD_PEER, &h, fds, &nfds) == -1) {
    if (errno == EAGAIN || errno == EINTR)
      return;
    if (errno == 0) {
      debug ("retired by the supervisor; exiting");
      exit (EXIT_SUCCESS);
    }
    fatal_errno ("reading from the supervisor");
  }
  if (!launcher_request_acceptable (&h, nfds))
    fatal ("unexpected message from the supervisor (type %u, %u descriptors)",
           h.type, nfds);

  pid = clone_fetcher ();
  if (pid == 0)
    become_fetcher (fds, nfds);
  for (i = 0; i < nfds; i++)
    close (fds[i]);
  if (pid == -1) {
    int e = errno;
    warn_errno ("cannot start a fetcher");
    answer (-1, e);
    return;
  }
  answer (pid, 0);
}

int
launcher_main (void)
{
  uint32_t flags;
  CURLcode rc;

  child_start (ROLE_LAUNCHER);
  flags = config_recv_launcher (CHILD_FD_CONFIG);
  if (close (CHILD_FD_CONFIG) == -1)
    fatal_errno ("close configuration pipe");
  log_init (roles[ROLE_LAUNCHER].name, (flags & LAUNCHER_VERBOSE) != 0);

  if (prctl (PR_GET_TID_ADDRESS, &own_tid_record, 0, 0, 0) == -1 || own_tid_record == NULL)
    fatal_errno ("prctl PR_GET_TID_ADDRESS (the kernel needs "
                 "CONFIG_CHECKPOINT_RESTORE; start nbdcurld with --exec-fetchers)");

  /* What every fetcher would otherwise do after its exec: libcurl's and
   * OpenSSL's start, glibc's thread and resolver set-up.  Each fetcher
   * still does its own (fetcher_main), then cheaply. */
  rc = curl_global_init (CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK)
    fatal ("libcurl: curl_global_init: %s", curl_easy_strerror (rc));
  sandbox_prepare_fetcher (true);

  /* Its filter is its own needs, plus every call a fetcher makes before
   * and after its own filter (which stacks on this one). */
  {
    const struct sandbox_spec spec = {
      .role = roles[ROLE_LAUNCHER].name,
      .rules = roles[ROLE_LAUNCHER].rules, .nrules = *roles[ROLE_LAUNCHER].nrules,
      .debug = (flags & LAUNCHER_SANDBOX_DEBUG) != 0,
      /* Each fetcher sets its own Landlock rules and descriptor limit:
       * none here that would bound theirs.  The IPC and UTS namespaces
       * are made here, for every fetcher it forks: a fetcher could make
       * its own only as dumpable (its user namespace's maps) or with a
       * capability the launcher keeps, and both are worse than sharing
       * namespaces in which the fetchers' filters allow nothing (no SysV
       * IPC, message queue or host name call). */
      .landlock = false,
      .new_ipc_uts = true,
    };
    sandbox_enter (&spec);
  }

  /* The start-up's freed memory consolidated and given back: a fetcher
   * that allocates then takes fresh pages rather than writing into pages
   * it shares with the launcher, each of which the kernel must copy (with
   * a TLB flush) on the first write. */
  malloc_trim (0);

  if (ipc_send_packet (CHILD_FD_PEER, &(struct ipc_header) { .type = IPC_LAUNCHER_READY },
                       NULL, 0) == -1)
    fatal_errno ("telling the supervisor it is ready");
  debug ("ready");

  child_serve_peer (launcher_dispatch);
}
