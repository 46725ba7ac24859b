/*
 * sandbox-seccomp.c: load a role's compiled policy (src/common/policy.h) with
 * libseccomp.  The last layer of sandbox_enter.
 *
 * Default action: kill the whole process (SCMP_ACT_KILL_PROCESS), so a
 * taken-over process cannot carry on in another thread.  Only the native
 * architecture is in the filter: a call made through another ABI (i386 via
 * int 0x80, or x32, whose numbers have bit 30 set) kills the process too;
 * see kill_x32 below.
 *
 * Debug mode (a diagnostic for policy work): the default action traps
 * instead, and a SIGSYS handler prints the role and the name of the call,
 * then exits 1.  The filter is otherwise the same.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <seccomp.h>

#include "log.h"
#include "policy.h"
#include "sandbox.h"

/* x32 system calls reach the kernel as x86_64 (same AUDIT_ARCH) with this
 * bit set in the number. */
#define X32_SYSCALL_BIT 0x40000000u

/* ---- Debug mode: name the blocked call. ---- */

/* Names are looked up before the filter is loaded: the handler must not
 * call malloc (libseccomp's resolver returns a malloc'd string). */
#define TRAP_MAX_NR 512
static char *trap_names[TRAP_MAX_NR];

static size_t
append (char *buf, size_t n, size_t max, const char *s)
{
  while (*s && n < max)
    buf[n++] = *s++;
  return n;
}

static size_t
append_number (char *buf, size_t n, size_t max, unsigned long v)
{
  char digits[24];
  size_t i = 0;

  do
    digits[i++] = (char) ('0' + v % 10);
  while ((v /= 10) != 0);
  while (i > 0 && n < max)
    buf[n++] = digits[--i];
  return n;
}

/* Async-signal-safe: only write(2) and _exit(2), both in every policy. */
static void
trap_handler (int sig, siginfo_t *si, void *ctx)
{
  char line[384];
  size_t n;
  int nr = si->si_syscall;

  (void) sig;
  (void) ctx;
  n = log_prefix_now (line, sizeof line, LOG_LEVEL_ERROR);
  n = append (line, n, sizeof line, "sandbox: blocked system call ");
  if (nr >= 0 && nr < TRAP_MAX_NR && trap_names[nr])
    n = append (line, n, sizeof line, trap_names[nr]);
  else
    n = append (line, n, sizeof line, "?");
  n = append (line, n, sizeof line, " (");
  n = append_number (line, n, sizeof line, (unsigned long) (unsigned) nr);
  n = append (line, n, sizeof line, "): sandbox debug mode; if the call is "
              "legitimate, add it to the role's policy/*.policy");
  if (LOG_STYLE_NEWLINE (log_get_style ()))
    n = append (line, n, sizeof line, "\n");
  (void) !write (STDERR_FILENO, line, n);
  _exit (EXIT_FAILURE);
}

static void
install_trap_handler (void)
{
  struct sigaction sa;
  sigset_t sys;
  int nr;

  for (nr = 0; nr < TRAP_MAX_NR; nr++)
    trap_names[nr] = seccomp_syscall_resolve_num_arch (SCMP_ARCH_NATIVE, nr);

  memset (&sa, 0, sizeof sa);
  sa.sa_sigaction = trap_handler;
  sa.sa_flags = SA_SIGINFO;
  sigfillset (&sa.sa_mask);
  if (sigaction (SIGSYS, &sa, NULL) == -1)
    fatal_errno ("sandbox: sigaction SIGSYS");
  sigemptyset (&sys);
  sigaddset (&sys, SIGSYS);
  if (sigprocmask (SIG_UNBLOCK, &sys, NULL) == -1)
    fatal_errno ("sandbox: sigprocmask");
}

/* ---- Before the filter. ---- */

static void *
idle_thread (void *arg)
{
  return arg;
}

/* glibc installs its internal thread signal handlers (cancellation,
 * set*id broadcast) with rt_sigaction at the first pthread_create.  A role
 * that starts threads once sandboxed (the fetcher: libcurl's resolver)
 * calls this first, so rt_sigaction need not be in its policy. */
void
sandbox_seccomp_prepare_threads (void)
{
  pthread_t t;
  int err = pthread_create (&t, NULL, idle_thread, NULL);

  if (err != 0 || (err = pthread_join (t, NULL)) != 0) {
    errno = err;
    fatal_errno ("sandbox: starting a thread");
  }
}

/* ---- The filter. ---- */

static void
add_rule (scmp_filter_ctx ctx, const char *role, const struct policy_rule *r)
{
  struct scmp_arg_cmp cmp[POLICY_MAX_CONDS];
  uint32_t action = r->errno_value > 0 ? SCMP_ACT_ERRNO ((uint32_t) r->errno_value)
                                       : SCMP_ACT_ALLOW;
  unsigned i;
  int rc;

  if (r->ncond > POLICY_MAX_CONDS)
    fatal ("sandbox: %s:%u: too many conditions (a bug in compile-policy.py)",
           r->file, r->line);
  for (i = 0; i < r->ncond; i++) {
    cmp[i].arg = r->cond[i].arg;
    cmp[i].op = (enum scmp_compare) r->cond[i].op;
    /* libseccomp's masked comparison takes the mask first. */
    if (cmp[i].op == SCMP_CMP_MASKED_EQ) {
      cmp[i].datum_a = r->cond[i].mask;
      cmp[i].datum_b = r->cond[i].value;
    }
    else {
      cmp[i].datum_a = r->cond[i].value;
      cmp[i].datum_b = 0;
    }
  }
  /* _exact: a rule libseccomp cannot express as written is an error, not
   * something silently widened. */
  rc = seccomp_rule_add_exact_array (ctx, action, r->syscall, r->ncond, cmp);
  if (rc < 0)
    fatal ("sandbox: %s:%u: cannot add %s to the %s filter: %s (check the "
           "condition; libseccomp takes one comparison per argument)",
           r->file, r->line, r->name, role, strerror (-rc));
}

void
sandbox_seccomp (const char *role, const struct policy_rule *rules, size_t nrules,
                 bool trap)
{
  scmp_filter_ctx ctx;
  size_t i;
  int rc;

  if (nrules == 0)
    fatal ("sandbox: the %s policy is empty (a build problem)", role);
  if (trap)
    install_trap_handler ();

  /* seccomp_init puts the native architecture only in the filter; a call
   * through any other one takes the bad-architecture action. */
  ctx = seccomp_init (trap ? SCMP_ACT_TRAP : SCMP_ACT_KILL_PROCESS);
  if (ctx == NULL)
    fatal ("sandbox: seccomp_init failed (out of memory?)");
  rc = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (rc < 0)
    fatal ("sandbox: seccomp: cannot set the bad-architecture action: %s", strerror (-rc));
  /* Every thread that already exists gets the filter too. */
  rc = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  if (rc < 0)
    fatal ("sandbox: seccomp: cannot synchronise threads: %s", strerror (-rc));
  if (seccomp_arch_exist (ctx, SCMP_ARCH_X32) == 0)
    fatal ("sandbox: seccomp: the x32 ABI is in the filter (a libseccomp change?)");

  for (i = 0; i < nrules; i++)
    add_rule (ctx, role, &rules[i]);

  /* x32 calls arrive with the x86_64 audit architecture.  libseccomp's
   * x86_64 filter already sends numbers with the x32 bit to the
   * bad-architecture action (kill); tests/unit/unit-seccomp.c checks that, so a
   * libseccomp that stopped doing it would fail the tests, not ship. */

  rc = seccomp_load (ctx);
  seccomp_release (ctx);
  if (rc < 0) {
    errno = -rc;
    fatal_errno ("sandbox: cannot load the %s seccomp filter", role);
  }
  debug ("sandbox: seccomp: %zu rules, default action %s", nrules,
         trap ? "trap (debug: blocked calls are named, then the process exits)"
               : "kill process");
}
