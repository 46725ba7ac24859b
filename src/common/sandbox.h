/*
 * sandbox.h: the layers every role applies to itself before it reads
 * untrusted bytes (see SECURITY.md and policy/).
 *
 * sandbox_enter applies, in this order, each layer needing what the
 * previous ones still allow:
 *
 *   1. namespaces     new network (front-end), IPC and UTS namespaces;
 *                     unprivileged: inside the user namespace made by
 *                     sandbox_early_start; not permitted: said at debug
 *                     level, and on
 *   2. rlimits        no core files, RLIMIT_FSIZE 0 where the role writes
 *                     no file, RLIMIT_NOFILE sized to the role
 *   3. credentials    started as root: supplementary groups dropped, then
 *                     --group and --user (default nbdcurld, else
 *                     nobody), checked
 *   4. capabilities   libcap-ng: every set, the bounding set and the
 *                     ambient set cleared (the supervisor keeps what its
 *                     children need to do the same)
 *   5. no_new_privs   PR_SET_NO_NEW_PRIVS, and not dumpable (again: since
 *                     sandbox_early_start)
 *   6. Landlock       best effort by the kernel's ABI (sandbox-landlock.c)
 *   7. seccomp        the role's compiled policy, kill-process by default
 *                     (sandbox-seccomp.c); last, so that the calls above
 *                     need not be in the policy of the role
 *
 * A layer the kernel lacks (Landlock, unprivileged namespaces) is skipped
 * and logged at debug level; a layer that fails when the kernel has it is
 * fatal.  Nothing turns the sandbox off at run time.
 */
#ifndef NBDCURLD_SANDBOX_H
#define NBDCURLD_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "policy.h"

/* A file or directory a role may still reach under Landlock. */
struct sandbox_path {
  const char *path;
  unsigned access;            /* SANDBOX_* */
};
#define SANDBOX_READ   (1u << 0)  /* read the file, or every file beneath the directory */
#define SANDBOX_WRITE  (1u << 1)  /* write the file (a file: export); never create */
#define SANDBOX_REMOVE (1u << 2)  /* remove files in the directory (the file remover) */

struct sandbox_spec {
  const char *role;           /* "front-end", "fetcher", "supervisor": messages */

  /* seccomp */
  const struct policy_rule *rules;
  size_t nrules;
  bool debug;                 /* trap, name the blocked call, exit 1: a
                                 diagnostic for policy work, never for
                                 production (it is still a full sandbox) */

  /* credentials and capabilities */
  bool change_user;           /* as root: become uid/gid */
  uid_t uid;
  gid_t gid;
  const int *keep_caps;       /* CAP_* the process keeps (supervisor only) */
  size_t nkeep_caps;

  /* Landlock */
  bool landlock;              /* false: no Landlock layer (supervisor) */
  const struct sandbox_path *paths;  /* the only files left reachable */
  size_t npaths;
  bool any_connect;           /* TCP connect to any port (FTP data
                                 connections); else only connect_ports */
  const uint16_t *connect_ports;
  size_t nports;

  /* namespaces */
  bool new_netns;             /* an empty network namespace (front-end) */
  bool new_ipc_uts;           /* new IPC and UTS namespaces (children) */

  /* rlimits */
  rlim_t nofile;              /* RLIMIT_NOFILE; 0: leave it */
  bool no_file_writes;        /* RLIMIT_FSIZE 0: the role writes no file */
};

/* Apply every layer of s to the calling process, or exit 1 saying why.
 * Logs what each layer did at debug level. */
void sandbox_enter (const struct sandbox_spec *s);

/* Each role's first lines, before any secret can reach it (child_start,
 * supervisor_main): with user_namespace (the children, when not root), a
 * user namespace mapping only our own ids, made while /proc/self may
 * still be written, in which sandbox_enter later makes the others; then
 * not dumpable, so that no other process of our user can attach or read
 * our memory; then a tracer that attached in the moment before (one that
 * is not root) stops the process with a message naming who.  Never a
 * user namespace in a process that executes programs: they would be
 * traceable from the parent namespace by any process of our user. */
void sandbox_early_start (const char *who, bool user_namespace);

/* Die with the parent: set PR_SET_PDEATHSIG to sig and remember the
 * parent, so that sandbox_enter sets it again after changing the user
 * (which clears it) and sends sig itself if the parent died meanwhile. */
void sandbox_parent_death (int sig);

/* Before a fetcher's sandbox: work that would otherwise need system calls
 * or files the sandbox refuses later (see sandbox.c).  network: the export
 * is not file:. */
void sandbox_prepare_fetcher (bool network);

/* The files a network fetcher's libraries read after the sandbox is on
 * (resolver configuration, the system's CA store, OpenSSL's
 * configuration).  Missing ones are skipped by sandbox_enter. */
extern const struct sandbox_path sandbox_network_paths[];
extern const size_t sandbox_network_npaths;


/* The user nbdcurld becomes without --user when started as root:
 * DEFAULT_USER if it exists, else FALLBACK_USER. */
const char *sandbox_default_user (void);

/* The supervisor, before its own sandbox: look up --user and --group
 * (NULL: sandbox_default_user () and that user's group).  Returns 0, or -1 after
 * writing a message to err. */
int sandbox_lookup_user (const char *user, const char *group, uid_t *uid, gid_t *gid,
                         char *err, size_t errlen);

/* Layers, for sandbox.c and the tests. */
struct sandbox_landlock_result {
  int abi;                    /* 0: Landlock unavailable */
  bool fs, net, scoped;       /* which parts were enforced */
};
void sandbox_landlock (const struct sandbox_spec *s, struct sandbox_landlock_result *r);
/* The kernel's Landlock ABI version, or 0 with why in *why_errno:
 * ENOSYS (not built into this kernel) or EOPNOTSUPP (built in, not
 * enabled at boot). */
int sandbox_landlock_abi (int *why_errno);
/* Start and join one thread, so that glibc's one-time thread set-up (it
 * installs signal handlers) is done before a filter that refuses it. */
void sandbox_seccomp_prepare_threads (void);
/* Build and load the seccomp filter; exits 1 on failure. */
void sandbox_seccomp (const char *role, const struct policy_rule *rules, size_t nrules,
                      bool trap);

#endif
