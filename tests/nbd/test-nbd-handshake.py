#!/usr/bin/python3
"""NBD handshake (option haggling) security tests for nbdcurld.

Starts `$NBDCURLD -f -r -U SOCK file:///IMG` and talks raw NBD to it.
Each case names the spec rule or the vulnerability class it checks.
TAP output; exit 0 only if every case passes (77: server not built).
"""

import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402
from nbdraw import Closed, Timeout                       # noqa: E402

IMG_SIZE = 4 * 1024 * 1024 + 512

TMP = None
IMG = None
SRV = None


def new():
    """A connection that has read the greeting and sent client flags."""
    c = SRV.connect()
    c.start()
    return c


def expect_reply(c, option, data=b"", want=None, length=None):
    """Send one option and return its final reply, checking its type."""
    replies = c.option(option, data, length)
    final = replies[-1]
    if want is not None:
        assert final.reply == want, "option %d: got %r, want %s" % (
            option, final, N.rep_name(want))
    return final


def still_works(c):
    """The handshake goes on: LIST answers normally after the bad option."""
    exports = c.opt_list()
    assert len(exports) >= 1, "LIST returned nothing"


def server_accepts_new_client():
    with SRV.connect() as c:
        c.start()
        still_works(c)


# ---- greeting and client flags ----

def test_greeting():
    """greeting is NBDMAGIC, IHAVEOPT, flags FIXED_NEWSTYLE|NO_ZEROES"""
    with SRV.connect() as c:
        raw = c.recv_exact(18)
        magic, opt, flags = struct.unpack(">QQH", raw)
        assert raw[:8] == b"NBDMAGIC", raw[:8]
        assert magic == N.NBDMAGIC and opt == N.IHAVEOPT, raw
        assert flags == N.FLAG_FIXED_NEWSTYLE | N.FLAG_NO_ZEROES, \
            "handshake flags 0x%x" % flags


def test_client_flags_not_fixed():
    """plain newstyle (no FIXED_NEWSTYLE): any option but EXPORT_NAME has no
    reply the client could parse -> closed, nothing sent"""
    with SRV.connect() as c:
        c.read_greeting()
        c.send_client_flags(N.FLAG_C_NO_ZEROES)
        # Whatever the server does, it must not start option haggling with
        # this client: sending LIST must not produce an option reply.
        try:
            c.send_option(N.OPT_LIST)
        except Closed:
            return
        got = c.assert_closed(3)
        assert not got, "server replied %r to a non-fixed client" % got[:40]


def test_plain_newstyle_export_name():
    """plain newstyle (client flags 0, as old clients send): EXPORT_NAME
    -> size, flags and the 124 zero bytes; reads work"""
    with SRV.connect() as c:
        c.start(0)
        size, flags = c.export_name("")         # reads the 124 zero bytes
        assert size == IMG_SIZE and flags & N.TFLAG_READ_ONLY, (size, flags)
        r = c.read(0, 4096)
        assert r.error == 0 and r.data == N.image_bytes(IMG, 0, 4096), r
    with SRV.connect() as c:
        c.start(N.FLAG_C_NO_ZEROES)             # no zeroes, plain newstyle
        size, flags = c.export_name("")
        r = c.read(4096, 512)
        assert r.error == 0 and r.data == N.image_bytes(IMG, 4096, 512), r


def test_plain_newstyle_other_options_close():
    """plain newstyle: ABORT, STARTTLS, GO, STRUCTURED_REPLY or an unknown
    option -> closed without a byte (fixed-newstyle replies would be
    garbage to it); an unknown export name closes too"""
    cases = ((N.OPT_ABORT, b""), (N.OPT_STARTTLS, b""),
             (N.OPT_GO, N.info_payload("")), (N.OPT_STRUCTURED_REPLY, b""),
             (0x1234, b"x" * 8), (N.OPT_EXPORT_NAME, b"no-such-export"))
    for option, data in cases:
        with SRV.connect() as c:
            c.start(0)
            try:
                c.send_option(option, data)
            except Closed:
                continue
            got = c.assert_closed(3, "option %d" % option)
            assert not got, "option %d: server sent %r" % (option, got[:40])
    server_accepts_new_client()


def test_client_flags_unknown_bits():
    """unknown client flag bits -> server MUST drop the connection"""
    for flags in (N.FLAG_C_FIXED_NEWSTYLE | (1 << 2),
                  N.FLAG_C_FIXED_NEWSTYLE | N.FLAG_C_NO_ZEROES | (1 << 31),
                  0xFFFFFFFF):
        with SRV.connect() as c:
            c.read_greeting()
            c.send_client_flags(flags)
            try:
                c.send_option(N.OPT_LIST)
            except Closed:
                continue
            got = c.assert_closed(3, "client flags 0x%x" % flags)
            assert not got, "flags 0x%x: server replied %r" % (flags, got[:40])


def test_short_client_flags_then_eof():
    """client sends 2 of 4 flag bytes and closes: server survives"""
    with SRV.connect() as c:
        c.read_greeting()
        c.send(b"\x00\x00")
    server_accepts_new_client()


# ---- unknown options and STARTTLS ----

def test_unknown_option():
    """unknown option 0x1234 -> NBD_REP_ERR_UNSUP and the next option works"""
    with new() as c:
        expect_reply(c, 0x1234, b"some payload", N.REP_ERR_UNSUP)
        still_works(c)
        expect_reply(c, 0xFFFFFFFF, b"", N.REP_ERR_UNSUP)
        still_works(c)


def test_starttls_unsup():
    """STARTTLS without TLS support -> ERR_UNSUP (or POLICY), not ACK"""
    with new() as c:
        final = expect_reply(c, N.OPT_STARTTLS)
        assert final.reply in (N.REP_ERR_UNSUP, N.REP_ERR_POLICY), final
        still_works(c)


def test_starttls_pipelined_injection():
    """STARTTLS state injection: options pipelined right behind STARTTLS are
    plaintext options, answered in order; nothing buffered across a mode
    switch"""
    with new() as c:
        # Both options in one send(): the server reads them in one go.
        c.send(struct.pack(">QII", N.IHAVEOPT, N.OPT_STARTTLS, 0) +
               struct.pack(">QII", N.IHAVEOPT, N.OPT_LIST, 0))
        r1 = c.read_option_reply()
        assert r1.option == N.OPT_STARTTLS, r1
        assert r1.reply in (N.REP_ERR_UNSUP, N.REP_ERR_POLICY), r1
        replies = c.read_option_replies(N.OPT_LIST)
        assert replies[-1].reply == N.REP_ACK, replies
        assert any(r.reply == N.REP_SERVER for r in replies), replies
        # And a GO pipelined behind a second STARTTLS still works.
        c.send(struct.pack(">QII", N.IHAVEOPT, N.OPT_STARTTLS, 0) +
               struct.pack(">QII", N.IHAVEOPT, N.OPT_GO, 6) +
               N.info_payload(""))
        r1 = c.read_option_reply()
        assert r1.option == N.OPT_STARTTLS and r1.is_error, r1
        replies = c.read_option_replies(N.OPT_GO)
        assert replies[-1].reply == N.REP_ACK, replies
        r = c.read(0, 512)
        assert r.error == 0 and r.data == N.image_bytes(IMG, 0, 512), r


def test_starttls_with_payload():
    """STARTTLS with a payload (spec: no data) -> error reply, not ACK"""
    with new() as c:
        final = expect_reply(c, N.OPT_STARTTLS, b"\x16\x03\x01garbage")
        assert final.is_error, final
        still_works(c)


# ---- LIST ----

def test_list():
    """LIST returns the export (name "") as REP_SERVER, then ACK"""
    with new() as c:
        exports = c.opt_list()
        names = [n for n, _ in exports]
        assert names == [b""], "LIST names %r" % names


def test_list_with_payload():
    """LIST with nonzero length -> ERR_INVALID (spec example) and goes on"""
    with new() as c:
        expect_reply(c, N.OPT_LIST, b"xyz", N.REP_ERR_INVALID)
        still_works(c)


def test_list_named_exports():
    """LIST on a server with named exports returns each name and its
    description; INFO on a named export works, an unlisted one is unknown
    ("" is the spec's default export: unknown, or one of the listed)"""
    srv = N.Server(["--export", "alpha=file://" + IMG,
                    "--export-ro", "beta=file://" + IMG,
                    "--description", "alpha=first disk"], TMP, "named")
    srv.start()
    try:
        with srv.connect() as c:
            c.start()
            exports = dict(c.opt_list())
            assert set(exports) == {b"alpha", b"beta"}, exports
            assert exports[b"alpha"] == b"first disk", exports
            final, inf = c.info_or_go(N.OPT_INFO, "beta")
            assert final.reply == N.REP_ACK, final
            size, flags = struct.unpack(">QH", inf[N.INFO_EXPORT])
            assert size == IMG_SIZE and flags & N.TFLAG_READ_ONLY
            final, _ = c.info_or_go(N.OPT_INFO, "gamma")
            assert final.reply == N.REP_ERR_UNKNOWN, final
            final, inf = c.info_or_go(N.OPT_INFO, "", [N.INFO_NAME])
            assert final.reply in (N.REP_ACK, N.REP_ERR_UNKNOWN), final
            if final.reply == N.REP_ACK and N.INFO_NAME in inf:
                assert inf[N.INFO_NAME] in (b"alpha", b"beta"), inf
        assert srv.alive(), "named-export server died"
    finally:
        srv.stop()


# ---- INFO / GO ----

def test_info_unknown_export():
    """INFO on an unknown export -> ERR_UNKNOWN and the handshake goes on"""
    with new() as c:
        final, _ = c.info_or_go(N.OPT_INFO, "no-such-export")
        assert final.reply == N.REP_ERR_UNKNOWN, final
        final, _ = c.info_or_go(N.OPT_GO, "no-such-export")
        assert final.reply == N.REP_ERR_UNKNOWN, final
        still_works(c)


def test_info_then_go():
    """INFO then GO on the same export: both report the same size/flags,
    block size min 1 / pref 4096 / max 32 MiB, then reads work"""
    with new() as c:
        final, inf = c.info_or_go(N.OPT_INFO, "", [N.INFO_BLOCK_SIZE,
                                                   N.INFO_NAME])
        assert final.reply == N.REP_ACK, final
        size, flags = struct.unpack(">QH", inf[N.INFO_EXPORT])
        assert size == IMG_SIZE, size
        assert flags & N.TFLAG_HAS_FLAGS and flags & N.TFLAG_READ_ONLY, flags
        assert not flags & (N.TFLAG_SEND_FLUSH | N.TFLAG_SEND_TRIM |
                            N.TFLAG_SEND_WRITE_ZEROES), \
            "read-only export advertises writes: 0x%x" % flags
        assert N.INFO_BLOCK_SIZE in inf, "no INFO_BLOCK_SIZE: %r" % inf
        mn, pref, mx = struct.unpack(">III", inf[N.INFO_BLOCK_SIZE])
        assert (mn, pref, mx) == (1, 4096, N.MAX_REQUEST_SIZE), (mn, pref, mx)
        size2, flags2 = c.go("")
        assert (size2, flags2) == (size, flags), (size2, flags2)
        r = c.read(IMG_SIZE - 512, 512)
        assert r.error == 0 and r.data == N.image_bytes(IMG, IMG_SIZE - 512,
                                                        512)


def test_info_unknown_info_request():
    """INFO asking for an unknown info type (0xbeef): ignored, still ACK"""
    with new() as c:
        final, inf = c.info_or_go(N.OPT_INFO, "", [0xBEEF, N.INFO_EXPORT])
        assert final.reply == N.REP_ACK, final
        assert 0xBEEF not in inf, inf


def test_info_name_length_overflow():
    """nbd-server name-length overflow class: name length larger than the
    option length -> ERR_INVALID (or closed); the server survives"""
    for name_len in (100, 0xFFFFFFFF, 0x80000000, 0xFFFFFFFC):
        with new() as c:
            data = N.info_payload("abcde", name_len=name_len)
            c.send_option(N.OPT_INFO, data)
            try:
                final = c.read_option_replies(N.OPT_INFO)[-1]
            except Closed:
                continue
            assert final.reply == N.REP_ERR_INVALID, \
                "name length 0x%x: %r" % (name_len, final)
            still_works(c)
    server_accepts_new_client()


def invalid_or_closed(opt, data):
    """Option opt with a malformed payload on a new connection: answered
    ERR_INVALID with the connection still usable, or closed."""
    with new() as c:
        try:
            final = expect_reply(c, opt, data)
            assert final.reply == N.REP_ERR_INVALID, final
            still_works(c)
        except Closed:
            pass


def test_info_request_count_overflow():
    """INFO whose info-request count runs past the option length ->
    ERR_INVALID (or closed); trailing bytes after the list too"""
    invalid_or_closed(N.OPT_INFO, N.info_payload("")[:-2] + struct.pack(">H", 0xFFFF))
    invalid_or_closed(N.OPT_INFO, N.info_payload("", [N.INFO_EXPORT]) + b"\x00")
    # Too short to hold even the name length.
    invalid_or_closed(N.OPT_GO, b"\x00\x00")
    server_accepts_new_client()


def test_option_length_huge():
    """option length 0xffffffff: closed promptly, never read or allocated
    (no 4 GiB buffer: RSS of the whole server tree stays flat)"""
    before = N.tree_rss_kib(SRV.pid)
    with new() as c:
        c.send_option(N.OPT_LIST, b"", length=0xFFFFFFFF)
        try:
            c.send(b"\0" * 65536)
        except Closed:
            pass
        t0 = time.monotonic()
        try:
            c.wait_closed(3)
        except Timeout:
            raise AssertionError("server kept reading a 4 GiB option")
        dt = time.monotonic() - t0
    after = N.tree_rss_kib(SRV.pid)
    assert after - before < 64 * 1024, \
        "server RSS grew %d KiB" % (after - before)
    assert dt < 3, dt
    server_accepts_new_client()


def test_option_length_just_over_limit():
    """option length NBD_MAX_OPTION_LENGTH+1 with the payload sent -> closed
    (or an error reply), the server survives"""
    with new() as c:
        n = N.MAX_OPTION_LENGTH + 1
        try:
            c.send_option(0x4242, b"\0" * n)
        except Closed:
            pass
        try:
            final = c.read_option_replies(0x4242)[-1]
            assert final.is_error, final
        except Closed:
            pass
    server_accepts_new_client()


def test_export_name_too_long_export_name():
    """qemu export-name stack smash class: EXPORT_NAME with a 4097-byte
    name -> connection closed (EXPORT_NAME cannot return an error)"""
    with new() as c:
        c.send_option(N.OPT_EXPORT_NAME, b"A" * (N.MAX_STRING + 1))
        got = c.assert_closed(3)
        assert len(got) < 10, "server entered transmission: %r" % got[:20]
    server_accepts_new_client()


def test_export_name_too_long_go():
    """4097-byte export name via GO -> an error reply (or closed), not ACK;
    a 4096-byte unknown name gets ERR_UNKNOWN"""
    with new() as c:
        try:
            final, _ = c.info_or_go(N.OPT_GO, "B" * (N.MAX_STRING + 1))
            assert final.is_error, final
            still_works(c)
        except Closed:
            pass
    with new() as c:
        final, _ = c.info_or_go(N.OPT_GO, "C" * N.MAX_STRING)
        assert final.reply == N.REP_ERR_UNKNOWN, final
        still_works(c)
    server_accepts_new_client()


def test_too_many_options():
    """more than NBD_MAX_OPTIONS (32) options -> closed (DoS bound)"""
    with new() as c:
        for i in range(N.MAX_OPTIONS):
            final = expect_reply(c, 0x4000 + i)
            assert final.reply == N.REP_ERR_UNSUP, (i, final)
        try:
            c.send_option(N.OPT_LIST)
        except Closed:
            return
        got = c.assert_closed(3, "option %d" % (N.MAX_OPTIONS + 1))
        # The server may say why before closing, but must not serve LIST.
        if len(got) >= 20:
            _, _, rep, _ = struct.unpack(">QIII", got[:20])
            assert rep & N.REP_FLAG_ERROR, "option %d served: %s" % (
                N.MAX_OPTIONS + 1, N.rep_name(rep))


def test_options_after_go_are_requests():
    """after GO the bytes are transmission requests: an option header is a
    bad request magic -> closed, not answered as an option"""
    with new() as c:
        c.go("")
        # At least one request header's worth (28 bytes) of option bytes.
        c.send_option(N.OPT_GO, N.info_payload("abcdefgh"))
        got = c.assert_closed(3)
        assert not got.startswith(struct.pack(">Q", N.REP_MAGIC)), got[:40]


def test_options_pipelined_after_go():
    """GO and a request pipelined in one send: the request is served after
    the GO replies (no option parser sees it)"""
    with new() as c:
        c.send(struct.pack(">QII", N.IHAVEOPT, N.OPT_GO, 6) +
               N.info_payload("") +
               struct.pack(">IHHQQI", N.REQUEST_MAGIC, 0, N.CMD_READ, 7,
                           4096, 4096))
        replies = c.read_option_replies(N.OPT_GO)
        assert replies[-1].reply == N.REP_ACK, replies
        c.pending[7] = (N.CMD_READ, 4096)
        r = c.read_reply()
        assert r.cookie == 7 and r.error == 0, r
        assert r.data == N.image_bytes(IMG, 4096, 4096)


def test_export_name_unknown():
    """EXPORT_NAME on an unknown export -> connection closed"""
    with new() as c:
        c.send_option(N.OPT_EXPORT_NAME, b"no-such-export")
        got = c.assert_closed(3)
        assert not got, "server replied %r" % got[:40]


def test_export_name_ok():
    """EXPORT_NAME "" -> size, flags (no zeroes: NO_ZEROES negotiated)"""
    with new() as c:
        size, flags = c.export_name("")
        assert size == IMG_SIZE and flags & N.TFLAG_READ_ONLY, (size, flags)
        r = c.read(0, 4096)
        assert r.error == 0 and r.data == N.image_bytes(IMG, 0, 4096)
    with SRV.connect() as c:
        c.start(N.FLAG_C_FIXED_NEWSTYLE)        # zeroes wanted
        size, flags = c.export_name("")          # reads the 124 zero bytes
        r = c.read(0, 512)
        assert r.error == 0 and r.data == N.image_bytes(IMG, 0, 512)


def test_abort():
    """ABORT -> optional ACK, then the server closes"""
    with new() as c:
        c.send_option(N.OPT_ABORT)
        got = c.assert_closed(3)
        if got:
            assert len(got) == 20, got
            magic, opt, rep, ln = struct.unpack(">QIII", got)
            assert (magic, opt, rep, ln) == (N.REP_MAGIC, N.OPT_ABORT,
                                             N.REP_ACK, 0), got


def test_abort_with_payload():
    """ABORT with a payload: still ends the session (or ERR_INVALID)"""
    with new() as c:
        c.send_option(N.OPT_ABORT, b"junk")
        try:
            c.wait_closed(3)
        except Timeout:
            raise AssertionError("ABORT with payload left the session open")


def test_eof_mid_option():
    """client sends half an option payload and hangs up: server survives"""
    with new() as c:
        c.send_option(N.OPT_GO, b"\x00\x00", length=100)
    with new() as c:
        c.send(struct.pack(">Q", N.IHAVEOPT)[:5])
    server_accepts_new_client()


def test_bad_option_magic():
    """option header with a bad magic -> closed"""
    with new() as c:
        c.send(struct.pack(">QII", 0x1122334455667788, N.OPT_LIST, 0))
        got = c.assert_closed(3)
        assert not got, got[:40]


# ---- structured replies and meta contexts ----

def test_structured_reply_with_payload():
    """STRUCTURED_REPLY with a payload -> ERR_INVALID, then it works
    without one"""
    with new() as c:
        expect_reply(c, N.OPT_STRUCTURED_REPLY, b"x", N.REP_ERR_INVALID)
        expect_reply(c, N.OPT_STRUCTURED_REPLY, b"", N.REP_ACK)
        still_works(c)


def test_set_meta_before_structured():
    """SET_META_CONTEXT before STRUCTURED_REPLY -> error (spec: SHOULD
    ERR_INVALID): no context may be selected without structured replies"""
    with new() as c:
        final, ctx = c.meta_context(N.OPT_SET_META_CONTEXT, "")
        assert final.is_error and not ctx, (final, ctx)
        still_works(c)


def test_meta_context_base_allocation():
    """LIST/SET_META_CONTEXT base:allocation -> one META_CONTEXT reply
    naming it, then ACK; an empty LIST query lists it too"""
    with new() as c:
        c.structured_reply()
        final, ctx = c.meta_context(N.OPT_LIST_META_CONTEXT, "")
        assert final.reply == N.REP_ACK, final
        assert [n for _, n in ctx] == [N.META_BASE_ALLOCATION], ctx
        final, ctx = c.meta_context(N.OPT_LIST_META_CONTEXT, "", [])
        assert final.reply == N.REP_ACK, final
        assert N.META_BASE_ALLOCATION in [n for _, n in ctx], ctx
        final, ctx = c.meta_context(N.OPT_SET_META_CONTEXT, "")
        assert final.reply == N.REP_ACK, final
        assert [n for _, n in ctx] == [N.META_BASE_ALLOCATION], ctx
        # Unknown contexts are simply not selected.
        final, ctx = c.meta_context(N.OPT_SET_META_CONTEXT, "",
                                    [b"x-nosuch:thing"])
        assert final.reply == N.REP_ACK and ctx == [], (final, ctx)
        final, ctx = c.meta_context(N.OPT_SET_META_CONTEXT, "no-such-export")
        assert final.is_error, final
        still_works(c)


def test_meta_context_count_mismatch():
    """meta-context query count that does not match the length ->
    ERR_INVALID (bounded parse of untrusted counts)"""
    cases = [
        ("count 5, one query", N.meta_payload("", [b"base:allocation"],
                                              count=5)),
        ("count 0xffffffff", N.meta_payload("", [b"base:allocation"],
                                            count=0xFFFFFFFF)),
        ("count 0, one query", N.meta_payload("", [b"base:allocation"],
                                              count=0)),
        ("query length past end", N.pack_string("") + struct.pack(">I", 1) +
         struct.pack(">I", 1000) + b"base:allocation"),
        ("name length past end", struct.pack(">I", 0xFFFFFFF0) +
         struct.pack(">I", 0)),
        ("truncated", b"\x00\x00"),
    ]
    for opt in (N.OPT_LIST_META_CONTEXT, N.OPT_SET_META_CONTEXT):
        for what, data in cases:
            with new() as c:
                c.structured_reply()
                try:
                    final = expect_reply(c, opt, data)
                except Closed:
                    continue
                assert final.reply == N.REP_ERR_INVALID, \
                    "opt %d, %s: %r" % (opt, what, final)
                still_works(c)
    server_accepts_new_client()


def test_meta_context_too_many_queries():
    """more queries than NBD_MAX_META_QUERIES (16) -> error or closed, not a
    reply per query"""
    with new() as c:
        c.structured_reply()
        data = N.meta_payload("", [b"base:allocation"] * 200)
        try:
            replies = c.option(N.OPT_LIST_META_CONTEXT, data)
        except Closed:
            return
        assert replies[-1].is_error, replies[-1]
        still_works(c)


def test_concurrent_handshakes_survive():
    """many half-open handshakes at once do not stop a fresh client"""
    conns = []
    try:
        for _ in range(20):
            c = SRV.connect()
            c.read_greeting()
            conns.append(c)
        server_accepts_new_client()
    finally:
        for c in conns:
            c.close()


CASES = [
    test_greeting,
    test_client_flags_not_fixed,
    test_plain_newstyle_export_name,
    test_plain_newstyle_other_options_close,
    test_client_flags_unknown_bits,
    test_short_client_flags_then_eof,
    test_unknown_option,
    test_starttls_unsup,
    test_starttls_pipelined_injection,
    test_starttls_with_payload,
    test_list,
    test_list_with_payload,
    test_list_named_exports,
    test_info_unknown_export,
    test_info_then_go,
    test_info_unknown_info_request,
    test_info_name_length_overflow,
    test_info_request_count_overflow,
    test_option_length_huge,
    test_option_length_just_over_limit,
    test_export_name_too_long_export_name,
    test_export_name_too_long_go,
    test_too_many_options,
    test_options_after_go_are_requests,
    test_options_pipelined_after_go,
    test_export_name_unknown,
    test_export_name_ok,
    test_abort,
    test_abort_with_payload,
    test_eof_mid_option,
    test_bad_option_magic,
    test_structured_reply_with_payload,
    test_set_meta_before_structured,
    test_meta_context_base_allocation,
    test_meta_context_count_mismatch,
    test_meta_context_too_many_queries,
    test_concurrent_handshakes_survive,
]


def main():
    return N.run_cases_against_server(CASES, IMG_SIZE, 300, globals())


if __name__ == "__main__":
    sys.exit(main())
