#!/usr/bin/python3
"""Replies queued towards a client that does not read are bounded in memory.

Defect guarded against: a bound on the reply bytes queued towards a
client (MAX_QUEUED_BYTES) that counts only the bytes of each reply, not
the memory that holds it: a client that pipelines tiny requests answered
by 16-byte replies (here NBD_CMD_READ of length 0: EINVAL, simple
replies) and never reads its socket would make the front-end hold
hundreds of MiB.  The memory is what is bounded
(src/frontend/limits-queues.h).

Starts `$NBDCURLD -f -r -U SOCK file:///IMG`.  One raw client (SO_RCVBUF
4 KiB) finishes the handshake without structured replies, then sends
length-0 reads as fast as the front-end takes them, for up to 10 s or
160 MB of requests or until it takes none for 2 s, and never reads a
reply.  Checks that:
  - the front-end's RSS never grows by more than the hard limit on one
    client's queued memory, CLIENT_QUEUE_MEMORY_LIMIT (4 MiB), + 12 MiB
    (16 MiB; under a sanitizer, 3 x the limit + 32 MiB, for its
    per-allocation overhead and shadow memory) over its RSS before the
    flood (a3c1fbb: 193-212 MiB);
  - the flooding client was slowed (the front-end stopped taking its
    requests) or closed, and if closed, the front-end logged a line;
  - meanwhile another client reads 1 MiB right, and the front-end is the
    same process throughout.
TAP output.
"""

import os
import re
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

IMG_SIZE = 8 * 1024 * 1024
MIB = 1024 * 1024
SLACK = 12 * MIB
FLOOD_SECONDS = 10.0
FLOOD_BYTES = 160 * 1000 * 1000
STALL_SECONDS = 2.0         # nothing taken for this long: slowed


def limit(name):
    with open(os.path.join(N.ROOT, "src", "frontend", "limits-queues.h")) as f:
        m = re.search(r"#define %s\s+\((\d+)u \* 1024 \* 1024\)" % name, f.read())
    return int(m.group(1)) * MIB


QUEUE_LIMIT = limit("CLIENT_QUEUE_MEMORY_LIMIT")
BOUND = (3 * QUEUE_LIMIT + 32 * MIB) if N.sanitized() else QUEUE_LIMIT + SLACK

TMP = None
IMG = None
SRV = None
STATE = {}


def flood(fe, rss0):
    """Send length-0 reads without reading any reply.  Returns (bytes sent,
    peak front-end RSS growth, closed?, seconds).  Stops early once the
    growth passes twice the bound (no point hurting the machine)."""
    c = SRV.connect(rcvbuf=4096)
    s = c.sock
    c.handshake(structured=False)
    STATE["flooder"] = c
    req = struct.pack(">IHHQQI", N.REQUEST_MAGIC, 0, N.CMD_READ, 1, 0, 0)
    batch = req * (256 * 1024 // len(req))
    sent, peak, closed = 0, 0, False
    t0 = time.monotonic()
    last_sample = 0.0
    s.settimeout(0.1)
    pos = 0
    last_progress = t0
    while sent < FLOOD_BYTES and time.monotonic() - t0 < FLOOD_SECONDS:
        try:
            n = s.send(batch[pos:])
            sent += n
            pos = (pos + n) % len(batch)
            last_progress = time.monotonic()
        except socket.timeout:
            if time.monotonic() - last_progress > STALL_SECONDS:
                break
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
        now = time.monotonic()
        if now - last_sample > 0.1:
            last_sample = now
            peak = max(peak, N.rss_kib(fe) * 1024 - rss0)
            if peak > 2 * BOUND:
                break
    time.sleep(0.5)                 # what it took last is processed now
    peak = max(peak, N.rss_kib(fe) * 1024 - rss0,
               N.rss_kib(fe, "VmHWM") * 1024 - rss0)
    return sent, peak, closed, time.monotonic() - t0


def test_queue_memory_bounded():
    """a client that pipelines length-0 reads and never reads: the
    front-end's RSS grows by at most CLIENT_QUEUE_MEMORY_LIMIT + 12 MiB
    (more under a sanitizer), and the client is slowed or closed"""
    fe = N.wait_until(SRV.frontend, 5)
    assert fe, "no front-end"
    STATE["fe"] = fe
    # A client first, so the RSS before counts what one client costs.
    with SRV.connect() as c:
        c.handshake()
        assert c.read(0, 4096).data == N.image_bytes(IMG, 0, 4096)
    rss0 = N.rss_kib(fe) * 1024
    lines0 = len(SRV.log_text().splitlines())
    sent, peak, closed, secs = flood(fe, rss0)
    N.diag("sent %.0f MB of requests (%d) in %.1f s; front-end RSS %d MiB "
           "before, peak growth %d MiB (bound %d MiB); %s" % (
               sent / 1e6, sent // 28, secs, rss0 // MIB, peak // MIB,
               BOUND // MIB, "closed" if closed else "still open"))
    assert N.pid_alive(fe) and SRV.frontend() == fe, "the front-end died"
    assert peak <= BOUND, \
        "front-end RSS grew by %d MiB (bound %d MiB) for %d queued replies" % (
            peak // MIB, BOUND // MIB, sent // 28)
    if closed:
        assert len(SRV.log_text().splitlines()) > lines0, \
            "the flooding client was closed without a log line"
    else:
        # Slowed: the front-end took far less than we could send in the
        # time (a client that may queue without limit takes it all).
        assert sent < FLOOD_BYTES, \
            "the front-end took all %d MB without slowing the client" % (
                FLOOD_BYTES // 1000000)


def test_other_client_served():
    """while the flooding client is still connected and unread, another
    client reads 1 MiB right"""
    F = N.time_factor()
    with SRV.connect(timeout=10 * F) as c:
        c.handshake()
        off = 3 * MIB + 4095
        r = c.read(off, MIB, timeout=10 * F)
        assert r.error == 0 and r.data == N.image_bytes(IMG, off, MIB), \
            "wrong read: %r" % r
    fe = STATE.get("fe")
    assert fe and N.pid_alive(fe) and SRV.frontend() == fe, "the front-end died"


def teardown():
    if "flooder" in STATE:
        STATE["flooder"].close()


def main():
    return N.run_cases_against_server(
        [test_queue_memory_bounded, test_other_client_served],
        IMG_SIZE, 120, globals(), teardown)


if __name__ == "__main__":
    sys.exit(main())
