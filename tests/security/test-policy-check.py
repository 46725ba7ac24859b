#!/usr/bin/env python3
"""Policy check: the front-end's and the fetchers' policies never allow the
calls that would let a taken-over process escape (exec, new processes,
debugging other processes, namespaces, modules, bpf, keyrings, ...), the
front-end allows no file opening and no socket making, the supervisor's
policy still refuses the kernel's most dangerous calls, and the generator
refuses malformed policies naming the file and line.  TAP output.

Reads the policies with policy/compile-policy.py's own parser, so the check
sees exactly what the build compiles.  sanitizer.policy is not checked
against these lists: it is only in sanitizer builds, never in releases.
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from policytest import ROOT, GENERATOR, policy, result, finish  # noqa: E402

# Allowed in no role, supervisor included: its filter is inherited by every
# child.
NEVER = {
    'ptrace', 'process_vm_readv', 'process_vm_writev', 'mount', 'umount2',
    'pivot_root', 'chroot', 'setns', 'fsopen', 'fsmount', 'fsconfig',
    'fspick', 'move_mount', 'open_tree', 'mount_setattr',
    'init_module', 'finit_module', 'delete_module', 'bpf', 'perf_event_open',
    'keyctl', 'add_key', 'request_key', 'userfaultfd', 'kexec_load',
    'kexec_file_load', 'reboot', 'swapon', 'swapoff', 'acct',
    'settimeofday', 'clock_settime', 'clock_adjtime', 'adjtimex',
    'open_by_handle_at', 'name_to_handle_at', 'iopl', 'ioperm', 'quotactl',
    'sethostname', 'setdomainname', 'lookup_dcookie', 'vhangup', 'syslog',
    'personality', 'uselib', 'nfsservctl', 'pidfd_getfd', 'kcmp',
    'io_uring_setup', 'io_uring_enter', 'io_uring_register',
}
# Allowed in neither the front-end nor the fetchers.
NEVER_CHILDREN = NEVER | {
    'execve', 'execveat', 'fork', 'vfork', 'unshare', 'setuid', 'setgid',
    'setresuid', 'setresgid', 'setreuid', 'setregid', 'setgroups',
    'setfsuid', 'setfsgid', 'capset', 'seccomp', 'landlock_create_ruleset',
    'landlock_add_rule', 'landlock_restrict_self', 'prctl', 'listen', 'bind',
    'memfd_create', 'memfd_secret', 'kill', 'tkill', 'pidfd_open',
    'pidfd_send_signal', 'rt_sigqueueinfo', 'rt_tgsigqueueinfo',
    'migrate_pages', 'move_pages', 'mbind', 'set_mempolicy', 'open',
    'creat', 'mknod', 'mknodat', 'link', 'linkat', 'symlink', 'symlinkat',
    'rename', 'renameat', 'renameat2', 'unlink', 'unlinkat', 'mkdir',
    'mkdirat', 'rmdir', 'chmod', 'fchmod', 'fchmodat', 'chown', 'fchown',
    'fchownat', 'lchown', 'truncate', 'ftruncate', 'pkey_mprotect',
}
NEVER_FRONTEND = NEVER_CHILDREN | {
    'openat', 'openat2', 'socket', 'socketpair', 'connect', 'clone',
    'clone3', 'newfstatat', 'statx', 'stat', 'lstat', 'access', 'faccessat',
    'faccessat2', 'readlink', 'readlinkat', 'getdents64', 'chdir', 'fchdir',
    'sendfile', 'ioctl',
}

def allowing(rules):
    """Names of calls some rule lets through (errno rules let nothing
    through)."""
    return {r.name for r in rules if r.errno is None}


def cond_has(rules, name, arg, op, mask=None):
    """Every allow rule for name compares arg with op (and mask)."""
    mine = [r for r in rules if r.name == name and r.errno is None]
    return bool(mine) and all(
        any(c[0] == arg and c[1] == op and (mask is None or c[2] == mask) for c in r.conds)
        for r in mine)


def check_role(role, forbidden):
    rules = policy(role)
    bad = sorted(allowing(rules) & forbidden)
    result(not bad, f'{role}.policy allows none of {len(forbidden)} forbidden calls',
           f'allowed: {", ".join(bad)}')
    return rules


fe = check_role('frontend', NEVER_FRONTEND)
fetch = check_role('fetcher', NEVER_CHILDREN)
sup = check_role('supervisor', NEVER)
# The file remover keeps root's uid: beyond looking at and removing its
# files, nothing a child may not do, and no file opened, no socket, no
# memory mapped, no thread.
check_role('remover', (NEVER_FRONTEND - {'unlink', 'unlinkat', 'newfstatat'}) |
           {'mmap', 'mprotect', 'clone', 'rename', 'renameat'})

# The fetcher launcher: its filter is compiled from launcher.policy,
# fetcher-unix.policy and fetcher.policy (src/meson.build), and its forked
# fetchers run under it before their own.  It may do what a fetcher does
# to enter its sandbox (capabilities, Landlock, seccomp, prctl), and
# nothing else that is forbidden to children: no exec, no plain fork, no
# identity change, no listening, and no new namespace (a forked fetcher
# is in the launcher's).
NEVER_LAUNCHER = NEVER_CHILDREN - {
    'capset', 'seccomp', 'landlock_create_ruleset', 'landlock_add_rule',
    'landlock_restrict_self', 'prctl'}
launch = policy('launcher') + policy('fetcher-unix') + policy('fetcher')
bad = sorted(allowing(launch) & NEVER_LAUNCHER)
result(not bad, f'launcher filter allows none of {len(NEVER_LAUNCHER)} forbidden calls',
       f'allowed: {", ".join(bad)}')
launch_own = policy('launcher')
result(cond_has(launch_own, 'clone', 0, 'SCMP_CMP_MASKED_EQ'),
       'launcher.policy: clone only with a masked condition (CLONE_PARENT, no CLONE_VM, '
       'no namespace)')
result(all(r.name != 'clone' or 'CLONE_PARENT' in r.conds[0][2] and 'CLONE_VM' in r.conds[0][2]
           and r.conds[0][3] == 'CLONE_PARENT' for r in launch_own),
       'launcher.policy: clone must have CLONE_PARENT and must not have CLONE_VM',
       [(r.name, r.conds) for r in launch_own if r.name == 'clone'])
result(cond_has(launch_own, 'prctl', 0, 'SCMP_CMP_EQ'),
       'launcher.policy: prctl only for named options')

# Conditions that carry the security of an entry.
for role, rules in (('frontend', fe), ('fetcher', fetch)):
    for name in ('mmap', 'mprotect'):
        result(cond_has(rules, name, 2, 'SCMP_CMP_MASKED_EQ', 'PROT_EXEC'),
               f'{role}.policy: {name} only without PROT_EXEC')
result(cond_has(fetch, 'clone', 0, 'SCMP_CMP_MASKED_EQ', 'CLONE_THREAD'),
       'fetcher.policy: clone only with CLONE_THREAD')
result(all(r.errno for r in fetch if r.name == 'clone3'),
       'fetcher.policy: clone3 fails (flags cannot be filtered)')
result(cond_has(fetch, 'socket', 0, 'SCMP_CMP_EQ'),
       'fetcher.policy: socket only for named address families')
fetch_families = {c[3] for r in fetch if r.name == 'socket' and r.errno is None for c in r.conds}
result(fetch_families <= {'AF_INET', 'AF_INET6'},
       'fetcher.policy: sockets only for AF_INET and AF_INET6', fetch_families)
# unix-socket-path=: fetcher-unix.policy adds AF_UNIX sockets, nothing else.
fetch_unix = policy('fetcher-unix')
result([(r.name, [c[3] for c in r.conds], r.errno) for r in fetch_unix] ==
       [('socket', ['AF_UNIX'], None)],
       'fetcher-unix.policy: allows socket(AF_UNIX) and nothing else',
       [(r.name, r.conds, r.errno) for r in fetch_unix])
result(cond_has(fetch, 'ioctl', 1, 'SCMP_CMP_EQ'),
       'fetcher.policy: ioctl only for named requests')
result(cond_has(fetch, 'openat', 2, 'SCMP_CMP_MASKED_EQ'),
       'fetcher.policy: openat never creates or truncates')
result(cond_has(sup, 'unshare', 0, 'SCMP_CMP_MASKED_EQ'),
       'supervisor.policy: unshare only for the children\'s namespaces')
result(cond_has(sup, 'clone', 0, 'SCMP_CMP_MASKED_EQ'),
       'supervisor.policy: clone never makes namespaces')
result(cond_has(sup, 'prctl', 0, 'SCMP_CMP_EQ'),
       'supervisor.policy: prctl only for named options')

# Every entry has a comment: the line itself, or the comment block above
# it (a group of entries shares one).
for role in ('frontend', 'fetcher', 'fetcher-unix', 'launcher', 'supervisor', 'remover',
             'sanitizer'):
    path = os.path.join(ROOT, 'policy', f'{role}.policy')
    uncommented, seen_comment = [], False
    with open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if not s:
                seen_comment = False
            elif s.startswith('#'):
                seen_comment = True
            elif '#' not in s and not seen_comment and not s.startswith('@'):
                uncommented.append(n)
    result(not uncommented, f'{role}.policy: every entry or group has a comment',
           f'lines without one: {uncommented}')

# The generator refuses malformed policies, naming file and line.
BAD = [
    ('unknown keyword', 'read\nallow write\n', 2),
    ('bad condition', 'read\nmmap: arg2 ~~ 3\n', 2),
    ('bad argument index', 'read\n\nmmap: arg6 == 0\n', 3),
    ('bad operator', 'mmap: arg2 =< 3\n', 1),
    ('bad value', 'mmap: arg2 == PROT_EXEC; exit(1)\n', 1),
    ('unknown action', 'clone3 => kill\n', 1),
    ('unknown directive', '# x\n@import <a.h>\n', 2),
    ('empty condition', 'read:\n', 1),
    ('empty alternative', 'socket: arg0 == 1 ||\n', 1),
    ('same argument twice', 'mmap: arg2 & 4 == 0 && arg2 != 1\n', 1),
    ('duplicate unconditional', 'read\nwrite\nread\n', 3),
    ('conditional after unconditional', 'mmap\nmmap: arg2 == 0\n', 2),
]
with tempfile.TemporaryDirectory() as tmp:
    for what, text, line in BAD:
        path = os.path.join(tmp, 'bad.policy')
        with open(path, 'w') as f:
            f.write(text)
        p = subprocess.run([sys.executable, GENERATOR, 'bad', os.path.join(tmp, 'out.c'), path],
                           capture_output=True, text=True)
        want = f'{path}:{line}: '
        result(p.returncode == 1 and p.stderr.startswith(want),
               f'generator refuses {what} at {os.path.basename(path)}:{line}',
               f'status {p.returncode}, stderr: {p.stderr}')

    # And accepts a good one, with the syntax the policies use.
    good = os.path.join(tmp, 'good.policy')
    with open(good, 'w') as f:
        f.write('# c\n@include <linux/fs.h>\nread\nmmap: arg2 & PROT_EXEC == 0\n'
                'socket: arg0 == AF_INET || arg0 == AF_INET6 && arg1 != 3\n'
                'socket: arg0 == AF_UNIX => errno(EACCES)\n'
                'ioctl: arg1 == BLKGETSIZE64\nclone3 => errno(ENOSYS)\n'
                'fcntl: arg1 <= (F_GETFL | 0x10U) && arg0 > ~0\n')
    out = os.path.join(tmp, 'good.c')
    p = subprocess.run([sys.executable, GENERATOR, 'good', out, good],
                       capture_output=True, text=True)
    result(p.returncode == 0 and os.path.exists(out), 'generator accepts a good policy',
           p.stderr)
    if p.returncode == 0:
        text = open(out).read()
        result(f'#line 5 "{good}"' in text and text.count('SCMP_SYS (socket)') == 3,
               'generated table: one rule per alternative, #line per rule', text)

finish()
