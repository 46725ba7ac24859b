#!/usr/bin/env python3
"""fuzz-policy.py: mutated policy files through policy/compile-policy.py.

Debian 12 has no atheris, so this is a small deterministic mutation loop:
each round takes one of the real policies (policy/*.policy), applies a
few random edits (byte flips, inserted tokens of the policy language,
lines duplicated, swapped or cut, invalid UTF-8), and runs the compiler's
main() in this process.  The compiler must either write a table (status
0) or refuse with one clean message (status 1: "FILE:LINE: message" on
one line); a Python traceback, any other status or an empty message is
a failure, and the input is saved next to the report.

    tests/fuzz/fuzz-policy.py [--rounds N] [--seed S] [--save DIR]

TAP output; exits 1 on a failure.
"""

import argparse
import contextlib
import importlib.util
import io
import os
import random
import re
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
POLICY_DIR = os.path.join(ROOT, 'policy')

# Pieces of the policy language and its near misses.
TOKENS = ['read', 'mmap', ':', ' arg0 ', 'arg2', 'arg6', 'arg99999999999', '==', '!=',
          '<=', '>=', '<', '>', '&', '|', '||', '&&', '~', '(', ')', '=>', 'allow',
          'errno(EACCES)', 'errno(0)', 'errno()', 'errno(eacces)', '@include <sys/mman.h>',
          '@include', '@', '#', '0x', '0', '12U', 'PROT_EXEC', '\n', ' ', '\t', '\r',
          '\x00', '\u00e9', '\u0663', '\ufeff', 'a' * 40, '\\', '"', "'", '%s']

# One line, "FILE:LINE: message", naming a file the round gave.
MESSAGE = re.compile(r'[^\n]+:\d+: [^\n]+\n\Z')


def load_compiler():
    spec = importlib.util.spec_from_file_location(
        'compile_policy', os.path.join(POLICY_DIR, 'compile-policy.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mutate(rng, data):
    lines = data.split(b'\n')
    for _ in range(rng.randint(1, 6)):
        kind = rng.randrange(7)
        i = rng.randrange(len(lines)) if lines else 0
        if kind == 0 and lines:                         # flip a byte
            line = bytearray(lines[i])
            if line:
                line[rng.randrange(len(line))] ^= 1 << rng.randrange(8)
            lines[i] = bytes(line)
        elif kind == 1 and lines:                       # insert a token
            line = lines[i]
            at = rng.randint(0, len(line))
            lines[i] = line[:at] + rng.choice(TOKENS).encode() + line[at:]
        elif kind == 2 and lines:                       # duplicate a line
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
        elif kind == 3 and lines:                       # delete a line
            del lines[i]
        elif kind == 4 and len(lines) > 1:              # swap two lines
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == 5 and lines:                       # cut a line short
            lines[i] = lines[i][:rng.randint(0, len(lines[i]))]
        elif kind == 6 and lines:                       # a byte no UTF-8 has
            line = lines[i]
            at = rng.randint(0, len(line))
            lines[i] = line[:at] + bytes([rng.choice([0x80, 0xc3, 0xff])]) + line[at:]
    return b'\n'.join(lines)


def run_once(compiler, tmp, data):
    """Returns None if the compiler behaved, else what went wrong."""
    path = os.path.join(tmp, 'fuzz.policy')
    out_c = os.path.join(tmp, 'out.c')
    with open(path, 'wb') as f:
        f.write(data)
    if os.path.exists(out_c):
        os.unlink(out_c)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            status = compiler.main(['compile-policy.py', 'fuzz', out_c, path])
    except SystemExit as e:
        status = e.code
    except Exception:                                   # what the test is for
        return 'traceback:\n' + traceback.format_exc()
    message = err.getvalue()
    if status == 0:
        if not os.path.exists(out_c) or message:
            return f'status 0, but no table or a message: {message!r}'
        with open(out_c, encoding='utf-8') as f:
            text = f.read()
        if 'fuzz_policy_rules[]' not in text:
            return 'status 0, but the table is not there'
        return None
    if status != 1:
        return f'status {status!r}: {message!r}'
    if not MESSAGE.match(message) or 'Traceback' in message:
        return f'status 1 without one clean message: {message!r}'
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--rounds', type=int, default=3000)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--save', default=None, help='where to keep a failing input')
    args = ap.parse_args()

    compiler = load_compiler()
    seeds = []
    for name in sorted(os.listdir(POLICY_DIR)):
        if name.endswith('.policy'):
            with open(os.path.join(POLICY_DIR, name), 'rb') as f:
                seeds.append(f.read())
    rng = random.Random(args.seed)
    print('1..1')
    failures = 0
    outcomes = {0: 0, 1: 0}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.rounds):
            data = mutate(rng, rng.choice(seeds))
            problem = run_once(compiler, tmp, data)
            if problem is None:
                outcomes[0 if os.path.exists(os.path.join(tmp, 'out.c')) else 1] += 1
                continue
            failures += 1
            where = os.path.join(args.save or tmp, f'policy-crash-{args.seed}-{n}')
            if args.save:
                with open(where, 'wb') as f:
                    f.write(data)
            print(f'# round {n}: {problem}'.replace('\n', '\n# '))
            print(f'# input: {data[:400]!r}' + (f' (saved as {where})' if args.save else ''))
            if failures >= 3:
                break
    print(f'# {args.rounds} rounds, seed {args.seed}: {outcomes[0]} compiled, '
          f'{outcomes[1]} refused cleanly, {failures} failures')
    print(('ok' if failures == 0 else 'not ok') + ' 1 - the policy compiler compiles '
          'or refuses cleanly')
    return 0 if failures == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
