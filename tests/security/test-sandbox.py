#!/usr/bin/python3
"""The sandbox of every running role, seen from outside and from inside.

Outside: /proc/PID/status of the supervisor, the front-end and each fetcher
of a serving nbdcurld (started as root: as the unprivileged --user) shows
seccomp filtering, no_new_privs, no capability in any set, the user's ids
and no supplementary groups; the front-end has a network namespace of its
own, and every child its own IPC and UTS namespaces.

Inside: the test binary (nbdcurld-test, tests/hooks/sandbox-probe.c) tries what
each role must not do, after its sandbox is up.  The front-end dies by
SIGSYS opening /etc/passwd, making a socket, forking or executing (and with
--sandbox-debug names the call); a fetcher is refused (EACCES, Landlock)
opening a file outside its list or connecting to a port not its URL's, and
dies by SIGSYS forking or executing.  Positive controls show the probes
are real: a fetcher may open /etc/hosts and connect to its own port.  The
URL checker, which runs at start, may do neither, and dies by SIGSYS
executing (nbdcurld then does not start).
TAP output.
"""

import os
import pwd
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

nbd = N.import_nbd()

TEST_BINARY = os.environ.get("NBDCURLD_TEST", "build/src/nbdcurld-test")
IS_ROOT = os.geteuid() == 0
NOBODY = pwd.getpwnam("nobody")
TMP = N.tmpdir()
IMG = os.path.join(TMP, "img")
N.make_image(IMG, 1024 * 1024)
WEB = {}


def status(pid):
    with open("/proc/%d/status" % pid) as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def namespace(pid, kind):
    return os.readlink("/proc/%d/ns/%s" % (pid, kind))


def check_locked_down(pid, role):
    """Every sandbox layer /proc can show, for one process."""
    st = status(pid)
    problems = []
    if st.get("Seccomp") != "2":
        problems.append("Seccomp %s, expected 2 (filter)" % st.get("Seccomp"))
    if st.get("NoNewPrivs") != "1":
        problems.append("NoNewPrivs %s" % st.get("NoNewPrivs"))
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        if int(st.get(cap, "1"), 16) != 0:
            problems.append("%s %s" % (cap, st.get(cap)))
    if IS_ROOT:
        uids = st["Uid"].split()
        gids = st["Gid"].split()
        if uids != [str(NOBODY.pw_uid)] * 4:
            problems.append("Uid %s, expected %d" % (st["Uid"], NOBODY.pw_uid))
        if gids != [str(NOBODY.pw_gid)] * 4:
            problems.append("Gid %s, expected %d" % (st["Gid"], NOBODY.pw_gid))
        if st.get("Groups", "").strip():
            problems.append("supplementary groups %s" % st["Groups"])
    if problems:
        raise AssertionError("%s (pid %d): %s" % (role, pid, "; ".join(problems)))


def connect(sock, export=""):
    h = nbd.NBD()
    h.set_export_name(export)
    h.connect_unix(sock)
    return h


def test_live_processes():
    """Supervisor, front-end and two fetchers: seccomp filter, no_new_privs,
    no capabilities, the unprivileged user (when started as root), no
    supplementary groups; front-end in its own network namespace, children
    in their own IPC and UTS namespaces."""
    args = ["-r", "file://" + IMG]
    if IS_ROOT:
        args = ["--user", "nobody"] + args
    srv = N.Server(args, TMP, "live").start()
    handles = []
    try:
        handles = [connect(srv.sock), connect(srv.sock)]
        kids = N.children(srv.pid)
        fe = [p for p, comm in kids if comm == N.FRONTEND_COMM]
        fetchers = [p for p, comm in kids if comm == N.FETCHER_COMM]
        assert len(fe) == 1 and len(fetchers) == 2, "children: %r" % kids
        check_locked_down(srv.pid, "supervisor")
        check_locked_down(fe[0], "front-end")
        for p in fetchers:
            check_locked_down(p, "fetcher")
        if IS_ROOT:
            assert namespace(fe[0], "net") != namespace(srv.pid, "net"), \
                "the front-end shares the supervisor's network namespace"
            for p in fe + fetchers:
                for kind in ("ipc", "uts"):
                    assert namespace(p, kind) != namespace(srv.pid, kind), \
                        "pid %d shares the supervisor's %s namespace" % (p, kind)
            # Fetchers need the network: they stay in the host's.
        for h in handles:
            assert len(h.pread(4096, 0)) == 4096
    finally:
        for h in handles:
            h.shutdown()
        srv.stop()


def test_server(args, name):
    """The test binary (with the probes), on a socket of its own."""
    srv = N.Server(args, TMP, "%s-%d" % (name, len(os.listdir(TMP))))
    srv.args[0] = TEST_BINARY
    return srv.start()


def run_frontend_probe(probe, debug=False):
    """Start the test binary, make the front-end run PROBE; returns the
    server's log once it stopped (it stops when the front-end dies)."""
    srv = test_server((["--sandbox-debug"] if debug else []) + ["-r", "file://" + IMG], "fe")
    try:
        connect(srv.sock, "probe:" + probe)
    except nbd.Error:
        pass
    # The front-end dies (and the server with it), or it lives to log the
    # probe's outcome.
    N.wait_until(lambda: not srv.alive() or "probe %s:" % probe in srv.log_text(), 10)
    text = srv.log_text()
    if srv.alive():
        srv.stop()
        if "probe %s:" % probe not in text:
            raise AssertionError("front-end probe %s: no outcome:\n%s" % (probe, text))
    return text


def frontend_killed(probe, call):
    text = run_frontend_probe(probe)
    if call == "openat" and "probe %s: refused:" % probe in text:
        # A sanitizer build lets openat through seccomp (the runtime reads
        # /proc/self/maps: policy/sanitizer.policy); Landlock still refuses
        # the front-end every file.
        print("# sanitizer build: openat allowed by seccomp, refused by Landlock")
        return
    assert "probe %s:" % probe not in text, "the probe ran to the end:\n" + text
    assert "front-end was killed by signal 31" in text, text
    text = run_frontend_probe(probe, debug=True)
    assert re.search(r"nbdcurld: front-end: error: sandbox: blocked system call %s " % call, text), \
        "debug mode did not name %s:\n%s" % (call, text)


def test_frontend_cannot_open():
    """The front-end cannot open /etc/passwd: SIGSYS (openat named in debug mode)."""
    frontend_killed("open:/etc/passwd", "openat")


def test_frontend_cannot_connect():
    """The front-end cannot make a socket to connect anywhere: SIGSYS."""
    frontend_killed("connect:%d" % WEB["port"], "socket")


def test_frontend_cannot_fork():
    """The front-end cannot start a process: SIGSYS (clone)."""
    frontend_killed("fork", "clone")


def test_frontend_cannot_exec():
    """The front-end cannot execute a program: SIGSYS (execve)."""
    frontend_killed("exec", "execve")


def run_fetcher_probe(probe):
    """An export whose fetcher runs PROBE once its sandbox is up; returns
    (whether the export then served, the server's log)."""
    url = "http://127.0.0.1:%d/good/img#probe=%s" % (WEB["port"], probe)
    srv = test_server(["-r", url], "fetch")
    served = False
    try:
        try:
            h = connect(srv.sock)
            served = h.pread(512, 0) == N.image_bytes(IMG, 0, 512)
            h.shutdown()
        except nbd.Error:
            pass
        time.sleep(0.2)
    finally:
        srv.stop()
    return served, srv.log_text()


def test_fetcher_cannot_open_outside_its_list():
    """A fetcher is refused /etc/passwd (Landlock) and goes on serving."""
    served, text = run_fetcher_probe("open:/etc/passwd")
    assert "probe open:/etc/passwd: refused: Permission denied" in text, text
    assert served, text


def test_fetcher_may_open_resolver_files():
    """Control: a fetcher may read /etc/hosts (its resolver needs it)."""
    served, text = run_fetcher_probe("open:/etc/hosts")
    assert "probe open:/etc/hosts: allowed" in text, text
    assert served, text


def test_fetcher_cannot_connect_elsewhere():
    """A fetcher cannot connect to a port other than its URL's (Landlock
    TCP, kernel ABI 4 and later)."""
    served, text = run_fetcher_probe("connect:%d" % WEB["other_port"])
    if "TCP: not restricted" in text:
        print("# Landlock ABI < 4 here: TCP not restricted")
        return
    assert "refused: Permission denied" in text, text
    assert served, text


def test_fetcher_may_connect_to_its_port():
    """Control: a fetcher may connect to its own URL's port."""
    served, text = run_fetcher_probe("connect:%d" % WEB["port"])
    assert "probe connect:%d: allowed" % WEB["port"] in text, text
    assert served, text


def test_fetcher_cannot_exec():
    """A fetcher cannot execute a program: killed by SIGSYS, its client
    gets an error, the server goes on."""
    served, text = run_fetcher_probe("exec")
    assert not served and "probe exec:" not in text, text
    assert re.search(r"fetcher \d+ was killed by signal 31", text), text


def test_fetcher_cannot_fork():
    """A fetcher cannot start a process: killed by SIGSYS."""
    served, text = run_fetcher_probe("fork")
    assert not served and "probe fork:" not in text, text
    assert re.search(r"fetcher \d+ was killed by signal 31", text), text


def run_checker_probe(probe):
    """The URL checker runs PROBE on the export's URL once its sandbox is
    up; returns (the exit status of a start that serves nothing and
    stops, the log)."""
    url = "http://127.0.0.1:%d/good/img#checker-probe=%s" % (WEB["port"], probe)
    p = subprocess.run([TEST_BINARY, "-r", url, "--run", "true"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=30)
    return p.returncode, p.stderr


def test_checker_cannot_open():
    """The URL checker is refused every file, even /etc/hosts (Landlock
    with no path), and the start goes on."""
    rc, text = run_checker_probe("open:/etc/hosts")
    assert "nbdcurld: url-check: probe open:/etc/hosts: refused: Permission denied" in text, text
    assert rc == 0, text


def test_checker_cannot_connect():
    """The URL checker may connect to no port, not even the URL's
    (Landlock TCP, kernel ABI 4 and later)."""
    rc, text = run_checker_probe("connect:%d" % WEB["port"])
    assert rc == 0, text
    if "probe connect:%d: allowed" % WEB["port"] in text:
        served, fetcher_text = run_fetcher_probe("connect:%d" % WEB["other_port"])
        assert "TCP: not restricted" in fetcher_text or "allowed" in fetcher_text, \
            "the checker may connect where Landlock refuses fetchers:\n" + text
        print("# Landlock ABI < 4 here: TCP not restricted")
        return
    assert "probe connect:%d: refused: Permission denied" % WEB["port"] in text, text


def test_checker_cannot_exec():
    """The URL checker cannot execute a program: killed by SIGSYS, and
    nbdcurld does not start."""
    rc, text = run_checker_probe("exec")
    assert rc != 0 and "probe exec:" not in text, text
    assert "URL checker" in text, text


def start_web_server():
    www = os.path.join(TMP, "www")
    os.mkdir(www)
    os.link(IMG, os.path.join(www, "img"))
    procs = []
    ports = []
    for _ in range(2):
        p = subprocess.Popen(["/usr/bin/python3", os.path.join(N.LIB, "web-server.py"), www],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             preexec_fn=N._pdeathsig)
        ports.append(int(p.stdout.readline()))
        procs.append(p)
    WEB.update(port=ports[0], other_port=ports[1], procs=procs)


def main():
    N.require_binary()
    N.watchdog(240)
    start_web_server()
    cases = [test_live_processes]
    if os.access(TEST_BINARY, os.X_OK):
        cases += [test_frontend_cannot_open, test_frontend_cannot_connect,
                  test_frontend_cannot_fork, test_frontend_cannot_exec,
                  test_fetcher_cannot_open_outside_its_list,
                  test_fetcher_may_open_resolver_files,
                  test_fetcher_cannot_connect_elsewhere,
                  test_fetcher_may_connect_to_its_port,
                  test_fetcher_cannot_exec, test_fetcher_cannot_fork,
                  test_checker_cannot_open, test_checker_cannot_connect,
                  test_checker_cannot_exec]
    try:
        return N.Tap(cases).run()
    finally:
        for p in WEB.get("procs", []):
            p.kill()
            p.wait()
        N.rmtree(TMP)


if __name__ == "__main__":
    sys.exit(main())
