#!/usr/bin/python3
"""Process tree of nbdcurld: one front-end, one fetcher launcher, one
fetcher per client.

Starts `$NBDCURLD -f -r -U SOCK file:///IMG`, connects clients with libnbd
(python3-libnbd) and checks in /proc that the supervisor's children are
exactly one "nbdcurld-fe", one "nbdcurld-launch" (the fetcher launcher,
tests/process/test-launcher.py has its own cases) and one "nbdcurld-fetch" per
connected client,
that fetchers go away with their clients, and that a killed fetcher fails
only its own client's requests (EIO) while the server stays up.
TAP output; exit 0 only if every case passes (77: server not built).
"""

import errno
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

nbd = N.import_nbd()

NCLIENTS = 3
IMG_SIZE = 8 * 1024 * 1024
TIMEOUT = 5.0

TMP = None
IMG = None
SRV = None
CLIENTS = []            # libnbd handles, in connection order
STATE = {}


# ---- libnbd with deadlines (the synchronous calls could block forever) ----

def run_until(h, done, timeout=TIMEOUT, what="operation"):
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError("%s did not finish in %.0f s" %
                                 (what, timeout))
        if h.aio_is_dead() or h.aio_is_closed():
            if done():
                return
            raise AssertionError("%s: connection dead" % what)
        h.poll(100)


def connect(sock=None):
    h = nbd.NBD()
    h.aio_connect_unix(sock or SRV.sock)
    run_until(h, lambda: not h.aio_is_connecting(), what="connect")
    assert h.aio_is_ready(), "handshake failed"
    return h


def pread(h, offset, length, timeout=TIMEOUT):
    """Read with a deadline; returns bytes or raises nbd.Error."""
    buf = nbd.Buffer(length)
    cookie = h.aio_pread(buf, offset)
    run_until(h, lambda: h.aio_command_completed(cookie), timeout, "read")
    return buf.to_bytearray()


def disconnect(h):
    try:
        h.aio_disconnect()
        run_until(h, lambda: h.aio_is_closed() or h.aio_is_dead(),
                  what="disconnect")
    except nbd.Error:
        pass


def read_ok(h):
    off = 1 << 20
    return bytes(pread(h, off, 65536)) == N.image_bytes(IMG, off, 65536)


# ---- /proc ----

def kids():
    """{comm: [pid]} of the supervisor's live children."""
    out = {}
    for pid, comm in N.children(SRV.pid):
        if comm != N.REMOVER_COMM:
            out.setdefault(comm, []).append(pid)
    return out


def fetchers():
    return kids().get(N.FETCHER_COMM, [])


def frontends():
    return kids().get(N.FRONTEND_COMM, [])


def launchers():
    return kids().get(N.LAUNCHER_COMM, [])


def wait_fetchers(n, timeout=5):
    return N.wait_until(lambda: len(fetchers()) == n, timeout)


# ---- cases ----

def test_idle_tree():
    """idle server: the supervisor (comm nbdcurld) has exactly two
    children, the front-end nbdcurld-fe and the fetcher launcher
    nbdcurld-launch, and no fetchers (no backend work before a client
    picks an export)"""
    st = N.proc_stat(SRV.pid)
    assert st and st[0] == "nbdcurld", "supervisor comm %r" % (st,)
    k = N.wait_until(lambda: kids() if len(frontends()) == 1 and len(launchers()) == 1
                     else None, 5)
    assert k, "no front-end or launcher: %r" % kids()
    assert set(k) == {N.FRONTEND_COMM, N.LAUNCHER_COMM}, "children %r" % k
    STATE["fe"] = frontends()[0]


def test_handshake_spawns_no_fetcher():
    """a client in the middle of the handshake has no fetcher yet"""
    with SRV.connect() as c:
        c.start()
        c.opt_list()
        time.sleep(0.3)
        assert fetchers() == [], "fetcher before an export was chosen"


def test_one_fetcher_per_client():
    """N clients connected -> exactly one nbdcurld-fe, one nbdcurld-launch
    and N nbdcurld-fetch, all children of the supervisor (the front-end
    cannot fork; the launcher forks fetchers as the supervisor's
    children, and has none of its own)"""
    for _ in range(NCLIENTS):
        CLIENTS.append(connect())
    for h in CLIENTS:
        assert read_ok(h), "read through a fresh client"
    assert wait_fetchers(NCLIENTS), "fetchers: %r" % kids()
    k = kids()
    assert k.get(N.FRONTEND_COMM) == [STATE["fe"]], \
        "front-end changed: %r" % k
    assert set(k) == {N.FRONTEND_COMM, N.FETCHER_COMM, N.LAUNCHER_COMM}, k
    assert len(k[N.LAUNCHER_COMM]) == 1, k
    assert N.children(STATE["fe"]) == [], \
        "front-end has children: %r" % N.children(STATE["fe"])
    assert N.children(k[N.LAUNCHER_COMM][0]) == [], \
        "launcher has children: %r" % N.children(k[N.LAUNCHER_COMM][0])


def mapped_libraries(pid):
    """Base names of the shared objects mapped into process pid."""
    with open("/proc/%d/maps" % pid) as f:
        return {os.path.basename(line.split()[5]) for line in f
                if len(line.split()) >= 6 and ".so" in line.split()[5]}


def test_libcurl_only_in_fetchers():
    """only fetchers and the fetcher launcher map libcurl and OpenSSL: the
    supervisor and the front-end have their own executables without them
    (each process that loads them pays about 1 MiB of private
    relocations), and every fetcher maps them (the control)"""
    def curl_libs(pid):
        return sorted(name for name in mapped_libraries(pid)
                      if name.startswith(("libcurl", "libssl", "libcrypto")))
    assert curl_libs(SRV.pid) == [], "supervisor maps %r" % curl_libs(SRV.pid)
    assert curl_libs(STATE["fe"]) == [], "front-end maps %r" % curl_libs(STATE["fe"])
    for pid in fetchers():
        libs = curl_libs(pid)
        assert any(n.startswith("libcurl") for n in libs), \
            "fetcher %d maps no libcurl: %r" % (pid, libs)


def test_close_one_client():
    """closing one client ends its fetcher: N-1 fetchers within seconds"""
    disconnect(CLIENTS.pop(0))
    assert wait_fetchers(NCLIENTS - 1), "fetchers: %r" % kids()
    for h in CLIENTS:
        assert read_ok(h)


def test_kill_fetcher():
    """kill -9 one fetcher: exactly its client's next read fails with EIO,
    the other clients still read, the server stays up"""
    victims = fetchers()
    assert len(victims) == len(CLIENTS), (victims, CLIENTS)
    os.kill(victims[0], signal.SIGKILL)
    assert wait_fetchers(len(CLIENTS) - 1), "fetchers: %r" % kids()
    failed = []
    for i, h in enumerate(CLIENTS):
        try:
            ok = read_ok(h)
            assert ok, "client %d: wrong data" % i
        except nbd.Error as e:
            failed.append((i, e))
    assert len(failed) == 1, "clients failing: %r" % failed
    i, e = failed[0]
    assert e.errnum == errno.EIO, "client %d: %s (errno %s), want EIO" % (
        i, e, e.errnum)
    # Its later requests fail too (no hang, no wrong data).
    h = CLIENTS[i]
    try:
        read_ok(h)
        raise AssertionError("orphaned client read succeeded")
    except nbd.Error:
        pass
    except AssertionError as e:
        if "connection dead" not in str(e):
            raise
    assert SRV.alive() and N.pid_alive(STATE["fe"]), "server went down"
    # A new client gets a new fetcher and works.
    h = connect()
    CLIENTS.append(h)
    assert read_ok(h)


def test_close_all_clients():
    """closing every client -> 0 fetchers, the same front-end still alive
    and still serving"""
    while CLIENTS:
        disconnect(CLIENTS.pop())
    assert wait_fetchers(0), "fetchers left: %r" % kids()
    assert frontends() == [STATE["fe"]], "front-end: %r" % kids()
    h = connect()
    try:
        assert read_ok(h)
    finally:
        disconnect(h)
    assert wait_fetchers(0), "fetchers left: %r" % kids()


def test_abrupt_close():
    """clients that vanish without DISC (socket closed mid-request) also
    release their fetchers"""
    conns = []
    for _ in range(2):
        c = SRV.connect()
        c.handshake("", structured=True)
        c.request(N.CMD_READ, 0, 1 << 20)
        conns.append(c)
    assert wait_fetchers(2), "fetchers: %r" % kids()
    for c in conns:
        c.close()
    assert wait_fetchers(0), "fetchers left: %r" % kids()
    assert frontends() == [STATE["fe"]]


def tcp_socket_inodes():
    """Inodes of every TCP socket of this network namespace."""
    inodes = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                for line in f.readlines()[1:]:
                    inodes.add(line.split()[9])
        except OSError:
            pass
    return inodes


def socket_inodes(pid):
    out = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(target[8:-1])
    return out


def test_spares():
    """--spare-fetchers 2 with an http export: the idle server has its
    front-end and exactly 2 fetchers, each locked down already (seccomp,
    no capabilities) and with no TCP socket, and the web server got no
    request; a client takes one (it reads right) and a new one takes its
    place: 3 fetchers while it is connected, 2 once it has gone."""
    www = os.path.join(TMP, "spare-www")
    os.makedirs(www, exist_ok=True)
    os.link(IMG, os.path.join(www, "disk.img"))
    log = os.path.join(TMP, "spare-web.log")
    web, port = N.start_web_server(www, log)
    srv = N.Server(["--spare-fetchers", "2", "-r",
                    "http://127.0.0.1:%d/good/disk.img" % port], TMP, "spares").start()
    try:
        spares = lambda: [p for p, comm in N.children(srv.pid) if comm == N.FETCHER_COMM]
        assert N.wait_until(lambda: len(spares()) == 2, 5), "spares: %r" % N.children(srv.pid)
        time.sleep(0.5)
        tcp = tcp_socket_inodes()
        for pid in spares():
            with open("/proc/%d/status" % pid) as f:
                status = f.read()
            assert "\nSeccomp:\t2" in status, "spare %d has no seccomp filter" % pid
            assert re.search(r"\nCapEff:\s*0+\n", status), "spare %d has capabilities" % pid
            assert not (socket_inodes(pid) & tcp), "spare %d has a TCP socket" % pid
        assert not os.path.exists(log) or os.path.getsize(log) == 0, \
            "a spare went to the web server: %s" % open(log).read()
        h = connect(srv.sock)
        try:
            assert read_ok(h), "wrong data through a spare"
            assert N.wait_until(lambda: len(spares()) == 3, 5), "not replaced: %r" % spares()
        finally:
            disconnect(h)
        assert N.wait_until(lambda: len(spares()) == 2, 5), "after: %r" % spares()
    finally:
        srv.stop()
        web.kill()
        web.wait()


CASES = [
    test_idle_tree,
    test_handshake_spawns_no_fetcher,
    test_spares,
    test_one_fetcher_per_client,
    test_libcurl_only_in_fetchers,
    test_close_one_client,
    test_kill_fetcher,
    test_close_all_clients,
    test_abrupt_close,
]


def disconnect_all():
    for h in CLIENTS:
        disconnect(h)


def main():
    # Per-client fetchers are what these cases count: no spares here
    # (the default; test_spares has its own server with them).
    return N.run_cases_against_server(CASES, IMG_SIZE, 120, globals(), teardown=disconnect_all)


if __name__ == "__main__":
    sys.exit(main())
