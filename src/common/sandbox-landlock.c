/*
 * sandbox-landlock.c: the Landlock layer of sandbox_enter, best effort by
 * the kernel's ABI.
 *
 *   ABI 1  files: every access right handled; only the role's paths allowed
 *   ABI 2  + renaming or linking across directories (REFER)
 *   ABI 3  + truncation
 *   ABI 4  TCP: bind refused, connect only to the role's ports
 *   ABI 5  + device ioctls
 *   ABI 6  scoped: no signals and no abstract Unix sockets outside the domain
 *
 * Without Landlock (old kernel, or not in the LSM list) the layer is
 * skipped and said at debug level: seccomp and the rest still apply.
 * Landlock has no library: raw system calls on the kernel's structures.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/landlock.h>

#include "log.h"
#include "sandbox.h"

/* Debian 12's kernel headers stop at ABI 2 (or 3); the constants below are
 * the kernel's fixed ABI and are defined here when the headers lack them. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)      /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)     /* ABI 5 */
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)      /* ABI 4 */
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
/* enum landlock_rule_type: LANDLOCK_RULE_NET_PORT is 2 from ABI 4.  Old
 * headers have the enum without it, so it cannot be tested with #ifdef. */
#define SANDBOX_LANDLOCK_RULE_NET_PORT 2

/* struct landlock_ruleset_attr as of ABI 6.  The kernel reads the size we
 * pass: we pass only the fields the running ABI knows, so that an older
 * kernel never sees (and refuses) a field it does not have. */
struct sandbox_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;    /* ABI 4 */
  uint64_t scoped;                /* ABI 6 */
};

/* struct landlock_net_port_attr (ABI 4), packed like the kernel's. */
struct sandbox_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
} __attribute__((packed));

#define FS_ABI1 (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
                 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | \
                 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
                 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | \
                 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | \
                 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | \
                 LANDLOCK_ACCESS_FS_MAKE_SYM)

static int
ll_create_ruleset (const struct sandbox_ruleset_attr *attr, size_t size, uint32_t flags)
{
  return (int) syscall (SYS_landlock_create_ruleset, attr, size, flags);
}

static int
ll_add_rule (int ruleset, int type, const void *attr)
{
  return (int) syscall (SYS_landlock_add_rule, ruleset, type, attr, 0);
}

static int
ll_restrict_self (int ruleset)
{
  return (int) syscall (SYS_landlock_restrict_self, ruleset, 0);
}

int
sandbox_landlock_abi (int *why_errno)
{
  int abi = ll_create_ruleset (NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  *why_errno = abi < 0 ? errno : 0;
  return abi < 0 ? 0 : abi;
}

static int
landlock_abi (void)
{
  int why;
  return sandbox_landlock_abi (&why);
}

static uint64_t
handled_fs (int abi)
{
  uint64_t fs = FS_ABI1;
  if (abi >= 2)
    fs |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3)
    fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5)
    fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return fs;
}

/* Allow one path; a path that does not exist is skipped (the resolver,
 * CA and OpenSSL files differ between distributions). */
static void
add_path (int ruleset, int abi, const struct sandbox_path *p)
{
  struct landlock_path_beneath_attr attr = { 0 };
  struct stat st;
  int fd;

  /* O_PATH: a handle on the inode without reading it; follows symlinks,
   * so the rule is on the file itself (e.g. /etc/localtime's target). */
  fd = open (p->path, O_PATH | O_CLOEXEC);
  if (fd == -1) {
    if (errno == ENOENT || errno == ENOTDIR) {
      debug ("sandbox: Landlock: %s does not exist: not allowed", p->path);
      return;
    }
    /* Out of this user's reach already (e.g. a directory only root may
     * enter): nothing to allow. */
    if (errno == EACCES) {
      debug ("sandbox: Landlock: %s: not reachable by user %u: not allowed", p->path,
             (unsigned) geteuid ());
      return;
    }
    fatal_errno ("sandbox: Landlock: cannot open %s", p->path);
  }
  if (fstat (fd, &st) == -1)
    fatal_errno ("sandbox: Landlock: fstat %s", p->path);

  if (p->access & SANDBOX_READ)
    attr.allowed_access |= LANDLOCK_ACCESS_FS_READ_FILE;
  if (S_ISDIR (st.st_mode) && (p->access & SANDBOX_READ))
    attr.allowed_access |= LANDLOCK_ACCESS_FS_READ_DIR;
  if (!S_ISDIR (st.st_mode) && (p->access & SANDBOX_WRITE)) {
    attr.allowed_access |= LANDLOCK_ACCESS_FS_WRITE_FILE;
    /* A block-device export asks its size and discards by ioctl. */
    if (abi >= 5 && S_ISBLK (st.st_mode))
      attr.allowed_access |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  }
  if (S_ISDIR (st.st_mode) && (p->access & SANDBOX_REMOVE))
    attr.allowed_access |= LANDLOCK_ACCESS_FS_REMOVE_FILE;
  attr.parent_fd = fd;
  if (ll_add_rule (ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr) == -1)
    fatal_errno ("sandbox: Landlock: cannot allow %s", p->path);
  close (fd);
  debug ("sandbox: Landlock: allowed %s %s",
         p->access & SANDBOX_REMOVE ? "removing files in"
         : p->access & SANDBOX_WRITE ? "read-write" : "read", p->path);
}

void
sandbox_landlock (const struct sandbox_spec *s, struct sandbox_landlock_result *r)
{
  struct sandbox_ruleset_attr attr = { 0 };
  size_t size, i;
  int ruleset;

  memset (r, 0, sizeof *r);
  r->abi = landlock_abi ();
  if (r->abi == 0) {
    debug ("sandbox: Landlock: not available on this kernel (%s): skipped",
           errno == EOPNOTSUPP ? "disabled at boot" : "not built in");
    return;
  }

  attr.handled_access_fs = handled_fs (r->abi);
  size = offsetof (struct sandbox_ruleset_attr, handled_access_net);
  if (r->abi >= 4) {
    /* No role listens or binds after its sandbox; connect only where the
     * role says (the front-end: nowhere). */
    attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP;
    if (!s->any_connect)
      attr.handled_access_net |= LANDLOCK_ACCESS_NET_CONNECT_TCP;
    size = offsetof (struct sandbox_ruleset_attr, scoped);
  }
  if (r->abi >= 6) {
    attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
    size = sizeof attr;
  }

  ruleset = ll_create_ruleset (&attr, size, 0);
  if (ruleset == -1)
    fatal_errno ("sandbox: Landlock ABI %d: cannot create a ruleset", r->abi);

  for (i = 0; i < s->npaths; i++)
    add_path (ruleset, r->abi, &s->paths[i]);

  if (r->abi >= 4 && !s->any_connect)
    for (i = 0; i < s->nports; i++) {
      struct sandbox_net_port_attr port = {
        .allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP,
        .port = s->connect_ports[i],
      };
      if (ll_add_rule (ruleset, SANDBOX_LANDLOCK_RULE_NET_PORT, &port) == -1)
        fatal_errno ("sandbox: Landlock: cannot allow TCP port %u", s->connect_ports[i]);
    }

  /* Needs no_new_privs (set by sandbox_enter) when not CAP_SYS_ADMIN. */
  if (ll_restrict_self (ruleset) == -1)
    fatal_errno ("sandbox: Landlock ABI %d: cannot restrict the process", r->abi);
  close (ruleset);

  r->fs = true;
  r->net = r->abi >= 4;
  r->scoped = r->abi >= 6;
}
