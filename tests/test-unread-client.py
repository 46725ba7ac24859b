#!/usr/bin/python3
"""A client that never reads its replies does not slow the others.

Defect covered (issue 10, 6): the front-end serves every client from one
event loop, so a client whose replies back up (its socket full, its
queues at their limits) must only stop being served itself: it must not
make the loop wait, spin, or hold the memory or data the others need.

For a file: export and an http: export (tests/web-server.py), starts
`$NBDCURLD -f -r -U SOCK URL` and times two nbdcopy copies of the 64 MiB
image at once (each to a file, compared with the image afterwards).  Then
a raw client (SO_RCVBUF 4 KiB) finishes GO and sends 64 reads of 32 MiB
without ever reading a reply, and the two copies run again while it
stays connected.  They must be byte-exact and take at most 4 x the time
without the bad client + 2 s (x the time factor): a loose bound, this
checks that nobody is starved, not performance.
TAP output.
"""

import filecmp
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbdraw as N                                       # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
IMG_SIZE = 64 * 1024 * 1024
COPIES = 2
BIG_READ = 32 * 1024 * 1024
BIG_READS = 64

TMP = None
IMG = None
WEB_PORT = None


def copies(srv, what):
    """COPIES nbdcopy copies at once; returns their wall time, asserting
    each finished in time and byte-exact."""
    F = N.time_factor()
    outs = [os.path.join(TMP, "copy%d" % i) for i in range(COPIES)]
    for o in outs:
        if os.path.exists(o):
            os.unlink(o)
    t0 = time.monotonic()
    procs = [subprocess.Popen(["nbdcopy", srv.uri(), o], stderr=subprocess.PIPE)
             for o in outs]
    try:
        for p in procs:
            p.wait(60 * F)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    took = time.monotonic() - t0
    for p, o in zip(procs, outs):
        assert p.returncode == 0, "%s: nbdcopy failed: %s" % (
            what, p.stderr.read().decode(errors="replace")[-500:])
        assert filecmp.cmp(o, IMG, shallow=False), "%s: %s differs" % (what, o)
    return took


def unread_client(url, name):
    F = N.time_factor()
    srv = N.Server(["-r", url], TMP, name).start()
    bad = None
    try:
        fe = N.wait_until(srv.frontend, 5)
        copies(srv, "warm-up")
        base = copies(srv, "without the bad client")
        bad = srv.connect(rcvbuf=4096)
        bad.handshake(structured=False)
        for i in range(BIG_READS):
            bad.request(N.CMD_READ, (i * BIG_READ) % (IMG_SIZE - BIG_READ + 1),
                        BIG_READ)
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
    global TMP, IMG, WEB_PORT
    N.require_binary()
    if subprocess.call(["sh", "-c", "command -v nbdcopy"],
                       stdout=subprocess.DEVNULL) != 0:
        print("1..0 # SKIP nbdcopy is not installed")
        return 77
    N.watchdog(300)
    TMP = N.tmpdir()
    www = os.path.join(TMP, "www")
    os.mkdir(www)
    IMG = os.path.join(www, "img")
    N.make_image(IMG, IMG_SIZE)
    web = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "web-server.py"), www],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           preexec_fn=N._pdeathsig)
    try:
        WEB_PORT = int(web.stdout.readline())
        return N.Tap([test_file, test_http]).run()
    finally:
        web.kill()
        web.wait()
        N.rmtree(TMP)


if __name__ == "__main__":
    sys.exit(main())
