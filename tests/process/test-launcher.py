#!/usr/bin/python3
"""The fetcher launcher (src/launcher/launcher.c): fetchers forked from one loaded
process, and the limits on what they share.

Each case starts its own nbdcurld over a read-only file: export and looks
at /proc:
- the launcher is one child of the supervisor, sandboxed (seccomp, no
  capabilities, no_new_privs), holding only its own socket, with no
  children: the fetchers it forks are the supervisor's;
- a forked fetcher has the launcher's layout (libcurl at the same
  address) but a stack guard of its own (the test binary's stack-guard
  probe, tests/hooks/sandbox-probe.c); with --exec-fetchers there is no
  launcher and each fetcher has its own layout;
- after LAUNCHER_GENERATION_FETCHERS fetchers (src/supervisor/limits-launcher.h) a new
  launcher (a new layout) takes over, not before;
- a fetcher killed by SIGSEGV makes a new launcher take over at once;
- a killed launcher costs no client (fetchers are exec'd meanwhile) and
  is replaced; after LAUNCHER_MAX_FAILURES in a row nbdcurld says so and
  execs every fetcher.
Reading other processes' maps needs root (they are not dumpable): those
checks are skipped otherwise.  TAP output.
"""

import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

nbd = N.import_nbd()

TEST_BINARY = os.environ.get("NBDCURLD_TEST", "build/src/nbdcurld-test")
IS_ROOT = os.geteuid() == 0
IMG_SIZE = 4 * 1024 * 1024
TMP = N.tmpdir()
IMG = os.path.join(TMP, "disk.img")
N.make_image(IMG, IMG_SIZE)


def header_constant(name):
    """A constant of src/supervisor/limits-launcher.h, so the test follows the code."""
    with open(os.path.join(N.ROOT, "src", "supervisor", "limits-launcher.h")) as f:
        m = re.search(r"#define %s\s+(\d+)u?" % name, f.read())
    assert m, "%s not in limits-launcher.h" % name
    return int(m.group(1))


GENERATION = header_constant("LAUNCHER_GENERATION_FETCHERS")
MAX_FAILURES = header_constant("LAUNCHER_MAX_FAILURES")


def start(name, extra=(), binary=None, url=None):
    # -v: the supervisor logs when each launcher has started and is ready.
    srv = N.Server(["-v"] + list(extra) + ["-r", url or "file://" + IMG], TMP, name)
    if binary:
        srv.args[0] = binary
    return srv.start()


def kids(srv, comm):
    return [p for p, c in N.children(srv.pid) if c == comm]


def launcher(srv, timeout=10):
    """The one launcher's pid, once there is exactly one and it is ready
    (until then fetchers are executed, which a slow start, as under a
    sanitizer, would make the cases count wrong)."""
    def ready():
        pids = kids(srv, N.LAUNCHER_COMM)
        log = srv.log_text()
        if len(pids) == 1 and "started the fetcher launcher, process %d\n" % pids[0] in log \
                and log.count("the fetcher launcher is ready") == \
                log.count("started the fetcher launcher, process"):
            return pids
        return None
    pids = N.wait_until(ready, timeout * N.time_factor())
    assert pids, "launchers: %r" % N.children(srv.pid)
    return pids[0]


def connect(srv):
    h = nbd.NBD()
    h.connect_unix(srv.sock)
    return h


def read_ok(h, off=1 << 20, n=65536):
    return bytes(h.pread(n, off)) == N.image_bytes(IMG, off, n)


def one_client(srv):
    """A client that connects, reads right and leaves."""
    h = connect(srv)
    assert read_ok(h)
    h.shutdown()


def next_launcher(srv, first):
    """The launcher that took first's place, or None within 5 s."""
    return N.wait_until(lambda: launcher(srv) if launcher(srv) != first else None, 5)


def libcurl_base(pid):
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            if "libcurl" in line:
                return line.split("-")[0]
    raise AssertionError("process %d maps no libcurl" % pid)


def status(pid):
    with open("/proc/%d/status" % pid) as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


# ---- cases ----

def test_launcher_locked_down():
    """one launcher, a child of the supervisor: seccomp filter,
    no_new_privs, no capabilities, not dumpable; it holds its socket to
    the supervisor and standard streams only, and has no child even while
    clients are served (their fetchers are the supervisor's children,
    in the launcher's user namespace, whose identity map it wrote)"""
    srv = start("locked")
    try:
        pid = launcher(srv)
        st = status(pid)
        assert st["Seccomp"] == "2", st["Seccomp"]
        assert st["NoNewPrivs"] == "1", st["NoNewPrivs"]
        for cap in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
            assert int(st[cap], 16) == 0, "%s %s" % (cap, st[cap])
        if IS_ROOT:
            fds = sorted(int(fd) for fd in os.listdir("/proc/%d/fd" % pid))
            assert fds == [0, 1, 2, 3], "launcher fds %r" % fds
        hs = [connect(srv) for _ in range(3)]
        try:
            assert all(read_ok(h) for h in hs)
            fetchers = kids(srv, N.FETCHER_COMM)
            assert len(fetchers) == 3, N.children(srv.pid)
            assert N.children(pid) == [], "launcher children %r" % N.children(pid)
            assert launcher(srv) == pid, "launcher changed"
            # A forked fetcher is never dumpable, so it cannot map a user
            # namespace of its own: it is in the launcher's, mapped at the
            # launcher's start (launcher.c, SECURITY.md).
            if IS_ROOT:
                own = os.readlink("/proc/%d/ns/user" % pid)
                for f in fetchers:
                    assert os.readlink("/proc/%d/ns/user" % f) == own, \
                        "fetcher %d is not in the launcher's user namespace" % f
                    if os.readlink("/proc/%d/ns/user" % f) != os.readlink(
                            "/proc/%d/ns/user" % srv.pid):
                        with open("/proc/%d/uid_map" % f) as m:
                            assert m.read().split(), "fetcher %d: empty uid_map" % f
        finally:
            for h in hs:
                h.shutdown()
    finally:
        srv.stop()


def test_forked_layout_own_guard():
    """forked fetchers map libcurl where the launcher does (that is what
    fork shares), but each has a stack guard of its own, none of them the
    same"""
    srv = start("guard", binary=TEST_BINARY, url="file://" + IMG + "#probe=stack-guard")
    try:
        pid = launcher(srv)
        hs = [connect(srv) for _ in range(3)]
        try:
            assert all(read_ok(h) for h in hs)
            if IS_ROOT:
                base = libcurl_base(pid)
                for f in kids(srv, N.FETCHER_COMM):
                    assert libcurl_base(f) == base, "fetcher %d has its own layout" % f
        finally:
            for h in hs:
                h.shutdown()
        guards = N.wait_until(lambda: re.findall(r"probe stack-guard: (0x[0-9a-f]+)",
                                                 srv.log_text()) or None, 5)
        assert guards and len(guards) == 3, "probes: %r\n%s" % (guards, srv.log_text()[-2000:])
        assert len(set(guards)) == 3, "shared stack guards: %r" % guards
    finally:
        srv.stop()


def test_exec_fetchers():
    """--exec-fetchers: no launcher, and each fetcher is a new program
    with a layout of its own"""
    srv = start("exec", ["--exec-fetchers"])
    try:
        time.sleep(0.5)
        assert kids(srv, N.LAUNCHER_COMM) == [], N.children(srv.pid)
        hs = [connect(srv) for _ in range(2)]
        try:
            assert all(read_ok(h) for h in hs)
            fetchers = kids(srv, N.FETCHER_COMM)
            assert len(fetchers) == 2, N.children(srv.pid)
            if IS_ROOT:
                bases = {libcurl_base(f) for f in fetchers}
                assert len(bases) == 2, "exec'd fetchers share a layout: %r" % bases
        finally:
            for h in hs:
                h.shutdown()
    finally:
        srv.stop()


def test_generation():
    """a launcher forks LAUNCHER_GENERATION_FETCHERS fetchers, then a new
    one (a new layout) forks the next; each client reads right"""
    srv = start("generation")
    try:
        first = launcher(srv)
        for i in range(GENERATION - 1):
            h = connect(srv)
            assert read_ok(h, off=(i * 4096) % IMG_SIZE, n=4096), "client %d" % i
            h.shutdown()
        assert launcher(srv) == first, "replaced before its %d fetchers" % GENERATION
        one_client(srv)
        assert next_launcher(srv, first), "still launcher %d after %d fetchers" % (
            first, GENERATION)
        one_client(srv)
    finally:
        srv.stop()


def test_crash_renews_layout():
    """a fetcher killed by SIGSEGV: its client's reads fail, the launcher
    is replaced at once, other clients and new ones read right"""
    srv = start("crash")
    try:
        first = launcher(srv)
        a, b = connect(srv), connect(srv)
        assert read_ok(a) and read_ok(b)
        victim = kids(srv, N.FETCHER_COMM)[0]
        os.kill(victim, signal.SIGSEGV)
        assert next_launcher(srv, first), "launcher %d kept after a crash" % first
        ok = 0
        for h in (a, b):
            try:
                ok += read_ok(h)
            except nbd.Error:
                pass
        assert ok == 1, "%d clients still read" % ok
        c = connect(srv)
        assert read_ok(c)
        # A sanitizer build's handler turns the SIGSEGV into an abort.
        assert re.search(r"fetcher %d was killed by signal (11|6) " % victim,
                         srv.log_text()), srv.log_text()[-2000:]
    finally:
        srv.stop()


def test_launcher_killed():
    """the launcher killed: a warning, the next client is served at once
    (its fetcher is exec'd), and a new launcher comes"""
    srv = start("killed")
    try:
        first = launcher(srv)
        os.kill(first, signal.SIGKILL)
        assert N.wait_until(lambda: "the fetcher launcher (process %d) was killed by "
                            "signal 9" % first in srv.log_text(), 5), srv.log_text()[-2000:]
        one_client(srv)
        assert next_launcher(srv, first), "no new launcher: %r" % N.children(srv.pid)
        one_client(srv)
    finally:
        srv.stop()


def test_give_up():
    """LAUNCHER_MAX_FAILURES launchers killed in a row: nbdcurld says it
    now execs every fetcher, starts no launcher, and serves on"""
    srv = start("give-up")
    try:
        for _ in range(MAX_FAILURES):
            pid = launcher(srv)
            os.kill(pid, signal.SIGKILL)
            assert N.wait_until(lambda: not N.pid_alive(pid), 5)
        assert N.wait_until(lambda: "failed %d times in a row" % MAX_FAILURES
                            in srv.log_text(), 5), srv.log_text()[-2000:]
        time.sleep(1.5)
        assert kids(srv, N.LAUNCHER_COMM) == [], N.children(srv.pid)
        one_client(srv)
    finally:
        srv.stop()


CASES = [
    test_launcher_locked_down,
    test_forked_layout_own_guard,
    test_exec_fetchers,
    test_generation,
    test_crash_renews_layout,
    test_launcher_killed,
    test_give_up,
]


def main():
    N.require_binary()
    N.watchdog(150)
    try:
        return N.Tap(CASES).run()
    finally:
        N.rmtree(TMP)


if __name__ == "__main__":
    sys.exit(main())
