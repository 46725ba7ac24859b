#!/usr/bin/env python3
"""Compile seccomp policy text into a C table (see src/common/policy.h).

    compile-policy.py ROLE OUTPUT.c [--names OUTPUT.txt] POLICY [POLICY...]

Policy format, one entry per line:

    # comment (every entry or group of entries says why the role needs it)
    @include <sys/mman.h>          header defining names used in values
    read                           allow read(2) whatever its arguments
    mmap: arg2 & PROT_EXEC == 0    allow only when the condition holds
    socket: arg0 == AF_INET || arg0 == AF_INET6
    socket: arg0 == AF_UNIX => errno(EACCES)
    clone3 => errno(ENOSYS)        fail the call instead of killing

A condition is one or more alternatives joined by `||`; an alternative is
comparisons joined by `&&`, each `argN OP VALUE` (OP one of == != < <= > >=)
or `argN & MASK == VALUE`, N from 0 to 5, at most one comparison per
argument in an alternative.  VALUE and MASK are C constant expressions of
identifiers, numbers, `|`, `~` and parentheses; the C compiler checks the
names, and a `#line` directive makes its errors point at the policy line.
System call names become SCMP_SYS (name), so an unknown one fails the build
at its policy line too.

A system call may have several conditional entries (one action each), or one
entry without a condition, not both.  Several files (a role's policy, then
policy/sanitizer.policy in sanitizer builds) add up: a call allowed without
condition in any of them is allowed without condition; otherwise every
file's conditional entries apply (an entry repeated with the same condition
keeps the first file's action).

Syntax errors are reported as `policy/FILE:LINE: message`, exit status 1.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

OPS = {
    '==': 'SCMP_CMP_EQ', '!=': 'SCMP_CMP_NE',
    '<': 'SCMP_CMP_LT', '<=': 'SCMP_CMP_LE',
    '>': 'SCMP_CMP_GT', '>=': 'SCMP_CMP_GE',
}
MAX_ARG = 5

# Headers every generated table includes: the names policies use most.
DEFAULT_INCLUDES = [
    '<errno.h>', '<fcntl.h>', '<sched.h>', '<signal.h>', '<sys/ioctl.h>',
    '<sys/mman.h>', '<sys/prctl.h>', '<sys/socket.h>', '<linux/futex.h>',
]

NAME_RE = re.compile(r'[a-z_][a-z0-9_]*\Z')
# src/common/policy.h: names are stored in arrays of this size, NUL included.
POLICY_NAME_MAX = 32
ROLE_RE = re.compile(r'[a-z_][a-z0-9_]*\Z')
# A value: identifiers, numbers (decimal, hex, octal, with U/L suffixes),
# `|`, `~`, parentheses and blanks.  Nothing the compiler could read as a
# statement or as a different comparison.
VALUE_RE = re.compile(r'\s*[~(]*\s*[A-Za-z0-9_]+[uUlL]*\s*\)*'
                      r'(\s*\|\s*[~(]*\s*[A-Za-z0-9_]+[uUlL]*\s*\)*)*\s*\Z')
INCLUDE_RE = re.compile(r'@include\s+(<[A-Za-z0-9_./-]+>)\s*\Z')
ACTION_RE = re.compile(r'(?:allow|errno\(\s*([A-Z][A-Z0-9_]*|[0-9]+)\s*\))\Z')
CMP_RE = re.compile(r'arg(\d+)\s*(?:&\s*(.+?)\s*==\s*(.+)|(==|!=|<=|>=|<|>)\s*(.+))\Z')


class PolicyError(Exception):
    def __init__(self, where, line, message):
        super().__init__(f'{where}:{line}: {message}')


class Rule:
    """One alternative of one policy line."""

    def __init__(self, name, conds, errno, where, line):
        self.name = name          # system call
        self.conds = conds        # [(arg, op, mask or None, value)]
        self.errno = errno        # None: allow; else an errno name or number
        self.where = where        # file name for messages
        self.line = line


def display_path(path):
    """The path as it should appear in messages: relative to the source
    tree when it is inside it (policy/frontend.policy), else as given."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full, ROOT)
    return path if rel.startswith('..') else rel


def check_value(text, where, lineno, what):
    if not VALUE_RE.match(text) or text.count('(') != text.count(')'):
        raise PolicyError(where, lineno, f'bad {what} "{text.strip()}": expected '
                          'names or numbers joined by |, optionally with ~')
    return text.strip()


def parse_comparison(text, where, lineno):
    m = CMP_RE.match(text.strip())
    if not m:
        raise PolicyError(where, lineno, f'bad comparison "{text.strip()}": expected '
                          '"argN OP VALUE" or "argN & MASK == VALUE"')
    arg = int(m.group(1))
    if arg > MAX_ARG:
        raise PolicyError(where, lineno, f'arg{arg}: system calls have arguments '
                          f'arg0 to arg{MAX_ARG}')
    if m.group(2) is not None:
        mask = check_value(m.group(2), where, lineno, 'mask')
        value = check_value(m.group(3), where, lineno, 'value')
        return (arg, 'SCMP_CMP_MASKED_EQ', mask, value)
    return (arg, OPS[m.group(4)], None, check_value(m.group(5), where, lineno, 'value'))


def parse_line(text, where, lineno):
    """Parse one non-blank, non-comment line into Rules (one per alternative)."""
    errno = None
    if '=>' in text:
        text, action = text.split('=>', 1)
        m = ACTION_RE.match(action.strip())
        if not m:
            raise PolicyError(where, lineno, f'unknown action "{action.strip()}": '
                              'expected allow or errno(ENAME)')
        errno = m.group(1)
    if ':' in text:
        name, cond = text.split(':', 1)
        if not cond.strip():
            raise PolicyError(where, lineno, 'empty condition after ":"')
    else:
        name, cond = text, None
    name = name.strip()
    if not NAME_RE.match(name):
        raise PolicyError(where, lineno, f'"{name}" is not a system call name '
                          '(lower case letters, digits and _)')
    if len(name) >= POLICY_NAME_MAX:
        raise PolicyError(where, lineno, f'"{name}" is longer than {POLICY_NAME_MAX - 1} '
                          'characters, more than any system call name')
    if cond is None:
        return [Rule(name, [], errno, where, lineno)]
    rules = []
    for alt in cond.split('||'):
        if not alt.strip():
            raise PolicyError(where, lineno, 'empty alternative around "||"')
        conds = [parse_comparison(c, where, lineno) for c in alt.split('&&')]
        args = [c[0] for c in conds]
        if len(set(args)) != len(args):
            raise PolicyError(where, lineno, 'one argument compared twice in one '
                              'alternative: libseccomp takes one comparison per '
                              'argument; use || alternatives instead')
        rules.append(Rule(name, conds, errno, where, lineno))
    return rules


def parse_file(path):
    """Returns (rules, includes) of one policy file; raises PolicyError."""
    where = display_path(path)
    rules, includes = [], []
    by_name = {}
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError as e:
        raise PolicyError(where, 0, f'cannot read: {e.strerror}')
    try:
        lines = data.decode('utf-8').splitlines()
    except UnicodeDecodeError as e:
        raise PolicyError(where, data[:e.start].count(b'\n') + 1,
                          f'byte 0x{data[e.start]:02x} is not UTF-8 text')
    for lineno, raw in enumerate(lines, 1):
        text = raw.split('#', 1)[0].strip()
        if not text:
            continue
        if text.startswith('@'):
            m = INCLUDE_RE.match(text)
            if not m:
                raise PolicyError(where, lineno, f'unknown directive "{text}": the only '
                                  'one is "@include <header.h>"')
            includes.append(m.group(1))
            continue
        new = parse_line(text, where, lineno)
        name = new[0].name
        old = by_name.setdefault(name, [])
        if old and (not old[0].conds or not new[0].conds):
            raise PolicyError(where, lineno, f'{name} is also listed at line {old[0].line}: '
                              'an entry without a condition must be the only one')
        if any(r.conds == n.conds for r in old for n in new):
            raise PolicyError(where, lineno, f'{name}: the same condition is already '
                              'listed')
        old.extend(new)
        rules.extend(new)
    return rules, includes


def merge(files):
    """Rules of several files added up (see the module's description)."""
    rules, includes = [], list(DEFAULT_INCLUDES)
    for path in files:
        new, inc = parse_file(path)
        includes += [i for i in inc if i not in includes]
        for r in new:
            same = [o for o in rules if o.name == r.name]
            if any(not o.conds and o.errno is None for o in same):
                continue                   # already allowed outright
            if not r.conds and r.errno is None:
                rules = [o for o in rules if o.name != r.name]
            elif any(o.conds == r.conds for o in same):
                continue                   # same condition: first action stays
            rules.append(r)
    return rules, includes


def c_string(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def generate(role, rules, includes, sources):
    out = [f'/* Generated by policy/compile-policy.py from {", ".join(sources)}:',
           ' * edit the policy, not this file. */',
           '#include <stddef.h>', '#include <stdint.h>', '#include <seccomp.h>']
    out += [f'#include {i}' for i in includes]
    out += ['#include "policy.h"', '',
            f'const struct policy_rule {role}_policy_rules[] = {{']
    for r in rules:
        conds = ', '.join(
            f'{{ {arg}, {op}, (uint64_t) ({mask if mask else 0}), (uint64_t) ({value}) }}'
            for arg, op, mask, value in r.conds)
        if not conds:
            conds = '{ 0, 0, 0, 0 }'   # ISO C has no empty initialiser
        err = f'({r.errno})' if r.errno else '0'
        out.append(f'#line {r.line} {c_string(r.where)}')
        # A policy outside the tree may have a long path: its end names it.
        where = r.where if len(r.where) < POLICY_NAME_MAX else \
            '...' + r.where[-(POLICY_NAME_MAX - 4):]
        out.append(f'  {{ SCMP_SYS ({r.name}), {err}, {len(r.conds)}, {{ {conds} }}, '
                   f'{c_string(r.name)}, {c_string(where)}, {r.line} }},')
    out += ['};', '',
            f'const size_t {role}_policy_nrules = sizeof {role}_policy_rules / '
            f'sizeof {role}_policy_rules[0];', '']
    return '\n'.join(out)


def names_listing(rules):
    """One line per rule: name, then its condition and action if any."""
    lines = []
    for r in rules:
        cond = ' && '.join(f'arg{a} & {m} == {v}' if m else
                           f'arg{a} {next(k for k, o in OPS.items() if o == op)} {v}'
                           for a, op, m, v in r.conds)
        lines.append(r.name + (f': {cond}' if cond else '') +
                     (f' => errno({r.errno})' if r.errno else ''))
    return '\n'.join(lines) + '\n'


def main(argv):
    args = argv[1:]
    names_out = None
    if '--names' in args:
        i = args.index('--names')
        if i + 1 >= len(args):
            print('compile-policy.py: --names needs a file name', file=sys.stderr)
            return 2
        names_out = args[i + 1]
        del args[i:i + 2]
    if len(args) < 3:
        print('usage: compile-policy.py ROLE OUTPUT.c [--names OUTPUT.txt] '
              'POLICY [POLICY...]', file=sys.stderr)
        return 2
    role, output, files = args[0], args[1], args[2:]
    if not ROLE_RE.match(role):
        print(f'compile-policy.py: bad role name "{role}"', file=sys.stderr)
        return 2
    try:
        rules, includes = merge(files)
    except PolicyError as e:
        print(e, file=sys.stderr)
        return 1
    if not rules:
        print(f'{display_path(files[0])}:0: the policy allows nothing', file=sys.stderr)
        return 1
    text = generate(role, rules, includes, [display_path(f) for f in files])
    with open(output, 'w', encoding='utf-8') as f:
        f.write(text)
    if names_out:
        with open(names_out, 'w', encoding='utf-8') as f:
            f.write(names_listing(rules))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
