#!/usr/bin/python3
"""Running out of file descriptors stops clients, never the server.

Defect guarded against: descriptor exhaustion stopping the whole server.
With a low RLIMIT_NOFILE the front-end cannot take the descriptors of a
new fetcher (a truncated SCM_RIGHTS message: EPROTO), which must not end
it and every client with it; and once accept() fails with EMFILE the
front-end must not spin on its listening socket at full CPU.

Each case starts `$NBDCURLD -f -r -U SOCK file:///IMG` under a lowered
RLIMIT_NOFILE (as after `ulimit -n N`, which the supervisor, the
front-end and the fetchers inherit) and checks:
  - nofile 128: clients that finish NBD_OPT_GO one after another until new
    ones are refused.  Then the supervisor and the same front-end still
    run, every client that got in reads right, every client beyond the
    limit was refused cleanly (closed, an NBD error reply, or left waiting
    for the greeting in the listen backlog, never a handshake that
    stopped half-way), and after they all close a new client reads right.
  - nofile 128: 200 connections held open in the handshake (more than
    fit): over 2 s the front-end uses less than 10% of one CPU (it does
    not spin on accept), it stays up, and a new client reads right once
    they close.
TAP output.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402
from nbdraw import Closed, Timeout, ProtocolError        # noqa: E402

IMG_SIZE = 4 * 1024 * 1024
MAX_TRIES = 150             # more than fit in 128 descriptors at any cost
SPIN_CONNECTIONS = 200      # more than fit in 128
SPIN_WINDOW = 2.0           # seconds of CPU time measured
SPIN_MAX_SHARE = 0.10       # of one CPU; a spinning one gets 35-99% (by load)

TMP = None
IMG = None
F = N.time_factor()


def read_ok(c, i):
    off = (i * 65536 + 512) % (IMG_SIZE - 4096)
    r = c.read(off, 4096, timeout=10 * F)
    return r.error == 0 and r.data == N.image_bytes(IMG, off, 4096)


def try_client(srv):
    """One client through GO.  Returns (conn, None) when it is served, or
    (None, how it was refused); raises AssertionError if it was left
    hanging half-way through the handshake."""
    try:
        c = srv.connect(timeout=10 * F)
    except OSError as e:
        return None, "connect: %s" % e
    try:
        c.recv_exact(18, timeout=2 * F)         # the greeting
    except Closed as e:
        c.close()
        return None, "closed before the greeting (%s)" % e
    except Timeout:
        c.close()
        return None, "not accepted (no greeting)"
    try:
        c.send_client_flags()
        c.structured_reply()
        c.go()
        return c, None
    except Closed as e:
        c.close()
        return None, "closed in the handshake (%s)" % e
    except ProtocolError as e:
        c.close()
        if "GO failed" in str(e) or "refused" in str(e):
            return None, "error reply (%s)" % e
        raise
    except Timeout as e:
        c.close()
        raise AssertionError("a client beyond the limit was left hanging "
                             "in the handshake: %s" % e)


def new_client_reads(srv):
    """After the others left, a new client gets in and reads right (the
    front-end may need a moment to see them go)."""
    def attempt():
        c, why = try_client(srv)
        if c is None:
            return None
        with c:
            return read_ok(c, 7)
    assert N.wait_until(attempt, 10 * F, step=0.2), \
        "no new client could read after the others closed"


def close_all(conns):
    while conns:
        conns.pop().close()


def start(nofile, name):
    srv = N.Server(["-r", "file://" + IMG], TMP, name, nofile=nofile).start()
    fe = N.wait_until(srv.frontend, 5)
    assert fe, "no front-end"
    return srv, fe


def check_up(srv, fe):
    assert srv.alive(), "the supervisor exited (status %s):\n%s" % (
        srv.proc.returncode, srv.log_text()[-2000:])
    assert N.pid_alive(fe) and srv.frontend() == fe, \
        "the front-end died:\n" + srv.log_text()[-2000:]


def test_clients_until_refused():
    """nofile 128: clients through GO until refused; the server and the same
    front-end stay up, clients that got in read right, refused ones were
    refused cleanly, a new client reads right after they close"""
    srv, fe = start(128, "fd128a")
    served, refused = [], []
    try:
        for i in range(MAX_TRIES):
            c, why = try_client(srv)
            if c is not None:
                served.append(c)
                continue
            refused.append(why)
            if len(refused) >= 3 or not srv.alive():
                break
        N.diag("%d clients served, then refused: %s" % (len(served), refused))
        check_up(srv, fe)
        assert len(served) >= 3, "only %d clients served" % len(served)
        assert refused, "no client refused: the limit was not reached"
        for i, c in enumerate(served):
            assert read_ok(c, i), "client %d read wrong data" % i
        close_all(served)
        new_client_reads(srv)
        check_up(srv, fe)
    finally:
        close_all(served)
        srv.stop()


def test_no_spin_on_emfile():
    """nofile 128: 200 handshaking connections held open; the front-end
    uses under 10% of a CPU over 2 s, stays up, and serves a new client
    after they close"""
    srv, fe = start(128, "fd128b")
    conns = []
    try:
        for _ in range(SPIN_CONNECTIONS):
            try:
                conns.append(srv.connect(timeout=2 * F))
            except OSError:
                break
        time.sleep(1.0)                 # let it accept what it can
        check_up(srv, fe)
        t0, c0 = time.monotonic(), N.cpu_seconds(fe)
        time.sleep(SPIN_WINDOW)
        share = (N.cpu_seconds(fe) - c0) / (time.monotonic() - t0)
        N.diag("%d connections open; front-end CPU %.0f%%" %
               (len(conns), 100 * share))
        check_up(srv, fe)
        assert share < SPIN_MAX_SHARE, \
            "the front-end uses %.0f%% of a CPU with %d connections waiting" % (
                100 * share, len(conns))
        close_all(conns)
        new_client_reads(srv)
        check_up(srv, fe)
    finally:
        close_all(conns)
        srv.stop()


def main():
    return N.run_cases_with_image([test_clients_until_refused, test_no_spin_on_emfile],
                                  IMG_SIZE, 150, globals())


if __name__ == "__main__":
    sys.exit(main())
