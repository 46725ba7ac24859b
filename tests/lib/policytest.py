"""policytest.py: what the tests that read policy/ share (test-policy-check.py,
test-security-doc.py): the project's paths, the policy compiler's own
parser (so tests read the files exactly as the build does), and TAP lines
for checks that are not test functions (nbdraw.Tap runs those)."""

import importlib.util
import os
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
# srcdir: tests/, the folder above this one, as meson's environment has it.
SRCDIR = os.environ.get('srcdir') or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(os.path.abspath(SRCDIR))
GENERATOR = os.path.join(ROOT, 'policy', 'compile-policy.py')

_spec = importlib.util.spec_from_file_location('compile_policy', GENERATOR)
cp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cp)


def policy(role_file):
    """The rules of policy/ROLE_FILE.policy, parsed by compile-policy.py."""
    return cp.parse_file(os.path.join(ROOT, 'policy', f'{role_file}.policy'))[0]


_count = 0
_failures = 0


def result(ok, text, detail=None):
    """One TAP line, numbered in order; detail goes under a failure."""
    global _count, _failures
    _count += 1
    print(f'{"ok" if ok else "not ok"} {_count} - {text}')
    if not ok:
        _failures += 1
        if detail:
            for line in str(detail).splitlines():
                print(f'# {line}')
    return ok


def finish():
    """The TAP plan (at the end: the count is known only then), and exit."""
    print(f'1..{_count}')
    sys.exit(1 if _failures else 0)
