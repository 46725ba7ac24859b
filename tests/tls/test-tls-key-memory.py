#!/usr/bin/python3
"""The server's private key never enters the front-end.

As root, read the live front-end's whole memory (/proc/PID/maps and
/proc/PID/mem) during and after 30 TLS sessions, and look for the private
key in every form GnuTLS (or the libraries under it) might hold it:

- the PEM text of the key file (16-character windows of its base64 lines
  that encode secret bytes only),
- its DER, as in the file (SEC1 or PKCS#1) and as PKCS#8 (windows that
  straddle a secret's DER header, so they cannot be public data),
- the secret numbers themselves (ECDSA: the private scalar; RSA: d, p, q,
  d mod p-1, d mod q-1, q^-1 mod p), big-endian and little-endian (the
  order of GMP's and nettle's limbs on x86-64), 16-byte windows of each.

Windows that also occur in public material (the certificate, the public
key) or in an unrelated key of the same type are dropped: they are
structure, not secret.  Both an ECDSA P-256 and an RSA 2048 server key are
tried (GnuTLS handles external RSA and EC keys apart).

Positive controls prove the scanner finds what it looks for: a Python
process that loaded the key (OpenSSL holds it) and the server's
key-holding process must both show it; a Python process that loaded the
unrelated key must not.  The key holder is the server's process that is
neither front-end nor fetcher (role name below; $NBDCURLD_KEYHOLDER names
it exactly), or the supervisor if there is no such process.

With PSK, the front-end of a server whose clients all were alice must not
hold bob's key (raw or as the file's hex).

Probes (test binary, tests/hooks/sandbox-probe.c, export "probe:open:PATH"
asked for over TLS): the front-end cannot open the key file nor the PSK
file.

Needs root (skipped otherwise).  TAP output.  By hand:
    test-tls-key-memory.py --scan PID KEYFILE CERTFILE OTHERKEYFILE
prints what of the key is found in process PID.
"""

import base64
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

TEST_BINARY = os.environ.get("NBDCURLD_TEST",
                             os.path.join(N.ROOT, "build", "src", "nbdcurld-test"))
SESSIONS = 30
WINDOW = 16

# Process roles, by comm (prctl name) or executable name.  The key holder
# is whatever else runs under the supervisor; NBDCURLD_KEYHOLDER pins it.
FRONTEND_NAMES = {N.FRONTEND_COMM, "nbdcurld-frontend", "nbdcurld-test-frontend"}
FETCHER_NAMES = {N.FETCHER_COMM, "nbdcurld-fetcher", "nbdcurld-test-fetcher"}
# The key holder runs the front-end's executable: its process name tells.
KEYHOLDER_NAME = os.environ.get("NBDCURLD_KEYHOLDER", N.KEYHOLDER_COMM)

# Larger mappings are skipped (diagnosed): a sanitizer's shadow memory
# (terabytes of metadata) is no place a key is kept.
MAX_REGION = 16 << 30

TMP = None
IMG = None
PKIS = {}
nbd = None


# ---- DER: where the secrets are ----

def tlv(der, pos):
    """(tag, content start, content end) of the DER element at pos."""
    tag = der[pos]
    ln = der[pos + 1]
    start = pos + 2
    if ln & 0x80:
        n = ln & 0x7F
        ln = int.from_bytes(der[start:start + n], "big")
        start += n
    if start + ln > len(der):
        raise ValueError("DER element at %d runs past the end" % pos)
    return tag, start, start + ln


def children(der, start, end):
    out, pos = [], start
    while pos < end:
        el = tlv(der, pos)
        out.append(el)
        pos = el[2]
    return out


def secret_ranges(der, start=0, end=None):
    """[(start, end)] of the secret numbers in a private key's DER: SEC1
    (the EC scalar), PKCS#1 (d, p, q, dp, dq, qinv) or PKCS#8 around
    either.  Leading zero bytes are left out."""
    end = len(der) if end is None else end
    tag, s, e = tlv(der, start)
    if tag != 0x30:
        raise ValueError("not a SEQUENCE")
    kids = children(der, s, e)
    tags = [k[0] for k in kids]
    if tags[:3] == [0x02, 0x30, 0x04]:               # PKCS#8
        return secret_ranges(der, kids[2][1], kids[2][2])
    if tags[:2] == [0x02, 0x04]:                     # SEC1 ECPrivateKey
        found = [kids[1]]
    elif len(kids) >= 9 and all(t == 0x02 for t in tags[:9]):   # PKCS#1
        found = kids[3:9]
    else:
        raise ValueError("unknown private key structure %r" % tags)
    out = []
    for _, s, e in found:
        while s < e and der[s] == 0:
            s += 1
        out.append((s, e))
    return out


def pem_body(text):
    """The base64 of a PEM file's first block, without line breaks."""
    m = re.search(r"-----BEGIN [A-Z ]+-----\n(.*?)-----END", text, re.S)
    if not m:
        raise ValueError("no PEM block")
    return "".join(m.group(1).split())


def windows(data, step=WINDOW):
    """Windows of WINDOW bytes every step bytes, and the last one."""
    if len(data) < WINDOW:
        return []
    out = [data[i:i + WINDOW] for i in range(0, len(data) - WINDOW + 1, step)]
    out.append(data[-WINDOW:])
    return out


class KeyPatterns:
    """What of a private key to look for: {encoding: set of windows}."""

    def __init__(self, key_pem, public=(), unrelated=()):
        """key_pem: the key file's text; public: byte strings that are
        public (certificate PEM and DER, ...); unrelated: other keys' PEM
        text of the same type (what they share is structure)."""
        der = base64.b64decode(pem_body(key_pem))
        p8 = self.to_pkcs8(key_pem)
        ranges = secret_ranges(der)
        self.secrets = [der[s:e] for s, e in ranges]
        if not self.secrets or min(len(x) for x in self.secrets) < WINDOW:
            raise ValueError("secret numbers too short: %r" %
                             [len(x) for x in self.secrets])
        pats = {"raw big-endian": set(), "raw little-endian": set(),
                "DER (file)": set(), "DER (PKCS#8)": set(), "PEM": set()}
        for sec in self.secrets:
            pats["raw big-endian"].update(windows(sec, 2 * WINDOW))
            pats["raw little-endian"].update(windows(sec[::-1], 2 * WINDOW))
        # DER: the header of each secret and its first bytes.
        for blob, rs, name in ((der, ranges, "DER (file)"),
                               (p8, secret_ranges(p8), "DER (PKCS#8)")):
            for s, _ in rs:
                pats[name].add(blob[s - 4:s + WINDOW - 4])
        # PEM: base64 characters that encode secret bytes only (character
        # i holds bits 6i..6i+5 of the DER), in windows the file's line
        # breaks do not cut.
        b64 = pem_body(key_pem)
        text = key_pem.encode()
        for s, e in ranges:
            first, last = -(-8 * s // 6), (8 * e) // 6
            for i in range(first, last - WINDOW + 1, WINDOW):
                w = b64[i:i + WINDOW].encode()
                if w in text:
                    pats["PEM"].add(w)
        # What is public, or common to unrelated keys, is no evidence.
        noise = [bytes(x) for x in public]
        for other in unrelated:
            o_der = base64.b64decode(pem_body(other))
            noise += [other.encode(), o_der, self.to_pkcs8(other)]
        for name in pats:
            pats[name] = {w for w in pats[name]
                          if len(w) == WINDOW and not any(w in n for n in noise)}
            if not pats[name]:
                raise ValueError("no window left for %s" % name)
        self.patterns = pats

    @staticmethod
    def to_pkcs8(key_pem):
        p = subprocess.run(["openssl", "pkcs8", "-topk8", "-nocrypt",
                            "-outform", "DER"],
                           input=key_pem.encode(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, check=True)
        return p.stdout

    def count(self):
        return sum(len(v) for v in self.patterns.values())

    def search(self, chunks):
        """{encoding: [(where, offset)]} of every window found."""
        found = {}
        for where, data in chunks:
            for name, ws in self.patterns.items():
                for w in ws:
                    i = data.find(w)
                    if i >= 0:
                        found.setdefault(name, []).append((where, i))
        return found


class BytesPatterns(KeyPatterns):
    """Plain byte strings to look for (a PSK, its hex)."""

    def __init__(self, named):
        self.patterns = {name: set(windows(b)) for name, b in named.items()}


# ---- process memory ----

PAGE = os.sysconf("SC_PAGE_SIZE")
PRESENT_OR_SWAPPED = (1 << 63) | (1 << 62)


def page_runs(pagemap, a, b):
    """[(start, end)] of the runs of pages of [a, b) that are in memory or
    swapped out (/proc/PID/pagemap); the rest reads as zeroes or as the
    untouched file, which no key can be in."""
    import array
    first, n = a // PAGE, (b - a) // PAGE
    entries = array.array("Q")
    entries.frombytes(os.pread(pagemap, 8 * n, 8 * first))
    runs, start = [], None
    for i, e in enumerate(entries):
        if e & PRESENT_OR_SWAPPED:
            if start is None:
                start = i
        elif start is not None:
            runs.append((a + start * PAGE, a + i * PAGE))
            start = None
    if start is not None:
        runs.append((a + start * PAGE, b))
    return runs


def memory(pid, skipped=None):
    """Yield (description, bytes) for every run of pages in memory of every
    readable mapping of pid.  skipped, a list, gets what was not read."""
    fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY)
    pagemap = os.open("/proc/%d/pagemap" % pid, os.O_RDONLY)
    try:
        with open("/proc/%d/maps" % pid) as f:
            maps = f.read().splitlines()
        for line in maps:
            fields = line.split(None, 5)
            a, b = (int(x, 16) for x in fields[0].split("-"))
            name = fields[5] if len(fields) > 5 else "[anon]"
            if "r" not in fields[1]:
                continue
            if name in ("[vvar]", "[vvar_vclock]", "[vsyscall]"):
                continue
            if b - a > MAX_REGION:
                if skipped is not None:
                    skipped.append("%s (%d GiB)" % (line, (b - a) >> 30))
                continue
            for s, e in page_runs(pagemap, a, b):
                try:
                    yield "%s %s" % (fields[0], name), os.pread(fd, e - s, s)
                except OSError as err:
                    if skipped is not None:
                        skipped.append("%s [%x-%x): %s" % (line, s, e, err))
    finally:
        os.close(fd)
        os.close(pagemap)


def scan(pid, patterns):
    """(found, skipped, bytes read) for process pid."""
    skipped = []
    total = [0]

    def counted():
        for where, data in memory(pid, skipped):
            total[0] += len(data)
            yield where, data
    found = patterns.search(counted())
    return found, skipped, total[0]


def describe(found):
    return "; ".join("%s: %d window(s), first in %s at +0x%x" %
                     (name, len(hits), hits[0][0], hits[0][1])
                     for name, hits in sorted(found.items()))


# ---- the server's processes ----

def names_of(pid):
    """{comm, executable's base name} of pid."""
    out = set()
    st = N.proc_stat(pid)
    if st:
        out.add(st[0])
    try:
        out.add(os.path.basename(os.readlink("/proc/%d/exe" % pid)))
    except OSError:
        pass
    return out


def roles(srv):
    """{"supervisor": pid, "front-end": [pids], "fetcher": [pids],
    "key-holder": [pids]} of a running server."""
    out = {"supervisor": srv.pid, "front-end": [], "fetcher": [],
           "key-holder": []}
    for pid in N.descendants(srv.pid):
        names = names_of(pid)
        if KEYHOLDER_NAME:
            if KEYHOLDER_NAME in names:
                out["key-holder"].append(pid)
                continue
        if names & FRONTEND_NAMES:
            out["front-end"].append(pid)
        elif names & FETCHER_NAMES:
            out["fetcher"].append(pid)
        elif not KEYHOLDER_NAME:
            out["key-holder"].append(pid)
    return out


def settled_roles(srv):
    """roles(), once every child has named itself: a child just started
    runs under its executable's name until its first lines rename it."""
    deadline = time.monotonic() + 10
    while True:
        r = roles(srv)
        if (len(r["front-end"]) == 1 and len(r["key-holder"]) == 1) or \
                time.monotonic() > deadline:
            return r
        time.sleep(0.05)


def frontend(srv):
    fe = settled_roles(srv)["front-end"]
    assert len(fe) == 1, "front-ends: %r (%r)" % (fe, roles(srv))
    return fe[0]


def key_holders(srv):
    """The processes that may hold the key: the key-holding role, else the
    supervisor."""
    r = settled_roles(srv)
    return r["key-holder"] or [r["supervisor"]]


# ---- helpers ----

def pki(key_type):
    """Keys made by make-tls-keys.sh (once per key type)."""
    if key_type not in PKIS:
        d = os.path.join(TMP, "pki-" + key_type)
        subprocess.run([os.path.join(N.LIB, "make-tls-keys.sh"), "--key-type",
                        key_type, d], check=True, stdout=subprocess.DEVNULL)
        PKIS[key_type] = d
    return PKIS[key_type]


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def key_patterns(d):
    cert_pem = read(os.path.join(d, "server-cert.pem"))
    cert_der = base64.b64decode(pem_body(cert_pem))
    ca_pem = read(os.path.join(d, "ca-cert.pem"))
    return KeyPatterns(read(os.path.join(d, "server-key.pem")),
                       public=[cert_pem.encode(), cert_der, ca_pem.encode(),
                               base64.b64decode(pem_body(ca_pem))],
                       unrelated=[read(os.path.join(d, "other-key.pem"))])


def tls_handle(d, sock, export="", client="client1"):
    h = nbd.NBD()
    h.set_tls(nbd.TLS_REQUIRE)
    h.set_tls_certificates(os.path.join(d, client))
    h.set_export_name(export)
    h.connect_unix(sock)
    return h


def sessions(uri, n):
    """n TLS sessions with nbdinfo, one after the other (each checked)."""
    for i in range(n):
        p = subprocess.run(["nbdinfo", "--size", uri], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=30)
        assert p.returncode == 0 and int(p.stdout) == IMG_SIZE, \
            "session %d: %r %r" % (i, p.stdout, p.stderr[-300:])


IMG_SIZE = 1024 * 1024


def assert_absent(pid, patterns, what):
    found, skipped, nbytes = scan(pid, patterns)
    for s in skipped:
        N.diag("%s: not read: %s" % (what, s))
    assert nbytes > 1 << 20, "%s: read only %d bytes" % (what, nbytes)
    assert not found, "%s (pid %d) holds the key: %s" % (what, pid, describe(found))
    N.diag("%s: %d windows, %.1f MiB read, none found" %
           (what, patterns.count(), nbytes / 1048576))


def assert_present(pid, patterns, what):
    found, _, nbytes = scan(pid, patterns)
    assert found, "control: the key was not found in %s (pid %d, %.1f MiB): " \
        "the scanner is broken" % (what, pid, nbytes / 1048576)
    N.diag("control %s: %s" % (what, describe(found)))


# ---- cases ----

def python_holding(key_pem, cert_pem):
    """A Python process whose OpenSSL loaded that key (and certificate)."""
    code = ("import ssl, sys, time\n"
            "c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
            "c.load_cert_chain(sys.argv[1], sys.argv[2])\n"
            "print('ready', flush=True)\n"
            "time.sleep(60)\n")
    p = subprocess.Popen(["/usr/bin/python3", "-c", code, cert_pem, key_pem],
                         stdout=subprocess.PIPE, preexec_fn=N._pdeathsig)
    assert p.stdout.readline().strip() == b"ready"
    return p


def self_signed(d, key):
    """A certificate for key (so OpenSSL accepts key and certificate)."""
    cert = key + ".crt"
    tpl = os.path.join(d, "selfsigned.info")
    with open(tpl, "w") as f:
        f.write('cn = "scanner control"\nexpiration_days = 2\n')
    subprocess.run(["certtool", "--generate-self-signed", "--load-privkey",
                    key, "--template", tpl, "--outfile", cert], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert


def control_python(key_type):
    d = pki(key_type)
    pats = key_patterns(d)
    key = os.path.join(d, "server-key.pem")
    other = os.path.join(d, "other-key.pem")
    p = python_holding(key, self_signed(d, key))
    try:
        assert_present(p.pid, pats, "python holding the %s key" % key_type)
    finally:
        p.kill()
        p.wait()
    p = python_holding(other, self_signed(d, other))
    try:
        found, _, _ = scan(p.pid, pats)
        assert not found, "false positive: python holding another key: %s" % \
            describe(found)
    finally:
        p.kill()
        p.wait()


def test_scanner_control_ecdsa():
    """control: the scanner finds the ECDSA key in a Python process that
    loaded it, and not in one that loaded another key"""
    control_python("ecdsa")


def test_scanner_control_rsa():
    """control: the same with the RSA 2048 key"""
    control_python("rsa")


def frontend_scan(key_type):
    d = pki(key_type)
    pats = key_patterns(d)
    N.diag("%s: %s" % (key_type, ", ".join("%s %d" % (k, len(v)) for k, v in
                                          sorted(pats.patterns.items()))))
    srv = N.Server(["--tls=require", "--tls-certificates", d,
                    "-r", "file://" + IMG], TMP, "mem-" + key_type)
    srv.start()
    try:
        uri = "nbds+unix:///?socket=%s&tls-certificates=%s" % (
            srv.sock, os.path.join(d, "client1"))
        fe = frontend(srv)
        # During: sessions done and two open, one in the middle of reads.
        sessions(uri, SESSIONS // 2)
        handles = [tls_handle(d, srv.sock) for _ in range(2)]
        for h in handles:
            assert h.pread(65536, 4096) == N.image_bytes(IMG, 4096, 65536)
        assert frontend(srv) == fe, "front-end changed"
        assert_absent(fe, pats, "front-end during TLS sessions (%s)" % key_type)
        for h in handles:
            h.shutdown()
        sessions(uri, SESSIONS - SESSIONS // 2)
        time.sleep(0.2)
        assert frontend(srv) == fe, "front-end changed"
        assert_absent(fe, pats, "front-end after %d TLS sessions (%s)" %
                      (SESSIONS, key_type))
        for pid in roles(srv)["fetcher"]:
            assert_absent(pid, pats, "fetcher %d" % pid)
        holders = key_holders(srv)
        found = {}
        for pid in holders:
            found.update(scan(pid, pats)[0])
        assert found, "control: the key is in none of the key holders %r " \
            "(%r): the scan cannot be trusted" % (holders, roles(srv))
        N.diag("control: key holder(s) %r: %s" % (holders, describe(found)))
    finally:
        srv.stop()


def test_frontend_memory_ecdsa():
    """ECDSA P-256 server key: no window of it in the front-end (or a
    fetcher) during and after 30 TLS sessions; found in the key holder"""
    frontend_scan("ecdsa")


def test_frontend_memory_rsa():
    """RSA 2048 server key: the same"""
    frontend_scan("rsa")


def test_frontend_memory_psk():
    """PSK: after sessions of alice only, the front-end holds no window of
    bob's key (raw or as the file's hex)"""
    d = pki("ecdsa")
    psk = os.path.join(d, "keys.psk")
    keys = dict(line.split(":", 1) for line in read(psk).split())
    bob = keys["bob"].strip()
    pats = BytesPatterns({"raw": bytes.fromhex(bob), "hex": bob.encode(),
                          "hex (upper case)": bob.upper().encode()})
    # Control: the scanner finds bob's key in a process that read the file.
    code = ("import sys, time\n"
            "text = open(sys.argv[1]).read()\n"
            "keys = [bytes.fromhex(l.split(':')[1]) for l in text.split()]\n"
            "print('ready', flush=True)\n"
            "time.sleep(60)\n")
    p = subprocess.Popen(["/usr/bin/python3", "-c", code, psk],
                         stdout=subprocess.PIPE, preexec_fn=N._pdeathsig)
    try:
        assert p.stdout.readline().strip() == b"ready"
        assert_present(p.pid, pats, "python holding keys.psk")
    finally:
        p.kill()
        p.wait()
    srv = N.Server(["--tls=require", "--tls-psk", psk, "-r", "file://" + IMG],
                   TMP, "mem-psk")
    srv.start()
    try:
        uri = "nbds+unix://alice@/?socket=%s&tls-psk-file=%s" % (srv.sock, psk)
        sessions(uri, 10)
        assert_absent(frontend(srv), pats, "front-end, bob's PSK")
    finally:
        srv.stop()


def run_probe(args, d, probe, via):
    """The test binary's front-end runs PROBE when a client asks, over TLS,
    for the export "probe:PROBE"; returns the server's log once the probe
    had an outcome (the front-end dies by SIGSYS, taking the server down,
    or lives to log it)."""
    srv = N.Server(args, TMP, "probe-%d" % len(os.listdir(TMP)))
    srv.args[0] = TEST_BINARY
    srv.start()
    try:
        try:
            via(srv.sock, "probe:" + probe)
        except nbd.Error:
            pass
        N.wait_until(lambda: not srv.alive() or
                     "probe %s:" % probe in srv.log_text(), 10)
    finally:
        srv.stop()
    return srv.log_text()


def check_probe_refused(args, d, probe, via):
    """The probe is refused (Landlock or the like: logged) or kills the
    front-end by SIGSYS; in the latter case a run with --sandbox-debug
    must name the open call, so the death was the probe's."""
    text = run_probe(args, d, probe, via)
    assert "probe %s: allowed" % probe not in text, \
        "the front-end opened it:\n" + text[-2000:]
    if "probe %s: refused" % probe in text:
        return
    assert "front-end was killed by signal 31" in text, \
        "the probe had no outcome (did it run?):\n" + text[-2000:]
    text = run_probe(["--sandbox-debug"] + args, d, probe, via)
    assert "probe %s: allowed" % probe not in text, text[-2000:]
    assert re.search(r"front-end: error: sandbox: blocked system call (openat2?|open) ",
                     text), "--sandbox-debug does not name open(at):\n" + text[-2000:]


def test_probe_frontend_cannot_open_key():
    """test binary: the front-end, asked over TLS, cannot open
    server-key.pem (refused, or killed by SIGSYS)"""
    d = pki("ecdsa")
    key = os.path.join(d, "server-key.pem")

    def via(sock, export):
        tls_handle(d, sock, export)
    check_probe_refused(["--tls=require", "--tls-certificates", d,
                         "-r", "file://" + IMG], d, "open:" + key, via)


def test_probe_frontend_cannot_open_psk_file():
    """test binary: the front-end, asked over TLS (PSK), cannot open the
    PSK file"""
    d = pki("ecdsa")
    psk = os.path.join(d, "keys.psk")

    def via(sock, export):
        h = nbd.NBD()
        h.set_tls(nbd.TLS_REQUIRE)
        h.set_tls_username("alice")
        h.set_tls_psk_file(psk)
        h.set_export_name(export)
        h.connect_unix(sock)
    check_probe_refused(["--tls=require", "--tls-psk", psk,
                         "-r", "file://" + IMG], d, "open:" + psk, via)


CASES = [
    test_scanner_control_ecdsa,
    test_scanner_control_rsa,
    test_frontend_memory_ecdsa,
    test_frontend_memory_rsa,
    test_frontend_memory_psk,
    test_probe_frontend_cannot_open_key,
    test_probe_frontend_cannot_open_psk_file,
]


def scan_by_hand(pid, key, cert, other):
    pats = KeyPatterns(read(key), public=[read(cert).encode()],
                       unrelated=[read(other)])
    found, skipped, nbytes = scan(pid, pats)
    print("%d windows, %.1f MiB read" % (pats.count(), nbytes / 1048576))
    for s in skipped:
        print("not read: " + s)
    print(describe(found) if found else "not found")
    return 0 if found else 1


def main():
    global TMP, IMG, nbd
    if len(sys.argv) == 6 and sys.argv[1] == "--scan":
        return scan_by_hand(int(sys.argv[2]), *sys.argv[3:])
    if os.geteuid() != 0:
        print("1..0 # SKIP needs root (reads other processes' memory)")
        return 77
    for tool in ("certtool", "psktool", "openssl", "nbdinfo"):
        if not any(os.access(os.path.join(p, tool), os.X_OK)
                   for p in os.environ.get("PATH", "/usr/bin").split(":")):
            print("1..0 # SKIP %s not installed" % tool)
            return 77
    nbd = N.import_nbd()
    N.require_binary()
    N.watchdog(150 * N.time_factor())
    TMP = N.tmpdir()
    try:
        IMG = os.path.join(TMP, "disk.img")
        N.make_image(IMG, IMG_SIZE)
        return N.Tap(CASES).run()
    finally:
        N.rmtree(TMP)


if __name__ == "__main__":
    sys.exit(main())
