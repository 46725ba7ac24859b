#!/usr/bin/python3
"""A web server that damages reply headers at random never makes nbdcurld
serve wrong data, crash, or hang.

tests/lib/web-server.py's /mangle/ mode damages the header section of about
half its 206 replies (bytes flipped, dropped or inserted, digits changed,
lines repeated, the blank line lost; the body is always the right bytes)
and closes the connection after each.  Several clients read at random
offsets and lengths, some through the direct reads' own parser (up to
256 KiB) and some through libcurl (longer), with requests in flight.
Every read must return exactly the image's bytes or fail with an error;
both must happen; the server must still run, and its log must show no
crashed process and no sanitizer report.  The damage is repeatable
(--seed); each seed of SEEDS is a case, and TLS_SEEDS again over https
(a certificate made at test time), where every read goes through the
direct reads' parser over libcurl's connection (src/fetcher/direct-tls.c).
Seed 55 makes libcurl 7.88 read freed memory (curl/curl#11101) unless
every transfer gets a handle of its own (renew_easy in
src/fetcher/fetcher-http-setup.c): the ASan build catches that.  TAP output.
"""

import errno
import os
import random
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

nbd = N.import_nbd()

SIZE = 8 * 1024 * 1024 + 4099          # odd, so the last read is short
CLIENTS = 12
TLS_CLIENTS = 6
READS = 120
IN_FLIGHT = 8
SEEDS = [4242, 34, 55]
TLS_SEEDS = [4242, 77]
TMP = None
IMG = None
WEB = {}
SRV = None
RESULTS = {}


def make_certificate():
    """A self-signed certificate for 127.0.0.1: (cert, key) paths."""
    cert, key = os.path.join(TMP, "tls.pem"), os.path.join(TMP, "tls.key")
    if not os.path.exists(cert):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                        "-subj", "/CN=127.0.0.1", "-addext",
                        "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


def start_web_server(seed, tls):
    www = os.path.join(TMP, "www")
    if not os.path.isdir(www):
        os.mkdir(www)
        os.link(IMG, os.path.join(www, "disk.img"))
    log = os.path.join(TMP, "web-%d%s.log" % (seed, "-tls" if tls else ""))
    extra = []
    if tls:
        cert, key = make_certificate()
        extra = ["--tls-cert", cert, "--tls-key", key]
    p = subprocess.Popen(["/usr/bin/python3", os.path.join(N.LIB, "web-server.py"),
                          "--log", log, "--seed", str(seed)] + extra + [www],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         preexec_fn=N._pdeathsig)
    WEB.update(port=int(p.stdout.readline()), proc=p, log=log)


def run_client(rnd):
    """One client: READS reads with IN_FLIGHT in flight; a client whose
    handshake fails (the open's replies are never damaged) is an error."""
    h = nbd.NBD()
    h.connect_unix(SRV.sock)
    pending = []                # (cookie, buffer, offset, length)
    todo = READS
    try:
        while todo or pending:
            while todo and len(pending) < IN_FLIGHT:
                length = rnd.choice([rnd.randint(1, 4096), rnd.randint(4096, 262144),
                                     rnd.randint(262145, 1 << 20)])
                offset = rnd.randrange(0, SIZE - 1)
                length = min(length, SIZE - offset)
                buf = nbd.Buffer(length)
                pending.append((h.aio_pread(buf, offset), buf, offset, length))
                todo -= 1
            h.poll(1)
            for item in list(pending):
                cookie, buf, offset, length = item
                try:
                    if not h.aio_command_completed(cookie):
                        continue
                except nbd.Error as e:
                    RESULTS["failed"] += 1
                    RESULTS["errnos"].add(e.errnum)
                    pending.remove(item)
                    continue
                pending.remove(item)
                if buf.to_bytearray() == N.image_bytes(IMG, offset, length):
                    RESULTS["ok"] += 1
                else:
                    RESULTS["wrong"].append((offset, length))
    finally:
        try:
            h.shutdown()
        except nbd.Error:
            pass


def check_reads(seed, tls):
    """every read returns the image's bytes or an error (never others);
    both happen"""
    RESULTS.update(ok=0, failed=0, wrong=[], errnos=set())
    rnd = random.Random(seed)
    start = time.monotonic()
    # Over TLS each damaged reply costs a new TLS handshake (the web server
    # closes the connection after it), in a sanitizer build and a Python
    # server: the TLS cases run half the clients, so that a busy machine
    # stays far inside the watchdog.
    for _ in range(TLS_CLIENTS if tls else CLIENTS):
        run_client(rnd)
    print("# seed %d: %d reads right, %d failed (errno %s) in %.1f s" % (
        seed, RESULTS["ok"], RESULTS["failed"], sorted(RESULTS["errnos"]),
        time.monotonic() - start))
    assert not RESULTS["wrong"], "wrong data for %r" % RESULTS["wrong"][:5]
    assert RESULTS["ok"] > 0, "no read succeeded"
    assert RESULTS["failed"] > 0, "no read failed: was anything damaged?"
    assert RESULTS["errnos"] <= {errno.EIO}, "errors %r" % RESULTS["errnos"]


def check_damage_happened():
    """the web server damaged replies, and sent undamaged ones"""
    with open(WEB["log"]) as f:
        text = f.read()
    damaged = len(re.findall(r"status=0 ", text))
    whole = len(re.findall(r"GET /mangle/disk.img range=\S+ status=206 ", text))
    print("# %d replies damaged, %d not" % (damaged, whole))
    assert damaged > 0 and whole > 0, (damaged, whole)


def check_no_crash():
    """nbdcurld still runs; no process was killed and no sanitizer
    reported anything; the log says why reads failed"""
    assert SRV.alive(), "nbdcurld died:\n" + SRV.log_text()[-3000:]
    text = SRV.log_text()
    for bad in ("killed by signal", "AddressSanitizer", "runtime error:",
                "LeakSanitizer"):
        assert bad not in text, "%r in the log:\n%s" % (bad, text[-3000:])
    assert "warning" in text, "failed reads left no warning"


def case(seed, tls=False):
    def run():
        global SRV
        start_web_server(seed, tls)
        url = "%s://127.0.0.1:%d/mangle/disk.img" % ("https" if tls else "http",
                                                     WEB["port"])
        # A damaged length can make a body short, which is worth a retry
        # (checked like any reply): short delays keep the test quick.
        # Over TLS the certificate is the test's own: not checked.
        SRV = N.Server(["-r", "--retry-delay", "0.05"] + (["--insecure"] if tls else []) +
                       [url], TMP, "sock-%d%s" % (seed, "-tls" if tls else "")).start()
        try:
            check_reads(seed, tls)
            check_damage_happened()
            check_no_crash()
        finally:
            SRV.stop()
            WEB["proc"].kill()
            WEB["proc"].wait()
    run.__name__ = "test_%sseed_%d" % ("tls_" if tls else "", seed)
    run.__doc__ = ("every read right or EIO, never other bytes; "
                   "replies damaged and not; no process crashed")
    return run


def main():
    global TMP, IMG
    N.require_binary()
    N.watchdog(170 * N.time_factor())      # inside meson's timeout (180 s)
    TMP = N.tmpdir()
    IMG = os.path.join(TMP, "disk.img")
    N.make_image(IMG, SIZE)
    try:
        return N.Tap([case(seed) for seed in SEEDS] +
                     [case(seed, tls=True) for seed in TLS_SEEDS]).run()
    finally:
        N.rmtree(TMP)


if __name__ == "__main__":
    sys.exit(main())
