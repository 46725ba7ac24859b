#!/usr/bin/python3
"""NBD over TLS 1.2 with certificates, as the NBD reference client
(nbd-client, nbd-tester-client) speaks it by default: raw NBD
(tests/lib/nbdraw.py) and Python's ssl module limited to TLS 1.2 after
NBD_OPT_STARTTLS, for each kind of server key (ECDSA P-256, RSA 2048,
Ed25519), since each reaches the key holder another way (a hash for
ECDSA and RSA, the whole ServerKeyExchange parameters for EdDSA).

- a TLS 1.2-only client gets TLS 1.2 with an ECDHE suite and reads the
  export bit for bit; with --tls-verify-peer, with its certificate too
- the key holder signed and refused nothing
- TLS 1.1 is never offered; RSA key exchange neither
- --tls-priority is honoured: without TLS 1.2 in it a TLS 1.2-only
  client is refused, without TLS 1.3 a default client gets TLS 1.2

Keys come from tests/lib/make-tls-keys.sh at test time.  TAP output.
"""

import os
import ssl
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

IMG_SIZE = 1024 * 1024 + 4096
EXPORT = "disk"
KEY_TYPES = ("ecdsa", "rsa", "ed25519")

TMP = N.tmpdir()
IMG = os.path.join(TMP, "disk.img")
SERVERS = {}


def pki(key_type):
    return os.path.join(TMP, "pki-" + key_type)


def server(key_type, extra=()):
    name = "%s-%d" % (key_type, len(SERVERS)) if extra else key_type
    for srv_name, srv in SERVERS.items():
        if srv.extra == (key_type, tuple(extra)):
            return srv
    if name in SERVERS:
        return SERVERS[name]
    args = ["--tls=require", "--tls-certificates", pki(key_type)] + list(extra) + \
        ["--export-ro", "%s=file://%s" % (EXPORT, IMG)]
    srv = N.Server(args, TMP, name)
    srv.extra = (key_type, tuple(extra))
    srv.start()
    SERVERS[name] = srv
    return srv


def context(key_type, version_max=ssl.TLSVersion.TLSv1_2,
            version_min=ssl.TLSVersion.MINIMUM_SUPPORTED, client=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(os.path.join(pki(key_type), "ca-cert.pem"))
    ctx.maximum_version = version_max
    ctx.minimum_version = version_min
    if client:
        d = os.path.join(pki(key_type), client)
        ctx.load_cert_chain(os.path.join(d, "client-cert.pem"),
                            os.path.join(d, "client-key.pem"))
    return ctx


def starttls(srv, ctx):
    """A connection to srv, over TLS made with ctx after STARTTLS."""
    c = srv.connect()
    c.start()
    final = c.option(N.OPT_STARTTLS)[-1]
    assert final.reply == N.REP_ACK, "STARTTLS: %r" % final
    c.sock.settimeout(c.timeout)
    c.sock = ctx.wrap_socket(c.sock, server_hostname="localhost")
    return c


def read_whole(c):
    """GO on the export, then every byte of it, compared with the image."""
    c.go(EXPORT)
    step = 256 * 1024
    for offset in range(0, IMG_SIZE, step):
        length = min(step, IMG_SIZE - offset)
        r = c.read(offset, length)
        assert r.error == 0, "read at %d: error %d" % (offset, r.error)
        assert r.data == N.image_bytes(IMG, offset, length), \
            "read at %d: wrong bytes" % offset


def check_nothing_refused(srv):
    log = srv.log_text()
    assert "refusing to sign" not in log, log[-2000:]
    assert "did not sign" not in log, log[-2000:]


def tls12_copy(key_type):
    srv = server(key_type)
    with starttls(srv, context(key_type)) as c:
        assert c.sock.version() == "TLSv1.2", c.sock.version()
        assert c.sock.cipher()[0].startswith("ECDHE-"), c.sock.cipher()
        read_whole(c)
    check_nothing_refused(srv)


def tls12_client_certificate(key_type):
    srv = server(key_type, ["--tls-verify-peer"])
    with starttls(srv, context(key_type, client="client1")) as c:
        assert c.sock.version() == "TLSv1.2", c.sock.version()
        read_whole(c)
    check_nothing_refused(srv)


def case(fn, key_type):
    def run():
        fn(key_type)
    run.__name__ = "%s_%s" % (fn.__name__, key_type)
    run.__doc__ = "%s with a %s server key" % (fn.__name__.replace("_", " "), key_type)
    return run


def refused(srv, ctx):
    try:
        with starttls(srv, ctx):
            pass
    except (ssl.SSLError, OSError, N.Closed):
        return
    raise AssertionError("the TLS handshake succeeded")


def test_tls11_refused():
    """a client of TLS 1.1 at most gets no session (OpenSSL's security
    level may refuse it on its own side too: either way, none)"""
    ctx = context("ecdsa", version_max=ssl.TLSVersion.TLSv1_1)
    ctx.set_ciphers("ALL:@SECLEVEL=0")
    refused(server("ecdsa"), ctx)


def test_rsa_key_exchange_refused():
    """a TLS 1.2 client offering RSA key exchange only (no ECDHE) gets no
    session: that would be a decryption, which the key holder never does"""
    ctx = context("rsa")
    ctx.set_ciphers("AES128-GCM-SHA256:AES256-GCM-SHA384")
    refused(server("rsa"), ctx)


def test_priority_without_tls12():
    """--tls-priority NORMAL:-VERS-TLS1.2: a TLS 1.2-only client is refused"""
    refused(server("ecdsa", ["--tls-priority", "NORMAL:-VERS-TLS1.2"]),
            context("ecdsa"))


def test_priority_without_tls13():
    """--tls-priority NORMAL:-VERS-TLS1.3: a default client gets TLS 1.2"""
    srv = server("ecdsa", ["--tls-priority", "NORMAL:-VERS-TLS1.3"])
    ctx = context("ecdsa", version_max=ssl.TLSVersion.MAXIMUM_SUPPORTED)
    with starttls(srv, ctx) as c:
        assert c.sock.version() == "TLSv1.2", c.sock.version()
        read_whole(c)


CASES = [case(f, k) for k in KEY_TYPES
         for f in (tls12_copy, tls12_client_certificate)] + [
    test_tls11_refused,
    test_rsa_key_exchange_refused,
    test_priority_without_tls12,
    test_priority_without_tls13,
]


def main():
    return N.run_tls_cases(CASES, SERVERS, TMP, IMG, IMG_SIZE,
                           [(pki(k), k) for k in KEY_TYPES], 120)


if __name__ == "__main__":
    sys.exit(main())
