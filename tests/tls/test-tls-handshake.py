#!/usr/bin/python3
"""NBD TLS at the protocol level: raw NBD (tests/lib/nbdraw.py) with Python's
ssl module wrapped around the socket after NBD_OPT_STARTTLS.

- --tls=require: every option but STARTTLS and ABORT is answered
  NBD_REP_ERR_TLS_REQD (revealing no export name), EXPORT_NAME closes the
  connection, ABORT ends it; after STARTTLS the same options work.
- --tls-priority limits what TLS the server speaks.
- STARTTLS with a payload -> NBD_REP_ERR_INVALID; a second STARTTLS over
  TLS -> an error, not ACK; without TLS configured -> ERR_UNSUP/POLICY;
  --tls=on serves clear text too.
- STARTTLS injection (the class of nbdkit's CVE-2021-3716): what was
  negotiated in clear (structured replies, meta contexts) is forgotten at
  STARTTLS, and options a client sends in clear right behind its STARTTLS,
  in the same packet, are discarded: never answered, in clear or over TLS.
- Access control: an export a client may not use is absent from LIST, and
  INFO, GO and the meta-context options on it are answered exactly as on
  a name that does not exist (code and message), the server logging the
  refusal (client certificate and address rules); a clear-text client has
  no TLS identity.

Keys come from tests/lib/make-tls-keys.sh at test time.  TAP output.
"""

import os
import socket
import ssl
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402
from nbdraw import Closed                                # noqa: E402

IMG_SIZE = 2 * 1024 * 1024 + 512
EXPORT = "secretname"           # must never show before TLS

TMP = N.tmpdir()
PKI = os.path.join(TMP, "pki")
IMG = os.path.join(TMP, "disk.img")
SERVERS = {}

# Options a --tls=require server must refuse before TLS, with payloads
# that would be valid after it.
UNKNOWN_OPTION = 0x1234


def refused_options():
    return [
        ("LIST", N.OPT_LIST, b""),
        ("INFO", N.OPT_INFO, N.info_payload(EXPORT, [N.INFO_NAME])),
        ("INFO default", N.OPT_INFO, N.info_payload("")),
        ("GO", N.OPT_GO, N.info_payload(EXPORT)),
        ("STRUCTURED_REPLY", N.OPT_STRUCTURED_REPLY, b""),
        ("LIST_META_CONTEXT", N.OPT_LIST_META_CONTEXT,
         N.meta_payload(EXPORT, [N.META_BASE_ALLOCATION])),
        ("SET_META_CONTEXT", N.OPT_SET_META_CONTEXT,
         N.meta_payload(EXPORT, [N.META_BASE_ALLOCATION])),
        ("unknown 0x1234", UNKNOWN_OPTION, b"payload"),
        ("unknown 0xffffffff", 0xFFFFFFFF, b""),
    ]


def opt_bytes(option, data=b""):
    return struct.pack(">QII", N.IHAVEOPT, option, len(data)) + data


# ---- servers ----

def server(kind):
    """Start (once) and return the server of one kind."""
    if kind in SERVERS:
        return SERVERS[kind]
    certs = ["--tls-certificates", PKI]
    img = "file://" + IMG
    named = ["--export-ro", "%s=%s" % (EXPORT, img)]
    args = {
        "require": ["--tls=require"] + certs + named,
        "on": ["--tls=on"] + certs + named,
        "off": named,
        # Per-export rules, client certificates checked.
        # (No CRL: client2 is a valid client here.)
        "acl": ["--tls=require", "--tls-verify-peer",
                "--tls-certificates", os.path.join(PKI, "nocrl")] +
               ["--export-ro", "a=" + img,
                "--allow", "cert:CN=client1,O=nbdcurld-test",
                "--export-ro", "b=" + img,
                "--allow", "cert:CN=client2,O=nbdcurld-test",
                "--export-ro", "c=" + img, "--allow", "10.0.0.0/8",
                "--export-ro", "d=" + img],
        # One cipher only, by GnuTLS priority string.
        "aes128": ["--tls=require", "--tls-priority",
                   "NORMAL:-CIPHER-ALL:+AES-128-GCM"] + certs + named,
        # An identity rule on a server that also serves clear text.
        "acl-on": ["--tls=on", "--tls-verify-peer"] + certs +
                  ["--export-ro", "a=" + img,
                   "--allow", "cert:CN=client1,O=nbdcurld-test",
                   "--export-ro", "d=" + img],
    }[kind]
    srv = N.Server(args, TMP, kind)
    srv.start()
    SERVERS[kind] = srv
    return srv


def new(kind):
    """A connection to the server of that kind, greeting read, flags sent."""
    c = server(kind).connect()
    c.start()
    return c


def tls_context(client=None):
    """Trusts the test CA (and checks the server's name, localhost);
    presents PKI/CLIENT's certificate when client is given."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(os.path.join(PKI, "ca-cert.pem"))
    if client:
        d = os.path.join(PKI, client)
        ctx.load_cert_chain(os.path.join(d, "client-cert.pem"),
                            os.path.join(d, "client-key.pem"))
    return ctx


def wrap(c, client=None):
    """The TLS handshake on c's socket; from then on c speaks over TLS."""
    c.sock.settimeout(c.timeout)
    c.sock = tls_context(client).wrap_socket(c.sock,
                                             server_hostname="localhost")


def starttls(c, client=None):
    final = c.option(N.OPT_STARTTLS)[-1]
    assert final.reply == N.REP_ACK, "STARTTLS: %r" % final
    wrap(c, client)


def expect_final(c, option, data, want):
    replies = c.option(option, data)
    final = replies[-1]
    wants = want if isinstance(want, tuple) else (want,)
    assert final.reply in wants, "option %d: got %r, want %s" % (
        option, final, "/".join(N.rep_name(w) for w in wants))
    return replies


def nothing_more(c, timeout=0.5):
    """No byte is waiting or arrives within timeout (an answer to an
    injected option would)."""
    if isinstance(c.sock, ssl.SSLSocket) and c.sock.pending():
        raise AssertionError("%d unexpected bytes buffered" % c.sock.pending())
    c.sock.settimeout(timeout)
    try:
        got = c.sock.recv(4096)
    except (socket.timeout, TimeoutError):
        return
    except ssl.SSLWantReadError:
        return
    finally:
        c.sock.settimeout(c.timeout)
    raise AssertionError("unexpected bytes from the server: %r" % got[:64])


def read_ok(c, structured):
    """A read at an offset the image's pattern makes unique: right bytes,
    in the reply form negotiated."""
    off = 1024 * 1024 + 8
    r = c.read(off, 4096)
    assert r.structured == structured, "reply %r, structured expected: %s" % (
        r, structured)
    assert r.error == 0 and r.data == N.image_bytes(IMG, off, 4096), r


# ---- --tls=require before STARTTLS ----

def test_require_refuses_options():
    """--tls=require: LIST, INFO, GO, STRUCTURED_REPLY, LIST and
    SET_META_CONTEXT and unknown options are each answered (alone)
    NBD_REP_ERR_TLS_REQD, naming no export; the connection goes on and
    after STARTTLS the same LIST shows the export"""
    with new("require") as c:
        for what, option, data in refused_options():
            replies = c.option(option, data)
            assert len(replies) == 1, "%s: %r" % (what, replies)
            r = replies[0]
            assert r.option == option, "%s: reply for option %d" % (what, r.option)
            assert r.reply == N.REP_ERR_TLS_REQD, "%s: %r" % (what, r)
            assert EXPORT.encode() not in r.data, "%s: %r" % (what, r)
        starttls(c)
        names = [n for n, _ in c.opt_list()]
        assert names == [EXPORT.encode()], names


def test_require_export_name_closes():
    """--tls=require: NBD_OPT_EXPORT_NAME before TLS (which cannot be
    refused with an error) closes the connection, sending nothing"""
    with new("require") as c:
        try:
            c.send_option(N.OPT_EXPORT_NAME, EXPORT)
        except Closed:
            return
        got = c.assert_closed(5, "EXPORT_NAME before TLS")
        assert not got, "server sent %r" % got[:64]


def test_require_plain_newstyle_closes():
    """--tls=require: a plain-newstyle client (no FIXED_NEWSTYLE flag)
    cannot send STARTTLS: closed after its flags, even its EXPORT_NAME
    unanswered; with --tls=on it is served in clear"""
    with server("require").connect() as c:
        c.start(0)
        try:
            c.send_option(N.OPT_EXPORT_NAME, EXPORT)
            got = c.assert_closed(5, "plain newstyle under --tls=require")
        except Closed:
            got = b""
        assert not got, "server sent %r" % got[:64]
    with server("on").connect() as c:
        c.start(0)
        size, _ = c.export_name(EXPORT)
        assert size > 0, size
        read_ok(c, False)


def test_require_abort():
    """--tls=require: ABORT before TLS is honoured (ACK or nothing, then the
    connection is closed)"""
    with new("require") as c:
        c.send_option(N.OPT_ABORT)
        got = c.assert_closed(5, "ABORT")
        if got:
            assert len(got) == 20, got
            magic, option, reply, length = struct.unpack(">QIII", got)
            assert (magic, option, reply, length) == (
                N.REP_MAGIC, N.OPT_ABORT, N.REP_ACK, 0), got


def test_require_tls_then_read():
    """--tls=require: STARTTLS, then structured replies, a meta context, GO,
    reads and block status all over TLS"""
    with new("require") as c:
        starttls(c)
        c.structured_reply()
        final, ctx = c.meta_context(N.OPT_SET_META_CONTEXT, EXPORT)
        assert final.reply == N.REP_ACK and len(ctx) == 1, (final, ctx)
        size, _ = c.go(EXPORT)
        assert size == IMG_SIZE, size
        read_ok(c, True)
        r = c.command(N.CMD_BLOCK_STATUS, 0, 65536)
        assert r.error == 0 and list(r.extents) == [ctx[0][0]], r


def test_require_expect_tls_after_refusals():
    """--tls=require: a client may try options in clear first (as qemu
    does), then STARTTLS and GO"""
    with new("require") as c:
        expect_final(c, N.OPT_GO, N.info_payload(EXPORT), N.REP_ERR_TLS_REQD)
        starttls(c)
        c.go(EXPORT)
        read_ok(c, False)


# ---- STARTTLS itself ----

def test_starttls_with_payload():
    """STARTTLS with a non-zero length -> NBD_REP_ERR_INVALID (the payload is
    skipped, no TLS starts); a proper STARTTLS then works"""
    for kind in ("require", "on"):
        with new(kind) as c:
            replies = c.option(N.OPT_STARTTLS, b"\x16\x03\x01\x00\x05hello")
            assert len(replies) == 1, replies
            assert replies[0].reply == N.REP_ERR_INVALID, (kind, replies[0])
            starttls(c)
            c.go(EXPORT)
            read_ok(c, False)


def test_starttls_twice():
    """a second STARTTLS, over TLS, is an error (not ACK: no TLS inside TLS)
    and the session goes on"""
    for kind in ("require", "on"):
        with new(kind) as c:
            starttls(c)
            replies = c.option(N.OPT_STARTTLS)
            assert len(replies) == 1 and replies[0].is_error, (kind, replies)
            names = [n for n, _ in c.opt_list()]
            assert names == [EXPORT.encode()], names
            c.go(EXPORT)
            read_ok(c, False)


def test_starttls_when_off():
    """no TLS configured: STARTTLS -> ERR_UNSUP (or ERR_POLICY), and the
    clear-text handshake goes on"""
    with new("off") as c:
        final = c.option(N.OPT_STARTTLS)[-1]
        assert final.reply in (N.REP_ERR_UNSUP, N.REP_ERR_POLICY), final
        c.go(EXPORT)
        read_ok(c, False)


def test_on_serves_clear_text():
    """--tls=on: a clear-text client lists, negotiates and reads as without
    TLS"""
    with new("on") as c:
        names = [n for n, _ in c.opt_list()]
        assert names == [EXPORT.encode()], names
        c.structured_reply()
        c.go(EXPORT)
        read_ok(c, True)


def test_tls_with_wrong_ca_refused_by_client():
    """control for the TLS client: a context trusting another CA refuses the
    server's certificate (so the handshakes here do check it)"""
    with new("require") as c:
        final = c.option(N.OPT_STARTTLS)[-1]
        assert final.reply == N.REP_ACK, final
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(os.path.join(PKI, "otherca", "ca-cert.pem"))
        try:
            ctx.wrap_socket(c.sock, server_hostname="localhost")
        except ssl.SSLCertVerificationError:
            return
        raise AssertionError("handshake with an untrusted server succeeded")


def test_tls_priority():
    """--tls-priority: a server limited to AES-128-GCM by its priority
    string uses it; a TLS 1.2-only client gets TLS 1.2 with ECDHE
    (tests/tls/test-tls12.py tries every kind of key)"""
    with new("require") as c:
        starttls(c)
        assert c.sock.version() == "TLSv1.3", c.sock.version()
    with new("aes128") as c:
        starttls(c)
        assert c.sock.cipher()[0] == "TLS_AES_128_GCM_SHA256", c.sock.cipher()
        c.go(EXPORT)
        read_ok(c, False)
    with new("require") as c:
        final = c.option(N.OPT_STARTTLS)[-1]
        assert final.reply == N.REP_ACK, final
        ctx = tls_context()
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        c.sock.settimeout(c.timeout)
        c.sock = ctx.wrap_socket(c.sock, server_hostname="localhost")
        assert c.sock.version() == "TLSv1.2", c.sock.version()
        assert c.sock.cipher()[0].startswith("ECDHE-"), c.sock.cipher()
        c.go(EXPORT)
        read_ok(c, False)


# ---- STARTTLS resets and injection ----

def negotiate_in_clear(c):
    """Structured replies and base:allocation, in clear (--tls=on)."""
    c.structured_reply()
    final, ctx = c.meta_context(N.OPT_SET_META_CONTEXT, EXPORT)
    assert final.reply == N.REP_ACK and len(ctx) == 1, (final, ctx)


def check_reset(c):
    """After STARTTLS: no structured replies (a READ gets a simple reply),
    no meta context (BLOCK_STATUS refused).  c.structured is False here,
    so a structured reply fails the read."""
    c.structured = False
    c.go(EXPORT)
    read_ok(c, False)
    r = c.command(N.CMD_BLOCK_STATUS, 0, 65536)
    assert r.error != 0 and not r.structured, \
        "BLOCK_STATUS after STARTTLS: %r" % r
    nothing_more(c)


def test_starttls_resets_negotiation():
    """--tls=on: structured replies and a meta context negotiated in clear
    are forgotten at STARTTLS: a READ over TLS gets a simple reply,
    BLOCK_STATUS is refused"""
    with new("on") as c:
        negotiate_in_clear(c)
        starttls(c)
        check_reset(c)


def test_starttls_resets_meta_context():
    """--tls=on: the meta context set in clear is gone after STARTTLS even
    when structured replies are negotiated again over TLS: BLOCK_STATUS
    gets an error chunk, not extents"""
    with new("on") as c:
        negotiate_in_clear(c)
        starttls(c)
        c.structured_reply()
        c.go(EXPORT)
        read_ok(c, True)
        r = c.command(N.CMD_BLOCK_STATUS, 0, 65536)
        assert r.error != 0 and not r.extents, \
            "BLOCK_STATUS with a context set before STARTTLS: %r" % r


def starttls_with_injection(c, injected):
    """STARTTLS and the injected bytes in one send; the ACK must come alone,
    then the TLS handshake must succeed: the injected bytes never reach
    the TLS layer (and nothing answers them in clear, which would break
    the handshake too)."""
    c.send(opt_bytes(N.OPT_STARTTLS) + injected)
    r = c.read_option_reply()
    assert r.option == N.OPT_STARTTLS and r.reply == N.REP_ACK, r
    try:
        wrap(c)
    except (ssl.SSLError, OSError) as e:
        raise AssertionError("TLS handshake after STARTTLS + %d injected "
                             "bytes failed: %s" % (len(injected), e))


def first_reply_is_ours(c, option, data=b""):
    """Over TLS: the first option reply is for our option, not an answer
    to an injected one."""
    c.send_option(option, data)
    r = c.read_option_reply()
    assert r.option == option, "first reply over TLS is for option %d " \
        "(injected?): %r" % (r.option, r)
    return r


def test_injection_structured_reply():
    """--tls=on: SR and base:allocation in clear, then STARTTLS with
    STRUCTURED_REPLY and SET_META_CONTEXT injected behind it: handshake
    works, the injected options are never answered, and over TLS neither
    structured replies nor a context are in effect"""
    with new("on") as c:
        negotiate_in_clear(c)
        starttls_with_injection(
            c, opt_bytes(N.OPT_STRUCTURED_REPLY) +
            opt_bytes(N.OPT_SET_META_CONTEXT,
                      N.meta_payload(EXPORT, [N.META_BASE_ALLOCATION])))
        r = first_reply_is_ours(c, N.OPT_LIST)
        assert r.reply == N.REP_SERVER, r
        c.read_option_replies(N.OPT_LIST)
        check_reset(c)


def test_injection_go():
    """--tls=require: STARTTLS with INFO and GO injected behind it: the
    handshake works, neither is answered (no export is opened by bytes
    sent in clear), and the session over TLS starts from scratch"""
    with new("require") as c:
        starttls_with_injection(
            c, opt_bytes(N.OPT_INFO, N.info_payload(EXPORT, [N.INFO_NAME])) +
            opt_bytes(N.OPT_GO, N.info_payload(EXPORT)))
        r = first_reply_is_ours(c, N.OPT_LIST)
        assert r.reply == N.REP_SERVER, r
        c.read_option_replies(N.OPT_LIST)
        nothing_more(c)
        c.go(EXPORT)
        read_ok(c, False)
        nothing_more(c)


def test_injection_requests():
    """--tls=on: SR and GO-ready state in clear, STARTTLS followed by a GO
    and a READ request in the same packet: nothing is answered, a session
    over TLS is a fresh one"""
    with new("on") as c:
        negotiate_in_clear(c)
        injected = (opt_bytes(N.OPT_GO, N.info_payload(EXPORT)) +
                    struct.pack(">IHHQQI", N.REQUEST_MAGIC, 0, N.CMD_READ,
                                0xBAD, 0, 512))
        starttls_with_injection(c, injected)
        r = first_reply_is_ours(c, N.OPT_INFO, N.info_payload(EXPORT))
        assert r.reply in (N.REP_INFO, N.REP_ACK), r
        if r.reply != N.REP_ACK:
            c.read_option_replies(N.OPT_INFO)
        check_reset(c)


# ---- access control ----

def refusal(c, option, name):
    """The final reply to option on name, its message with the name
    replaced by NAME: what tells a client about the name."""
    if option in (N.OPT_INFO, N.OPT_GO):
        final, inf = c.info_or_go(option, name)
        assert not inf, "%s: information sent before the refusal: %r" % (name, inf)
    else:
        final, ctxs = c.meta_context(option, name)
        assert not ctxs, "%s: contexts sent before the refusal: %r" % (name, ctxs)
    return final.reply, final.data.replace(b'"%s"' % name.encode(), b'"NAME"')


def test_acl_certificate():
    """client1 (certificate rule on a, b for client2, c for 10.0.0.0/8, d
    open): LIST shows a and d only; INFO, GO, LIST_META_CONTEXT and
    SET_META_CONTEXT on b and c are answered exactly as on x, which does
    not exist (ERR_UNKNOWN, the same message), and the server logs the
    refusals; GO a reads"""
    with new("acl") as c:
        starttls(c, "client1")
        names = sorted(n for n, _ in c.opt_list())
        assert names == [b"a", b"d"], names
        c.structured_reply()
        for option in (N.OPT_INFO, N.OPT_GO, N.OPT_LIST_META_CONTEXT,
                       N.OPT_SET_META_CONTEXT):
            missing = refusal(c, option, "x")
            assert missing[0] == N.REP_ERR_UNKNOWN, (option, missing)
            for name in ("b", "c"):
                got = refusal(c, option, name)
                assert got == missing, "option %d on forbidden %s: %r, on a missing " \
                    "name: %r" % (option, name, got, missing)
        log = server("acl").log_text()
        for name in ("b", "c"):
            assert 'not allowed to use export "%s"' % name in log, log[-1500:]
        c.go("a")
        read_ok(c, True)


def test_acl_certificate_other_client():
    """client2 on the same server: b and d, not a"""
    with new("acl") as c:
        starttls(c, "client2")
        names = sorted(n for n, _ in c.opt_list())
        assert names == [b"b", b"d"], names
        final, _ = c.info_or_go(N.OPT_GO, "a")
        assert final.reply == N.REP_ERR_UNKNOWN, final
        c.go("b")
        read_ok(c, False)


def test_acl_clear_text_has_no_identity():
    """--tls=on with a certificate rule on a: a clear-text client does not
    see a and cannot open it (ERR_UNKNOWN, as a missing name, or
    ERR_TLS_REQD: TLS would be needed); d is served"""
    with new("acl-on") as c:
        names = sorted(n for n, _ in c.opt_list())
        assert names == [b"d"], names
        for option in (N.OPT_INFO, N.OPT_GO):
            final, inf = c.info_or_go(option, "a")
            assert final.reply in (N.REP_ERR_UNKNOWN, N.REP_ERR_TLS_REQD), final
            assert not inf, inf
        c.go("d")
        read_ok(c, False)


def test_acl_tls_identity_on_tls_on():
    """--tls=on: client1 over TLS opens a"""
    with new("acl-on") as c:
        starttls(c, "client1")
        names = sorted(n for n, _ in c.opt_list())
        assert names == [b"a", b"d"], names
        c.go("a")
        read_ok(c, False)


CASES = [
    test_require_refuses_options,
    test_require_export_name_closes,
    test_require_plain_newstyle_closes,
    test_require_abort,
    test_require_tls_then_read,
    test_require_expect_tls_after_refusals,
    test_starttls_with_payload,
    test_starttls_twice,
    test_starttls_when_off,
    test_on_serves_clear_text,
    test_tls_with_wrong_ca_refused_by_client,
    test_tls_priority,
    test_starttls_resets_negotiation,
    test_starttls_resets_meta_context,
    test_injection_structured_reply,
    test_injection_go,
    test_injection_requests,
    test_acl_certificate,
    test_acl_certificate_other_client,
    test_acl_clear_text_has_no_identity,
    test_acl_tls_identity_on_tls_on,
]


def main():
    return N.run_tls_cases(CASES, SERVERS, TMP, IMG, IMG_SIZE, [(PKI, None)], 120)


if __name__ == "__main__":
    sys.exit(main())
