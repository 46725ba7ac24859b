#!/usr/bin/python3
"""200 clients that reset their connection mid-request leave nothing behind.

Defect guarded against: resources of clients that vanish while
requests are in flight (their fetcher, its socket, data area and pipe,
queued replies) must all be released; a leak per abrupt disconnect adds up
to an exhausted server.

Starts `$NBDCURLD -f -r -i 127.0.0.1 -p PORT file:///IMG`.  After one
warm-up client, records the front-end's open descriptors, the number of
nbdcurld processes and the front-end's RSS.  Then 200 clients (8 at a
time) each connect over TCP, finish GO, send four 1 MiB reads without
reading the replies, and close with SO_LINGER 0 (a TCP RST); every third
one resets right after sending GO instead, while its fetcher is made.  Checks that
within 10 s (x the time factor) the descriptors and processes are back to
exactly their starting numbers, that the front-end's RSS is within 8 MiB
of its start (32 MiB under a sanitizer, whose quarantine keeps freed
memory), and that a new client reads right.
TAP output.
"""

import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

IMG_SIZE = 32 * 1024 * 1024
DISCONNECTS = 200
PARALLEL = 8
# Under a sanitizer freed memory is not reused at once (ASan's quarantine
# keeps up to 256 MiB of it), so 200 closed clients' records (19 KiB
# each) and queues show in the RSS there without being leaked.
RSS_SLACK_KIB = (32 if N.sanitized() else 8) * 1024
MIB = 1024 * 1024

TMP = None
IMG = None
SRV = None


def read_right(srv, off=5 * MIB + 9):
    with N.Conn(srv.sock, timeout=10 * N.time_factor()) as c:
        c.handshake()
        r = c.read(off, 65536)
        return r.error == 0 and r.data == N.image_bytes(IMG, off, 65536)


def snapshot(srv, fe):
    return {"fds": N.fd_count(fe), "procs": len(srv.processes()),
            "rss": N.rss_kib(fe)}


def test_nothing_left_behind():
    """200 abrupt disconnects with reads in flight: the front-end's fds and
    the nbdcurld processes back to their start, RSS within 8 MiB, and a new
    client reads right"""
    F = N.time_factor()
    fe = N.wait_until(SRV.frontend, 5)
    assert fe, "no front-end"
    assert read_right(SRV), "warm-up read"
    # Its fetcher exits after it: wait for the idle state.
    N.wait_until(lambda: len(SRV.processes()) == 2, 10 * F)
    before = snapshot(SRV, fe)
    errors = []

    def worker(k):
        for i in range(k, DISCONNECTS, PARALLEL):
            try:
                N.abrupt_client(SRV.sock, i, IMG_SIZE, 10 * F)
            except Exception as e:
                errors.append("client %d: %s: %s" % (i, type(e).__name__, e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(PARALLEL)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    peak_procs = len(SRV.processes())
    back = N.wait_until(lambda: (snapshot(SRV, fe)["fds"] == before["fds"] and
                                 snapshot(SRV, fe)["procs"] == before["procs"]),
                        10 * F, step=0.2)
    after = snapshot(SRV, fe)
    N.diag("before %r, after %r (%d processes just after the last reset)" % (
        before, after, peak_procs))
    assert SRV.frontend() == fe, "the front-end died"
    assert not errors, "%d clients failed before their reset, e.g. %s" % (
        len(errors), errors[:3])
    assert back, "not back to the start after 10 s: before %r, after %r" % (
        before, after)
    assert after["rss"] <= before["rss"] + RSS_SLACK_KIB, \
        "front-end RSS %d KiB, was %d KiB" % (after["rss"], before["rss"])
    assert read_right(SRV), "a new client read wrong data"


def main():
    return N.run_cases_against_server([test_nothing_left_behind], IMG_SIZE, 150,
                                      globals(), tcp=True)


if __name__ == "__main__":
    sys.exit(main())
