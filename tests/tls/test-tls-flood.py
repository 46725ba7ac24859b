#!/usr/bin/python3
"""One address flooding TLS handshakes costs only itself.

A client at 127.0.0.2 replays one canned TLS 1.3 ClientHello after each
NBD_OPT_STARTTLS, as fast as four processes can (no cryptography on its
side: each hello makes the server sign a CertificateVerify).  Meanwhile
ten nbdinfo clients with certificates, from 127.0.0.1, one after the
other, must all be served, and an nbdcopy of the export over NBD TLS must
copy it bit for bit.  The flooder gets at most its address's share of
handshakes (TLS_STARTS_PER_ADDRESS_*): the rest are refused in clear with
NBD_REP_ERR_POLICY, before any cryptography, and logged.  Prints the good clients' latencies and the copy's rate.
TAP output.
"""

import multiprocessing
import os
import socket
import ssl
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

TMP = N.tmpdir()
PKI = os.path.join(TMP, "pki")
IMG = os.path.join(TMP, "disk.img")
IMG_SIZE = 32 * 1024 * 1024
FLOOD_SECONDS = 8
FLOODERS = 4
GOOD_CLIENTS = 10
RESULTS = {}


def canned_hello():
    """A TLS 1.3 ClientHello, made once by Python's ssl into memory."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    inb, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inb, outb, server_hostname="localhost")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outb.read()


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def flood(address, hello, seconds, counts):
    """Until the time is up: connect from 127.0.0.2, STARTTLS, send the
    hello and close, not waiting for the server's flight (its signature)."""
    acked = refused = other = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        s = socket.socket()
        s.settimeout(5)
        try:
            s.bind(("127.0.0.2", 0))
            s.connect(address)
            recv_exact(s, 18)
            s.sendall(struct.pack(">I", N.FLAG_C_FIXED_NEWSTYLE | N.FLAG_C_NO_ZEROES) +
                      struct.pack(">QII", N.IHAVEOPT, N.OPT_STARTTLS, 0))
            _, _, rep, length = struct.unpack(">QIII", recv_exact(s, 20))
            recv_exact(s, length)
            if rep == N.REP_ACK:
                acked += 1
                s.sendall(hello)        # and gone: the server signs anyway
            elif rep == N.REP_ERR_POLICY:
                refused += 1
            else:
                other += 1
        except (OSError, EOFError):
            other += 1
        finally:
            s.close()
    counts.put((acked, refused, other))


def nbdinfo_time(uri):
    t0 = time.monotonic()
    r = subprocess.run(["nbdinfo", "--size", uri], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    return r.returncode == 0, time.monotonic() - t0, r.stdout.decode(errors="replace")


SRV = None
SERVERS = {}


def header_constant(name):
    """A limit from src/frontend/limits-frontend-tls.h."""
    import re
    with open(os.path.join(N.ROOT, "src", "frontend", "limits-frontend-tls.h")) as f:
        m = re.search(r"#define\s+%s\s+(\d+)u" % name, f.read())
    assert m, name
    return int(m.group(1))


def test_flood_costs_only_the_flooder():
    """during the flood from 127.0.0.2, every good client from 127.0.0.1
    is served, and a copy over NBD TLS is exact"""
    address = SRV.sock
    uri = "nbds://127.0.0.1:%d/?tls-certificates=%s" % (
        address[1], os.path.join(PKI, "noclient"))
    hello = canned_hello()
    counts = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=flood,
                                     args=(address, hello, FLOOD_SECONDS, counts))
             for _ in range(FLOODERS)]
    for p in procs:
        p.start()
    time.sleep(1.5)                 # past any burst: the flood at its height
    latencies, failures = [], []
    for _ in range(GOOD_CLIENTS):
        ok, t, out = nbdinfo_time(uri)
        latencies.append(t)
        if not ok:
            failures.append(out.strip()[-300:])
        time.sleep(0.2)
    out_img = os.path.join(TMP, "copy.img")
    t0 = time.monotonic()
    copy = subprocess.run(["nbdcopy", uri, out_img], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=60)
    copy_s = time.monotonic() - t0
    still_flooding = any(p.is_alive() for p in procs)
    for p in procs:
        p.join(FLOOD_SECONDS + 30)
    acked = refused = other = 0
    for _ in procs:
        a, r, o = counts.get(timeout=10)
        acked, refused, other = acked + a, refused + r, other + o
    N.diag("flood: %d handshakes begun, %d refused (ERR_POLICY), %d other, in %d s"
           % (acked, refused, other, FLOOD_SECONDS))
    N.diag("good clients: %d of %d served; latency median %.1f ms, max %.1f ms"
           % (GOOD_CLIENTS - len(failures), GOOD_CLIENTS,
              1000 * sorted(latencies)[len(latencies) // 2], 1000 * max(latencies)))
    N.diag("NBD TLS copy during the flood%s: %s, %.2f s, %.0f MiB/s"
           % ("" if still_flooding else " (the flood had ended)",
              "ok" if copy.returncode == 0 else "FAILED", copy_s,
              IMG_SIZE / 1048576 / copy_s))
    assert acked + refused > 200, "the flood did not flood (%d hellos)" % (acked + refused)
    # Its share: the key holder signed for it at most a burst and the
    # rate over the flood's time (and a second's slack).
    burst = header_constant("TLS_STARTS_PER_ADDRESS_BURST")
    rate = header_constant("TLS_STARTS_PER_ADDRESS_PER_SECOND")
    assert acked <= burst + rate * (FLOOD_SECONDS + 1), \
        "the flooder began %d TLS handshakes, more than its share (%d + %d/s)" % (
            acked, burst, rate)
    assert not failures, "%d good clients failed: %s" % (len(failures), failures[0])
    assert copy.returncode == 0, copy.stdout.decode(errors="replace")[-500:]
    with open(out_img, "rb") as a, open(IMG, "rb") as b:
        assert a.read() == b.read(), "the copy differs"
    assert refused > 0, "the flooder was never refused"
    assert "refusing its TLS handshake" in SRV.log_text(), SRV.log_text()[-1500:]


def start():
    global SRV
    SRV = N.Server(["--tls=require", "--tls-certificates", PKI, "-r", "file://" + IMG],
                   TMP, "flood", tcp=True)
    SRV.start()
    SERVERS["flood"] = SRV


def main():
    for tool in ("nbdinfo", "nbdcopy"):
        if subprocess.run(["sh", "-c", "command -v " + tool],
                          stdout=subprocess.DEVNULL).returncode != 0:
            print("1..0 # SKIP %s not installed" % tool)
            N.rmtree(TMP)
            return 77
    return N.run_tls_cases([test_flood_costs_only_the_flooder], SERVERS, TMP, IMG,
                           IMG_SIZE, [(PKI, None)], 120, start)


if __name__ == "__main__":
    sys.exit(main())
