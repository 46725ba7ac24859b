#!/usr/bin/python3
"""A fetcher that breaks the internal protocol (tests/hooks/hostile-fetcher.c,
only in the test binary) must cost its own client EIO and nothing else:
the front-end checks every fetcher message against the request it answers,
never forwards a wrong byte count, and keeps serving other clients.

The URL checker, the fetcher executable's other role, is a child too: a
malformed answer (tests/hooks/hostile-url-check.c) must stop nbdcurld at start
with a message that says so, and leave no process behind."""

import errno
import os
import subprocess
import sys
import tempfile
import time

import nbd

NBDCURLD_TEST = os.environ.get("NBDCURLD_TEST", "build/tests/nbdcurld-test")
MODES = ["payload", "area-offset", "unknown-id", "duplicate", "bad-type",
         "huge-payload", "die", "bad-open", "garbage", "pipe-lie", "pipe-short",
         "pipe-discard", "pipe-discard-flood", "started-twice", "started-late",
         "started-fields", "stats-size", "stage-unlent", "stage-beyond",
         "stage-twice", "stage-long", "stage-unasked"]
CHECKER_LIES = ["kind", "flags", "type", "trailing", "nul", "long-log",
                "relative-path", "http-path"]
SIZE = 1024 * 1024

results = []


def check(ok, name):
    results.append((ok, name))
    print(("ok" if ok else "not ok") + " %d - %s" % (len(results), name))


def pattern(offset, length):
    return bytes(((offset + i) & 0xff) for i in range(length))


def connect(sock, export):
    h = nbd.NBD()
    h.set_export_name(export)
    h.connect_unix(sock)
    return h


def read_fails_cleanly(sock, export):
    """Reads through a hostile fetcher never return wrong data, and the
    misbehaviour is caught: at least one read fails.  (A duplicated reply
    is only wrong from its second copy on, so the first read of that mode
    may succeed, with the right bytes.)"""
    try:
        h = connect(sock, export)
    except nbd.Error:
        return True            # refused at open (bad-open): fine
    failures = 0
    try:
        for off, length in ((0, 4096), (12345, 777), (SIZE - 1, 1), (99, 99)):
            try:
                buf = h.pread(length, off)
            except nbd.Error as e:
                # EIO while the connection lasts; afterwards libnbd may
                # report the connection itself.  A fetcher that lies about
                # the data pipe gets its client cut off (the reply header
                # is out already): libnbd says "server disconnected" (no
                # errno), then EINVAL for the dead handle.  Never data.
                dead = h.aio_is_dead()
                if e.errnum not in (errno.EIO, errno.ENOTCONN, errno.ESHUTDOWN,
                                    errno.ECONNRESET, errno.EPIPE, None) and \
                        not (dead and e.errnum in (0, errno.EINVAL)):
                    return False
                failures += 1
                continue
            if buf != pattern(off, length):
                return False
    finally:
        try:
            h.shutdown()
        except nbd.Error:
            pass
    return failures > 0


def start_with_checker_lie(mode):
    """nbdcurld-test with an export whose URL checker lies; returns
    (exit status, stderr, processes left with the server's name)."""
    url = "http://127.0.0.1:9/disk.img#checker-lie=%s" % mode
    p = subprocess.run([NBDCURLD_TEST, "-r", url, "--run", "true"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=30)
    left = subprocess.run(["pgrep", "-f", "checker-lie=%s" % mode],
                          capture_output=True, text=True).stdout.split()
    return p.returncode, p.stderr, left


def checker_lies():
    # An honest answer passes the checker: the export is then opened
    # before --run's command (and fails: nothing listens on port 9).
    rc, err, left = start_with_checker_lie("none")
    check(rc == 1 and "Connection refused" in err and "checker" not in err and not left,
          "checker control: an honest answer passes the checker "
          "(exit %d) %s" % (rc, err.strip().replace("\n", " | ")))
    for m in CHECKER_LIES:
        rc, err, left = start_with_checker_lie(m)
        check(rc == 1 and "the URL checker sent a malformed answer" in err and not left,
              "checker %s: refused at start (exit %d, %s)" %
              (m, rc, err.strip().replace("\n", " | ")))


def stats_lie(sock, server):
    """A fetcher whose figures are all 2^64-1: its client is served right,
    twice (so its lies are summed), and the server goes on."""
    for _ in range(2):
        h = connect(sock, "stats-lie")
        check(h.pread(4096, 1000) == pattern(1000, 4096) and
              h.pread(100, 7) == pattern(7, 100), "stats-lie: reads right")
        h.shutdown()
    check(server.poll() is None, "stats-lie: server still running")


def stage_good(sock, server):
    """A fetcher that stages the export's halves in turn: every read of
    a sequential pass, and of a second one, returns the right bytes,
    whether the front-end answers it from a span or sends it on."""
    h = connect(sock, "stage-good")
    ok = True
    for rnd in range(2):
        for off in range(0, SIZE - 20000, 19000):
            ok = ok and h.pread(20000, off) == pattern(off, 20000)
    h.shutdown()
    check(ok, "stage-good: sequential reads right, twice")
    check(server.poll() is None, "stage-good: server still running")


def stage_good_counted(path):
    """The reads answered from spans are counted as readahead hits (the
    fetcher itself reports none)."""
    with open(path) as f:
        text = f.read()
    block = text.split('export "stage-good"')[1].split("export ")[0]
    hits = [l for l in block.splitlines() if "readahead:" in l]
    n = int(hits[0].split("readahead:")[1].split()[0]) if hits else 0
    check(n >= 50, "stage-good: reads answered from staged spans: %d" % n)


def stats_lie_summed(path):
    """The lies, summed over two clients, saturate: the figures are
    2^64-1, not a wrapped small number, and the honest ones are right."""
    text = open(path).read()
    block = text.split('export "stats-lie"')[1].split("export ")[0]
    top = "18446744073709551615"
    check("web: %s bytes fetched" % top in block and
          "readahead: %s hits, %s bytes" % (top, top) in block and
          "%s requests, %s retries" % (top, top) in block,
          "stats-lie: the lies saturate: %s" % block.replace("\n", " | "))
    check("read: 4 ops, 8392 bytes" in block and "2 connections" in block,
          "stats-lie: the front-end's own figures are right: %s" %
          block.replace("\n", " | "))


def main():
    checker_lies()
    tmp = tempfile.mkdtemp()
    img = os.path.join(tmp, "img")
    with open(img, "wb") as f:
        f.write(b"\0" * SIZE)
    sock = os.path.join(tmp, "sock")
    # Written by the supervisor once it is --user (started as root).
    os.chmod(tmp, 0o755)
    os.mkdir(os.path.join(tmp, "stats"))
    os.chmod(os.path.join(tmp, "stats"), 0o1777)
    stats = os.path.join(tmp, "stats", "stats.txt")
    args = [NBDCURLD_TEST, "-f", "-r", "-U", sock, "--stats-file", stats,
            "--export", "good=file://%s#hostile=good" % img]
    for m in MODES + ["stats-lie", "stage-good"]:
        args += ["--export", "%s=file://%s#hostile=%s" % (m, img, m)]
    log = open(os.path.join(tmp, "log"), "w")
    server = subprocess.Popen(args, stderr=log)
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)

        good = connect(sock, "good")
        check(good.pread(4096, 1000) == pattern(1000, 4096), "control export reads right")

        for m in MODES:
            check(read_fails_cleanly(sock, m), "%s: reads fail, no data" % m)
            check(server.poll() is None, "%s: server still running" % m)
            check(good.pread(333, 5000) == pattern(5000, 333),
                  "%s: another client still reads right" % m)
        stats_lie(sock, server)
        stage_good(sock, server)
        good.shutdown()
    finally:
        server.terminate()
        server.wait()
        log.close()
    stats_lie_summed(stats)
    stage_good_counted(stats)
    with open(os.path.join(tmp, "log")) as f:
        text = f.read()
    check("invalid message" in text or "failed" in text,
          "the log names the misbehaving fetcher")
    print("1..%d" % len(results))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
