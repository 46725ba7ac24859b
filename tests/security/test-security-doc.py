#!/usr/bin/python3
"""The documentation cannot drift from the code.

1. SECURITY.md's table "What each role may do" (after the marker
   `<!-- role-table -->`) says, per capability and per role, "yes" or
   "no".  Each capability lists the system calls that embody it.  A cell
   must say "yes" if and only if the role's policy (policy/ROLE.policy,
   read with policy/compile-policy.py's own parser) lets at least one of
   those calls through, with or without conditions; an entry that only
   fails the call (`=> errno(...)`) lets nothing through.  A call written
   `name(argN=VALUE)` stands for that call with argument N equal to VALUE:
   an entry counts only if its conditions can hold for that value.  VALUE
   may use the names defined after the marker `<!-- role-table-values -->`.
   A child's filter runs under the supervisor's (a filter is inherited
   across fork and exec), so every call that makes a child's cell "yes"
   must pass the supervisor's policy too, or the table would overstate.
2. Every limit SECURITY.md's "Limits" table names is defined in a header
   of src/ (the limits-*.h and *-wire.h headers; src/common/nbdcurld.h
   names which holds what).
3. Every option `nbdcurld --help` prints is described in man/nbdcurld.8,
   and every option the manual describes is in `--help`.

TAP output.  Environment: srcdir (the tests directory), NBDCURLD (the
binary).
"""

import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from policytest import ROOT, policy, result, finish  # noqa: E402
SECURITY_MD = os.path.join(ROOT, 'SECURITY.md')
MANPAGE = os.path.join(ROOT, 'man', 'nbdcurld.8')
NBDCURLD = os.environ.get('NBDCURLD') or os.path.join(ROOT, 'build', 'src', 'nbdcurld')

# Table column -> policy file.  sanitizer.policy is only in sanitizer
# builds, never in releases: the table describes release builds.
# The launcher's filter is compiled from three files (src/meson.build):
# its own entries, then everything a fetcher of either kind may do.
ROLES = {'supervisor': 'supervisor', 'front-end': 'frontend', 'key holder': 'keyholder',
         'launcher': ('launcher', 'fetcher-unix', 'fetcher'), 'fetcher': 'fetcher'}


def role_policy(files):
    """The rules of one role: one policy file, or several compiled together."""
    if isinstance(files, str):
        return policy(files)
    return [r for f in files for r in policy(f)]


def role_files(files):
    return files if isinstance(files, str) else '+'.join(files)
MASK64 = (1 << 64) - 1

# ---- Constants that policy conditions and table values use ----

def constants():
    """Names to numbers: the Linux ABI values of what the policies and the
    table use, from Python's modules where they have them."""
    import fcntl
    import mmap
    import signal
    import socket
    import termios
    c = {
        # <linux/sched.h>: not in Python 3.11's os module.
        'CLONE_VM': 0x100, 'CLONE_FS': 0x200, 'CLONE_FILES': 0x400,
        'CLONE_SIGHAND': 0x800, 'CLONE_PIDFD': 0x1000, 'CLONE_PTRACE': 0x2000,
        'CLONE_VFORK': 0x4000, 'CLONE_PARENT': 0x8000, 'CLONE_THREAD': 0x10000,
        'CLONE_NEWNS': 0x20000, 'CLONE_SYSVSEM': 0x40000, 'CLONE_SETTLS': 0x80000,
        'CLONE_PARENT_SETTID': 0x100000, 'CLONE_CHILD_CLEARTID': 0x200000,
        'CLONE_UNTRACED': 0x800000, 'CLONE_CHILD_SETTID': 0x1000000,
        'CLONE_NEWCGROUP': 0x2000000, 'CLONE_NEWUTS': 0x4000000,
        'CLONE_NEWIPC': 0x8000000, 'CLONE_NEWUSER': 0x10000000,
        'CLONE_NEWPID': 0x20000000, 'CLONE_NEWNET': 0x40000000, 'CLONE_IO': 0x80000000,
        # <fcntl.h> on x86_64 and most architectures.
        '__O_TMPFILE': 0o20000000,
        'PROT_NONE': 0,
        # <linux/prctl.h>
        'PR_SET_PDEATHSIG': 1, 'PR_GET_DUMPABLE': 3, 'PR_SET_DUMPABLE': 4,
        'PR_GET_KEEPCAPS': 7, 'PR_SET_KEEPCAPS': 8, 'PR_SET_NAME': 15,
        'PR_CAPBSET_READ': 23, 'PR_CAPBSET_DROP': 24, 'PR_GET_SECUREBITS': 27,
        'PR_SET_SECUREBITS': 28, 'PR_SET_NO_NEW_PRIVS': 38,
        'PR_GET_NO_NEW_PRIVS': 39, 'PR_CAP_AMBIENT': 47,
    }
    for mod, prefixes in ((os, ('O_',)), (mmap, ('PROT_',)), (socket, ('AF_',)),
                          (fcntl, ('F_',)), (termios, ('FIO', 'TIOC', 'TCGETS'))):
        for name in dir(mod):
            if name.startswith(prefixes) and isinstance(getattr(mod, name), int):
                c.setdefault(name, int(getattr(mod, name)))
    for sig in signal.Signals:
        c.setdefault(sig.name, int(sig))
    return c


CONSTANTS = constants()
TOKEN_RE = re.compile(r'\s*(0[xX][0-9a-fA-F]+|[0-9]+|[A-Za-z_][A-Za-z0-9_]*)[uUlL]*\s*')


class Unknown(Exception):
    pass


def evaluate(expr, names):
    """A policy value or mask: names and numbers joined by |, with ~ and
    parentheses (compile-policy.py's VALUE_RE).  64-bit unsigned."""
    out, i = [], 0
    while i < len(expr):
        ch = expr[i]
        if ch in ' \t':
            i += 1
        elif ch in '|~()':
            out.append(ch)
            i += 1
        else:
            m = TOKEN_RE.match(expr, i)
            if not m:
                raise Unknown(f'cannot read "{expr}"')
            tok = m.group(1)
            if tok[0].isdigit():
                v = int(tok, 16) if tok[:2] in ('0x', '0X') else \
                    int(tok, 8) if len(tok) > 1 and tok[0] == '0' else int(tok)
            elif tok in names:
                v = names[tok]
            elif tok in CONSTANTS:
                v = CONSTANTS[tok]
            else:
                raise Unknown(f'no value known for {tok} (add it to '
                              'constants() in tests/security/test-security-doc.py)')
            out.append(str(v))
            i = m.end()
    return eval(' '.join(out), {'__builtins__': {}}) & MASK64   # digits and | ~ ( ) only


def cond_may_hold(cond, args, names):
    """Can this comparison hold when the arguments in args have those
    values?  An argument not given may be anything: yes."""
    arg, op, mask, value = cond
    if arg not in args:
        return True
    x, v = args[arg], evaluate(value, names)
    if op == 'SCMP_CMP_MASKED_EQ':
        return (x & evaluate(mask, names)) == v
    return {'SCMP_CMP_EQ': x == v, 'SCMP_CMP_NE': x != v, 'SCMP_CMP_LT': x < v,
            'SCMP_CMP_LE': x <= v, 'SCMP_CMP_GT': x > v, 'SCMP_CMP_GE': x >= v}[op]


# ---- The table ----

CALL_RE = re.compile(r'([a-z_][a-z0-9_]*)(?:\((.*)\))?\Z')
ARG_RE = re.compile(r'\s*arg([0-5])\s*=\s*(.+?)\s*\Z')


def parse_call(text):
    """`name` or `name(argN=VALUE, ...)` -> (name, {N: VALUE text})."""
    m = CALL_RE.match(text.strip())
    if not m:
        raise ValueError(f'"{text}" is not `name` or `name(argN=VALUE)`')
    args = {}
    if m.group(2) is not None:
        for part in m.group(2).split(','):
            a = ARG_RE.match(part)
            if not a:
                raise ValueError(f'"{text}": "{part.strip()}" is not argN=VALUE')
            args[int(a.group(1))] = a.group(2)
    return m.group(1), args


def split_row(line):
    """Cells of a Markdown table row; `\\|` is a | inside a cell."""
    line = line.strip()
    if line.startswith('|'):
        line = line[1:]
    if line.endswith('|') and not line.endswith('\\|'):
        line = line[:-1]
    cells = re.split(r'(?<!\\)\|', line)
    return [c.replace('\\|', '|').strip() for c in cells]


def read_table(text):
    """The rows of the table after the marker, as dicts keyed by header."""
    start = text.find('<!-- role-table -->')
    if start == -1:
        return None, 'no "<!-- role-table -->" marker in SECURITY.md'
    lines = text[start:].splitlines()[1:]
    while lines and not lines[0].startswith('|'):
        lines.pop(0)
    table = []
    while lines and lines[0].startswith('|'):
        table.append(lines.pop(0))
    if len(table) < 3:
        return None, 'no table after the marker'
    header = [h.lower() for h in split_row(table[0])]
    rows = []
    for n, line in enumerate(table[2:], 1):
        cells = split_row(line)
        if len(cells) != len(header):
            return None, f'row {n} has {len(cells)} cells, the header {len(header)}: {line}'
        rows.append(dict(zip(header, cells)))
    return rows, header


def read_values(text):
    """`NAME` = `EXPR` lines after the values marker."""
    names = {}
    start = text.find('<!-- role-table-values -->')
    if start == -1:
        return names
    for line in text[start:].splitlines()[1:]:
        m = re.match(r'\s*[-*]\s+`([A-Z_][A-Z0-9_]*)`\s*=\s*`([^`]+)`', line)
        if m:
            names[m.group(1)] = evaluate(m.group(2), names)
        elif line.strip() and not line.lstrip().startswith(('-', '*')):
            break
    return names


def native_syscalls():
    """Every system call name of this machine's native ABI, or None."""
    names = set()
    for path in glob.glob('/usr/include/*/asm/unistd_64.h') + \
            glob.glob('/usr/include/asm/unistd_64.h'):
        with open(path) as f:
            names |= set(re.findall(r'#define __NR_([a-z0-9_]+)\s', f.read()))
    return names or None


def allows(rules, name, args, names):
    """Some allow entry for name whose conditions can hold for args."""
    return [r for r in rules if r.name == name and r.errno is None and
            all(cond_may_hold(c, args, names) for c in r.conds)]


def check_table():
    with open(SECURITY_MD, encoding='utf-8') as f:
        text = f.read()
    rows, header = read_table(text)
    if not result(rows is not None, 'SECURITY.md has the role table', header):
        return
    want = ['capability', 'system calls'] + list(ROLES) + ['notes']
    if not result(header == want, 'role table columns: ' + ', '.join(want),
                  f'found: {", ".join(header)}'):
        return
    try:
        names = read_values(text)
    except Unknown as e:
        result(False, 'role table values parse', e)
        return
    policies = {col: role_policy(f) for col, f in ROLES.items()}
    known = native_syscalls()
    seen = set()

    for row in rows:
        cap = row['capability']
        result(cap not in seen, f'row "{cap}": named once')
        seen.add(cap)
        calls = re.findall(r'`([^`]+)`', row['system calls'])
        try:
            parsed = [parse_call(c) for c in calls]
            if not parsed:
                raise ValueError('no system call in backquotes')
            resolved = [(n, {a: evaluate(v, names) for a, v in args.items()}, text)
                        for (n, args), text in zip(parsed, calls)]
        except (ValueError, Unknown) as e:
            result(False, f'row "{cap}": system calls parse', e)
            continue
        if known is not None:
            bad = [n for n, _, _ in resolved if n not in known]
            result(not bad, f'row "{cap}": every call is a system call of this machine',
                   f'unknown: {", ".join(bad)}')

        for col in ROLES:
            cell = row[col].strip('* ').lower()
            if not result(cell in ('yes', 'no'), f'row "{cap}", {col}: says yes or no',
                          f'cell: "{row[col]}"'):
                continue
            try:
                found = [(text, allows(policies[col], n, a, names)) for n, a, text in resolved]
            except Unknown as e:
                result(False, f'row "{cap}", {col}: conditions evaluate', e)
                continue
            found = [(text, rs) for text, rs in found if rs]
            listing = '; '.join(
                f'{text} allowed by {role_files(ROLES[col])}.policy line(s) '
                f'{", ".join(str(r.line) for r in rs)}' for text, rs in found)
            if cell == 'yes':
                result(bool(found), f'row "{cap}", {col}: yes, and its policy allows '
                       'one of the calls',
                       f'{col} policy lets none of {", ".join(calls)} through: '
                       'the cell should say "no"')
            else:
                result(not found, f'row "{cap}", {col}: no, and its policy allows '
                       'none of the calls', f'{listing}: the cell should say "yes"')
            # A child's call must pass the inherited supervisor filter too.
            if col != 'supervisor' and found:
                blocked = [text for text, _ in found
                           if not allows(policies['supervisor'], *parse_call_resolved(
                               text, names), names)]
                result(not blocked, f'row "{cap}", {col}: what its policy allows passes '
                       'the inherited supervisor filter too',
                       f'refused by supervisor.policy: {", ".join(blocked)}')


def parse_call_resolved(text, names):
    n, args = parse_call(text)
    return n, {a: evaluate(v, names) for a, v in args.items()}


# ---- Limits ----

def check_limits():
    with open(SECURITY_MD, encoding='utf-8') as f:
        text = f.read()
    m = re.search(r'^## Limits\n(.*?)^## ', text, re.S | re.M)
    if not result(m is not None, 'SECURITY.md has a "Limits" section'):
        return
    names = set()
    for line in m.group(1).splitlines():
        if line.startswith('|') and not line.startswith('|---'):
            names |= set(re.findall(r'`([A-Z][A-Z0-9_]+)`', split_row(line)[0]))
    header = ''
    for path in sorted(glob.glob(os.path.join(ROOT, 'src', '*', '*.h'))):
        with open(path, encoding='utf-8') as f:
            header += f.read()
    defined = set(re.findall(r'^#define\s+([A-Z][A-Z0-9_]+)', header, re.M))
    missing = sorted(names - defined)
    result(bool(names) and not missing,
           f'every limit of SECURITY.md ({len(names)}) is defined in a header of src/',
           'not defined: ' + ', '.join(missing))


# ---- Options: --help and the manual ----

def check_options():
    try:
        p = subprocess.run([NBDCURLD, '--help'], capture_output=True, text=True, timeout=30)
    except OSError as e:
        result(False, f'{NBDCURLD} --help runs', e)
        return
    if not result(p.returncode == 0 and 'Usage' in p.stdout, 'nbdcurld --help runs',
                  f'status {p.returncode}: {p.stderr}'):
        return
    help_long, help_short = set(), set()
    for line in p.stdout.splitlines():
        s = line.strip()
        if not s.startswith('-'):
            continue      # usage lines and continuation lines
        help_long |= set(re.findall(r'(?<![\w-])--([a-z][a-z0-9-]*)', s))
        help_short |= set(re.findall(r'(?<![\w-])-([A-Za-z])\b(?!-)', s))
    with open(MANPAGE, encoding='utf-8') as f:
        man = f.read()
    man_items = '\n'.join(l for l in man.splitlines() if l.startswith('.It '))
    man_long = set(re.findall(r'\bFl -([a-z][a-z0-9-]*)', man_items))
    man_short = set(re.findall(r'\bFl ([A-Za-z])\b(?!-)', man_items))

    result(len(help_long) >= 20, f'--help lists long options ({len(help_long)})',
           sorted(help_long))
    missing = sorted(help_long - man_long)
    result(not missing, 'every long option of --help has an entry in nbdcurld.8',
           'not in man/nbdcurld.8: ' + ', '.join('--' + o for o in missing))
    missing = sorted(help_short - man_short)
    result(not missing, 'every short option of --help has an entry in nbdcurld.8',
           'not in man/nbdcurld.8: ' + ', '.join('-' + o for o in missing))
    stale = sorted(man_long - help_long)
    result(not stale, 'every long option nbdcurld.8 describes is in --help',
           'not in --help: ' + ', '.join('--' + o for o in stale))


check_table()
check_limits()
check_options()
finish()
