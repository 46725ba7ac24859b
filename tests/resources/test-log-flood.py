#!/usr/bin/python3
"""A flood of misbehaving clients cannot flood the log.

Every client that sends a client flag the server does not know costs one
warning line in the front-end.  Starts `$NBDCURLD -f -r -U SOCK
file:///IMG`, sends three bursts' worth of such clients as fast as it can,
and checks that:
  - the front-end wrote at most LOG_BURST + LOG_LINES_PER_SECOND x the
    elapsed time of those lines (+1), and at least a burst of them (the
    limit drops only past the burst);
  - after a pause, the next line is preceded by the number of lines
    dropped, and that number accounts for every client;
  - a good client still reads right.
The limits are read from src/common/limits-log.h.  TAP output.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

WARNING = "unknown client flags"


def limit(name):
    with open(os.path.join(N.ROOT, "src", "common", "limits-log.h")) as f:
        m = re.search(r"#define %s\s+(\d+)u" % name, f.read())
    return int(m.group(1))


BURST = limit("LOG_BURST")
RATE = limit("LOG_LINES_PER_SECOND")
TMP = None
IMG = None
SRV = None
STATE = {}


def bad_client():
    """One client with an unknown client flag: warned about and closed."""
    c = SRV.connect()
    try:
        c.read_greeting()
        c.send_client_flags(N.FLAG_C_FIXED_NEWSTYLE | (1 << 5))
        c.assert_closed(what="a client with an unknown flag")
    finally:
        c.close()


def warnings():
    return SRV.log_text().count(WARNING)


def test_flood_is_limited():
    """3 x LOG_BURST bad clients as fast as possible: at most a burst plus
    the rate over the elapsed time are logged, and at least a burst"""
    n = 3 * BURST
    start = time.monotonic()
    for _ in range(n):
        bad_client()
    elapsed = time.monotonic() - start
    time.sleep(0.3)             # let the front-end finish writing
    logged = warnings()
    most = BURST + int(RATE * elapsed) + 1
    STATE.update(n=n, logged=logged)
    assert logged <= most, "%d lines for %d clients in %.2f s (at most %d)" % (
        logged, n, elapsed, most)
    assert logged >= BURST, "only %d lines: dropped inside the burst" % logged
    print("# %d clients in %.2f s: %d lines logged" % (n, elapsed, logged))


def test_dropped_lines_are_counted():
    """after a pause the next line comes after 'N log lines dropped', and
    the lines logged and the counts dropped add up to every client"""
    time.sleep(1.2)             # room for a line again
    bad_client()
    time.sleep(0.3)
    text = SRV.log_text()
    # One count each time a line gets through again: during a slow flood
    # the bucket refills now and then, so there may be several.
    counts = list(re.finditer(r"nbdcurld: front-end: warning: (\d+) log lines dropped",
                              text))
    assert counts, "no count of dropped lines:\n" + text[-2000:]
    dropped = sum(int(m.group(1)) for m in counts)
    assert WARNING in text[counts[-1].end():], "the line after the last count is missing"
    logged = warnings()
    assert logged + dropped == STATE["n"] + 1, \
        "%d logged + %d dropped != %d clients" % (logged, dropped, STATE["n"] + 1)


def test_good_client_still_served():
    """a good client reads the image right after the flood"""
    c = SRV.connect()
    try:
        c.handshake()
        r = c.read(4096, 8192)
        assert r.error == 0 and r.data == N.image_bytes(IMG, 4096, 8192), \
            "read: %r" % r
    finally:
        c.close()
    assert SRV.alive(), "server died"


def main():
    global TMP, IMG, SRV
    N.require_binary()
    N.watchdog(120)
    TMP = N.tmpdir()
    IMG = os.path.join(TMP, "img")
    N.make_image(IMG, 1024 * 1024)
    SRV = N.Server(["-r", "file://" + IMG], TMP).start()
    try:
        return N.Tap([test_flood_is_limited, test_dropped_lines_are_counted,
                      test_good_client_still_served]).run()
    finally:
        SRV.stop()
        N.rmtree(TMP)


if __name__ == "__main__":
    sys.exit(main())
