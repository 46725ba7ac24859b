#!/usr/bin/python3
"""A client that never reads its replies does not slow the others.

Defect guarded against: the front-end serves every client from one
event loop, so a client whose replies back up (its socket full, its
queues at their limits) must only stop being served itself: it must not
make the loop wait, spin, or hold the memory or data the others need.

For a file: export and an http: export (tests/lib/web-server.py), starts
`$NBDCURLD -f -r -U SOCK URL` and times two nbdcopy copies of the 64 MiB
image at once (each to a file, compared with the image afterwards).  Then
a raw client (SO_RCVBUF 4 KiB) finishes GO and sends 64 reads of 32 MiB
without ever reading a reply, and the two copies run again while it
stays connected.  They must be byte-exact and take at most 4 x the time
without the bad client + 2 s (x the time factor): a loose bound, this
checks that nobody is starved, not performance.
TAP output.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

IMG_SIZE = 64 * 1024 * 1024
COPIES = 2
BIG_READ = 32 * 1024 * 1024
BIG_READS = 64

TMP = None
IMG = None
WEB_PORT = None


def copies(srv, what):
    """COPIES nbdcopy copies at once, byte-exact; returns their wall time."""
    try:
        return N.timed_copies(srv.uri(), IMG, TMP, COPIES, 60 * N.time_factor())
    except AssertionError as e:
        raise AssertionError("%s: %s" % (what, e))


def unread_client(url, name):
    F = N.time_factor()
    srv = N.Server(["-r", url], TMP, name).start()
    bad = None
    try:
        fe = N.wait_until(srv.frontend, 5)
        copies(srv, "warm-up")
        base = copies(srv, "without the bad client")
        bad = N.unread_client(srv.sock, IMG_SIZE, BIG_READS, BIG_READ)
        time.sleep(1)
        loaded = copies(srv, "with the bad client")
        limit = 4 * base + 2 * F
        N.diag("%s: %d copies of %d MiB: %.2f s alone, %.2f s next to a client "
               "that does not read (limit %.2f s)" % (
                   name, COPIES, IMG_SIZE >> 20, base, loaded, limit))
        assert srv.alive() and srv.frontend() == fe, "the front-end died"
        assert loaded <= limit, \
            "copies took %.2f s next to a client that does not read, %.2f s alone" % (
                loaded, base)
    finally:
        if bad:
            bad.close()
        srv.stop()


def test_file():
    """file: export: two copies next to a client that never reads are
    byte-exact and at most 4 x + 2 s slower"""
    unread_client("file://" + IMG, "file")


def test_http():
    """http: export: two copies next to a client that never reads are
    byte-exact and at most 4 x + 2 s slower"""
    unread_client("http://127.0.0.1:%d/good/img" % WEB_PORT, "http")


def main():
    if subprocess.call(["sh", "-c", "command -v nbdcopy"],
                       stdout=subprocess.DEVNULL) != 0:
        print("1..0 # SKIP nbdcopy is not installed")
        return 77
    return N.run_cases_with_image([test_file, test_http], IMG_SIZE, 300, globals(),
                                  web=True)


if __name__ == "__main__":
    sys.exit(main())
