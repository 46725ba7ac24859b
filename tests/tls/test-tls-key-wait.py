#!/usr/bin/python3
"""A TLS handshake waiting for the key holder stops no one else.

The key holder is stopped (SIGSTOP) while a TLS client's handshake needs
its signature: meanwhile a clear-text client (--tls=on) copies the export
and a client whose TLS session was already up reads from it, both at
once; then the key holder goes on (SIGCONT) and the waiting TLS client
gets its session and the export.  And a wait longer than
KEY_ANSWER_TIMEOUT_MS fails that handshake only, with a log line.  TAP
output.
"""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

TMP = N.tmpdir()
PKI = os.path.join(TMP, "pki")
IMG = os.path.join(TMP, "disk.img")
IMG_SIZE = 4 * 1024 * 1024
SRV = None
SERVERS = {}


def keyholder_pid():
    for pid in N.descendants(SRV.proc.pid):
        try:
            with open("/proc/%d/comm" % pid) as f:
                if f.read().strip() == N.KEYHOLDER_COMM:
                    return pid
        except OSError:
            pass
    raise AssertionError("no key holder process")


def uris():
    clear = "nbd+unix:///?socket=%s" % SRV.sock
    tls = "nbds+unix:///?socket=%s&tls-certificates=%s" % (
        SRV.sock, os.path.join(PKI, "noclient"))
    return clear, tls


def test_others_go_on_while_a_signature_waits():
    """key holder stopped: a clear-text copy and reads over an established
    TLS session finish at once; the waiting TLS client finishes after
    SIGCONT"""
    nbd = N.import_nbd()
    clear, tls = uris()
    established = nbd.NBD()
    established.set_uri_allow_local_file(True)
    established.connect_uri(tls)            # its handshake before the stop
    kh = keyholder_pid()
    os.kill(kh, signal.SIGSTOP)
    try:
        waiting = subprocess.Popen(["nbdinfo", "--size", tls], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
        time.sleep(0.3)                     # its handshake waits for a signature
        assert waiting.poll() is None, "the TLS client did not wait: %r" % (
            waiting.communicate()[0],)
        t0 = time.monotonic()
        copy = subprocess.run(["nbdcopy", clear, os.path.join(TMP, "copy.img")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
        data = established.pread(65536, 4096)
        elapsed = time.monotonic() - t0
        assert copy.returncode == 0, copy.stdout
        assert data == N.image_bytes(IMG, 4096, 65536), "wrong bytes over TLS"
        N.diag("while the key holder was stopped: a %d MiB clear-text copy and a TLS "
               "read took %.0f ms" % (IMG_SIZE >> 20, 1000 * elapsed))
        assert elapsed < 1.0, "the others waited %.2f s for the key holder" % elapsed
    finally:
        os.kill(kh, signal.SIGCONT)
    out = waiting.communicate(timeout=30)[0].decode(errors="replace")
    assert waiting.returncode == 0, "the waiting TLS client failed: " + out
    assert out.strip() == str(IMG_SIZE), out
    with open(os.path.join(TMP, "copy.img"), "rb") as a, open(IMG, "rb") as b:
        assert a.read() == b.read(), "the copy differs"
    established.shutdown()


def test_wait_times_out_alone():
    """key holder stopped past KEY_ANSWER_TIMEOUT_MS: that handshake fails
    (logged), the server goes on and serves TLS again after SIGCONT"""
    _, tls = uris()
    kh = keyholder_pid()
    os.kill(kh, signal.SIGSTOP)
    try:
        r = subprocess.run(["nbdinfo", "--size", tls], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
        assert r.returncode != 0, "a handshake succeeded without the key holder"
    finally:
        os.kill(kh, signal.SIGCONT)
    assert "did not answer in" in SRV.log_text(), SRV.log_text()[-1500:]
    r = subprocess.run(["nbdinfo", "--size", tls], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    assert r.returncode == 0, r.stdout


def start():
    global SRV
    SRV = N.Server(["--tls=on", "--tls-certificates", PKI, "-r", "file://" + IMG],
                   TMP, "keywait")
    SRV.start()
    SERVERS["keywait"] = SRV


def main():
    return N.run_tls_cases([test_others_go_on_while_a_signature_waits,
                            test_wait_times_out_alone],
                           SERVERS, TMP, IMG, IMG_SIZE, [(PKI, None)], 90, start)


if __name__ == "__main__":
    sys.exit(main())
