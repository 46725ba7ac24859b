#!/usr/bin/python3
"""Idle handshaking connections cannot crowd out a good client.

Defect guarded against: a front-end that stops accepting once it serves
its maximum of clients (--max-clients, 256 by default), so that
connections that never send a byte after the greeting keep every
newcomer in the listen backlog until the handshake timeout (30 s) drops
them.

For TCP on 127.0.0.1 and for a Unix socket, starts `$NBDCURLD -f -r
file:///IMG`, opens 500 connections that never send anything (more than
MAX_CLIENTS), then times a good client (connect, handshake with
structured replies, GO, a 64 KiB read, compared with the image): it must
be served within 1 s (x the time factor: 3 under a sanitizer, or
$NBDCURLD_TEST_TIME_FACTOR).  Over TCP the good client comes from the same
address as all the idle ones, so a per-address limit must not keep it out
either (the policy: the newcomer gets in, the oldest handshaking
connection goes).  The exact per-address number is not checked.  The
front-end must stay the same process.
TAP output.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

IMG_SIZE = 4 * 1024 * 1024
IDLE = 500
LIMIT = 1.0 * N.time_factor()
GIVE_UP = 10.0 * N.time_factor()    # how long a failing run waits

TMP = None
IMG = None


def good_client(srv, deadline):
    return N.time_to_serve(srv.sock, IMG, deadline)


def idle_flood(tcp, name):
    srv = N.Server(["-r", "file://" + IMG], TMP, name, tcp=tcp).start()
    conns = []
    try:
        fe = N.wait_until(srv.frontend, 5)
        assert fe, "no front-end"
        base = good_client(srv, GIVE_UP)
        t0 = time.monotonic()
        for _ in range(IDLE):
            conns.append(N.Conn(srv.sock, timeout=5))
        N.diag("%d idle connections in %.2f s" % (IDLE, time.monotonic() - t0))
        time.sleep(0.5)             # the front-end takes them in
        took = good_client(srv, GIVE_UP)
        N.diag("good client served in %s (%.3f s on an idle server; limit %.1f s)"
               % ("%.3f s" % took if took is not None else
                  "more than %.0f s" % GIVE_UP, base or -1, LIMIT))
        assert srv.alive() and srv.frontend() == fe, "the front-end died:\n" + \
            srv.log_text()[-2000:]
        assert took is not None and took <= LIMIT, \
            "a good client waited %s behind %d idle connections (limit %.1f s)" % (
                "%.2f s" % took if took is not None else "over %.0f s" % GIVE_UP,
                IDLE, LIMIT)
    finally:
        for c in conns:
            c.close()
        srv.stop()


def test_idle_tcp():
    """TCP, 500 idle connections from 127.0.0.1: a good client from the same
    address is served within 1 s"""
    idle_flood(True, "tcp")


def test_idle_unix():
    """Unix socket, 500 idle connections: a good client is served within
    1 s"""
    idle_flood(False, "unix")


def main():
    N.raise_nofile(4 * IDLE)
    return N.run_cases_with_image([test_idle_tcp, test_idle_unix], IMG_SIZE, 150,
                                  globals())


if __name__ == "__main__":
    sys.exit(main())
