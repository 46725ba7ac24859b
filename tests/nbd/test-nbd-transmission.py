#!/usr/bin/python3
"""NBD transmission-phase security tests for nbdcurld.

Starts `$NBDCURLD -f -r -U SOCK file:///IMG`, negotiates with and without
structured replies, and sends requests that a careful server must refuse.
Each case names the spec rule or the vulnerability class it checks.
TAP output; exit 0 only if every case passes (77: server not built).
"""

import hashlib
import os
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402
from nbdraw import Closed, Timeout                       # noqa: E402

IMG_SIZE = 4 * 1024 * 1024 + 512       # not a multiple of 4096 on purpose
BIG_IMG_SIZE = 64 * 1024 * 1024        # for the nbdcopy case

TMP = None
IMG = None
SRV = None


def open_conn(structured, meta=False):
    c = SRV.connect()
    cid = c.handshake("", structured=structured, meta=meta)
    assert c.export_size == IMG_SIZE, c.export_size
    return c, cid


def both_modes(check):
    """Run check(conn) with simple replies and with structured replies."""
    for structured in (False, True):
        c, _ = open_conn(structured)
        try:
            check(c)
        except AssertionError as e:
            raise AssertionError("%s replies: %s" % (
                "structured" if structured else "simple", e))
        finally:
            c.close()


def expect_error(c, err, cmd, offset=0, length=0, flags=0, payload=b""):
    """One request that must fail with err; the connection must go on."""
    r = c.command(cmd, offset, length, flags, payload)
    assert r.error == err, "cmd %d off %d len %d flags 0x%x: error %d " \
        "(%r), want %d" % (cmd, offset, length, flags, r.error, r, err)
    if cmd == N.CMD_READ:
        assert r.data is None or r.structured, "data sent with an error"
    still_serves(c)
    return r


def still_serves(c):
    """The connection still works: a small read returns the right bytes."""
    r = c.read(512, 1024)
    assert r.error == 0, "follow-up read failed: %r" % r
    assert r.data == N.image_bytes(IMG, 512, 1024), "follow-up read: bad data"


def server_alive_and_serving():
    c, _ = open_conn(True)
    with c:
        still_serves(c)


# ---- READ bounds ----

def test_read_ok():
    """reads return the image's bytes, including the unaligned tail"""
    def check(c):
        for off, ln in ((0, 4096), (1, 3), (IMG_SIZE - 512, 512),
                        (IMG_SIZE - 1, 1), (123456, 1 << 20)):
            r = c.read(off, ln)
            assert r.error == 0, (off, ln, r)
            assert r.data == N.image_bytes(IMG, off, ln), (off, ln)
    both_modes(check)


def test_read_whole_image():
    """one read of the whole image returns it exactly"""
    def check(c):
        r = c.read(0, IMG_SIZE)
        assert r.error == 0 and r.data == N.image_bytes(IMG, 0, IMG_SIZE)
    both_modes(check)


def test_read_past_end():
    """READ past the end of the export -> EINVAL"""
    def check(c):
        expect_error(c, N.EINVAL, N.CMD_READ, IMG_SIZE - 1, 2)
        expect_error(c, N.EINVAL, N.CMD_READ, IMG_SIZE, 1)
        expect_error(c, N.EINVAL, N.CMD_READ, IMG_SIZE + 4096, 4096)
        expect_error(c, N.EINVAL, N.CMD_READ, 1 << 62, 512)
    both_modes(check)


def test_read_offset_overflow():
    """READ whose offset+length wraps past 2^64 -> EINVAL (integer overflow
    in the bounds check)"""
    def check(c):
        expect_error(c, N.EINVAL, N.CMD_READ, 0xFFFFFFFFFFFFFE00, 1024)
        expect_error(c, N.EINVAL, N.CMD_READ, 0xFFFFFFFFFFFFFFFF, 1)
        expect_error(c, N.EINVAL, N.CMD_READ, 0xFFFFFFFFFFFFFFFF,
                     0xFFFFFFFF)
    both_modes(check)


def test_read_zero_length():
    """READ of length 0 -> EINVAL"""
    def check(c):
        expect_error(c, N.EINVAL, N.CMD_READ, 0, 0)
    both_modes(check)


def test_read_too_large():
    """READ longer than 32 MiB -> EINVAL at once (no allocation of the
    length, no waiting)"""
    def check(c):
        t0 = time.monotonic()
        for ln in (N.MAX_REQUEST_SIZE + 1, 0xFFFFFFFF):
            expect_error(c, N.EINVAL, N.CMD_READ, 0, ln)
        assert time.monotonic() - t0 < 3
    both_modes(check)


# ---- WRITE on a read-only export ----

def test_write_readonly():
    """WRITE to a read-only export -> EPERM, its payload consumed (the next
    request parses correctly), data unchanged"""
    def check(c):
        assert c.export_flags & N.TFLAG_READ_ONLY
        payload = b"\xAA" * 4096
        # Make the payload look like a READ request header: if the server
        # does not consume it, it would parse it as one.
        fake = struct.pack(">IHHQQI", N.REQUEST_MAGIC, 0, N.CMD_READ, 999,
                           0, 512)
        payload = fake + payload[len(fake):]
        expect_error(c, N.EPERM, N.CMD_WRITE, 0, len(payload), 0, payload)
        r = c.read(0, 4096)
        assert r.error == 0 and r.data == N.image_bytes(IMG, 0, 4096)
        expect_error(c, N.EPERM, N.CMD_WRITE, 0, 1, N.CMD_FLAG_FUA
                     if c.export_flags & N.TFLAG_SEND_FUA else 0, b"x")
    both_modes(check)


def test_write_too_large():
    """WRITE longer than 32 MiB -> EINVAL (or close), payload discarded, not
    buffered (front-end peak RSS does not grow by the payload)"""
    fe = [p for p, comm in N.children(SRV.pid) if comm == N.FRONTEND_COMM]
    hwm0 = N.rss_kib(fe[0], "VmHWM") if fe else 0
    c, _ = open_conn(True)
    with c:
        ln = N.MAX_REQUEST_SIZE + 4096
        cookie = c.request(N.CMD_WRITE, 0, ln)
        answered = None
        try:
            answered = c.read_reply(2)
        except Timeout:
            pass                    # the server may drain first: fine
        except Closed:
            return                  # closing is an acceptable answer
        # EINVAL (too large); EPERM is also defensible on a read-only export.
        if answered is not None:
            assert answered.cookie == cookie and \
                answered.error in (N.EINVAL, N.EPERM), answered
        # Now send the payload; the server must skip it, not treat it as
        # requests, and then serve the next request.
        try:
            chunk = b"\0" * (1 << 20)
            for i in range(0, ln, len(chunk)):
                c.send(chunk[:min(len(chunk), ln - i)])
        except Closed:
            return
        if answered is None:
            try:
                answered = c.read_reply()
            except Closed:
                return
            assert answered.cookie == cookie and \
                answered.error in (N.EINVAL, N.EPERM), answered
        still_serves(c)
    if fe:
        hwm1 = N.rss_kib(fe[0], "VmHWM")
        assert hwm1 - hwm0 < 16 * 1024, \
            "front-end peak RSS grew %d KiB: oversized write buffered" % (
                hwm1 - hwm0)


def test_write_too_large_header_only():
    """WRITE header of length 0xffffffff then silence: the server neither
    hangs other clients nor allocates 4 GiB"""
    before = N.tree_rss_kib(SRV.pid)
    c, _ = open_conn(True)
    with c:
        c.request(N.CMD_WRITE, 0, 0xFFFFFFFF)
        try:
            r = c.read_reply(1)
            assert r.error in (N.EINVAL, N.EPERM), r
        except (Timeout, Closed):
            pass
        server_alive_and_serving()
    after = N.tree_rss_kib(SRV.pid)
    assert after - before < 64 * 1024, "RSS grew %d KiB" % (after - before)


# ---- commands and flags ----

def test_unknown_command():
    """unknown command types (42, TRIM and WRITE_ZEROES when not
    advertised, 0xffff) -> EINVAL"""
    def check(c):
        expect_error(c, N.EINVAL, 42, 0, 512)
        expect_error(c, N.EINVAL, 0xFFFF, 0, 0)
        if not c.export_flags & N.TFLAG_SEND_TRIM:
            # EPERM is what the spec suggests for trim on read-only.
            r = c.command(N.CMD_TRIM, 0, 512)
            assert r.error in (N.EINVAL, N.EPERM), r
            still_serves(c)
        if not c.export_flags & N.TFLAG_SEND_WRITE_ZEROES:
            r = c.command(N.CMD_WRITE_ZEROES, 0, 512)
            assert r.error in (N.EINVAL, N.EPERM), r
            still_serves(c)
    both_modes(check)


def test_read_unknown_flags():
    """unknown command flag bits on READ -> EINVAL"""
    def check(c):
        for fl in (1 << 15, 1 << 5, 0xFFE0):
            expect_error(c, N.EINVAL, N.CMD_READ, 0, 512, fl)
    both_modes(check)


def test_read_inapplicable_flags():
    """flags not documented for READ (NO_HOLE, REQ_ONE, FAST_ZERO) -> EINVAL;
    FUA only if SEND_FUA is not advertised; DF only without SEND_DF"""
    def check(c):
        for fl in (N.CMD_FLAG_NO_HOLE, N.CMD_FLAG_REQ_ONE,
                   N.CMD_FLAG_FAST_ZERO):
            expect_error(c, N.EINVAL, N.CMD_READ, 0, 512, fl)
        if c.export_flags & N.TFLAG_SEND_FUA:
            # Spec: with SEND_FUA the server MUST accept FUA on any command.
            r = c.read(0, 512, N.CMD_FLAG_FUA)
            assert r.error == 0, r
        else:
            expect_error(c, N.EINVAL, N.CMD_READ, 0, 512, N.CMD_FLAG_FUA)
        if c.export_flags & N.TFLAG_SEND_DF:
            assert c.structured, "SEND_DF without structured replies"
            r = c.read(0, 4096, N.CMD_FLAG_DF)
            assert r.error == 0 and len(r.content) == 1, r
        else:
            expect_error(c, N.EINVAL, N.CMD_READ, 0, 512, N.CMD_FLAG_DF)
    both_modes(check)


def test_flush_readonly():
    """FLUSH on a read-only export: not advertised -> EINVAL"""
    def check(c):
        assert not c.export_flags & N.TFLAG_SEND_FLUSH, \
            "read-only export advertises FLUSH"
        expect_error(c, N.EINVAL, N.CMD_FLUSH, 0, 0)
    both_modes(check)


def test_cache():
    """CACHE in range -> 0; past the end -> EINVAL"""
    def check(c):
        r = c.command(N.CMD_CACHE, 0, 65536)
        assert r.error == 0, r
        r = c.command(N.CMD_CACHE, IMG_SIZE - 512, 512)
        assert r.error == 0, r
        expect_error(c, N.EINVAL, N.CMD_CACHE, IMG_SIZE - 512, 1024)
        expect_error(c, N.EINVAL, N.CMD_CACHE, 0xFFFFFFFFFFFFFF00, 512)
    both_modes(check)


# ---- BLOCK_STATUS ----

def test_block_status_without_context():
    """BLOCK_STATUS without a negotiated meta context -> EINVAL"""
    def check(c):
        expect_error(c, N.EINVAL, N.CMD_BLOCK_STATUS, 0, 4096)
    both_modes(check)


def test_block_status_out_of_range():
    """nbdkit BLOCK_STATUS length overflow class: offset+length past the end
    (length 0xffffffff at size-1, length beyond the remaining size,
    offset+length wrapping 2^64) -> EINVAL"""
    c, cid = open_conn(True, meta=True)
    with c:
        expect_error(c, N.EINVAL, N.CMD_BLOCK_STATUS, IMG_SIZE - 1,
                     0xFFFFFFFF)
        expect_error(c, N.EINVAL, N.CMD_BLOCK_STATUS, IMG_SIZE - 4096, 8192)
        expect_error(c, N.EINVAL, N.CMD_BLOCK_STATUS, IMG_SIZE, 1)
        expect_error(c, N.EINVAL, N.CMD_BLOCK_STATUS, 0xFFFFFFFFFFFFF000,
                     0x2000)
        expect_error(c, N.EINVAL, N.CMD_BLOCK_STATUS, 0, 0)
        expect_error(c, N.EINVAL, N.CMD_BLOCK_STATUS, 0, 4096,
                     N.CMD_FLAG_DF)


def check_extents(r, cid, offset, length, req_one=False):
    """Spec: exactly one BLOCK_STATUS chunk per context, nonzero extent
    lengths, sum <= request length (so never past the end)."""
    assert r.error == 0, r
    assert list(r.extents) == [cid], "contexts %r, want [%d]" % (
        list(r.extents), cid)
    ext = r.extents[cid]
    assert ext, "no extents"
    assert all(ln > 0 for ln, _ in ext), "zero-length extent %r" % ext
    total = sum(ln for ln, _ in ext)
    assert total <= length, "extents sum %d > request %d" % (total, length)
    assert offset + total <= IMG_SIZE, "extents run past the end"
    if req_one:
        assert len(ext) == 1, "REQ_ONE but %d extents" % len(ext)


def test_block_status_valid():
    """BLOCK_STATUS in range -> one base:allocation chunk whose extents sum
    to no more than the request and never past the end"""
    c, cid = open_conn(True, meta=True)
    with c:
        for off, ln in ((0, IMG_SIZE), (0, 4096), (4096, 100),
                        (IMG_SIZE - 1, 1), (IMG_SIZE - 512, 512),
                        (1, IMG_SIZE - 1)):
            r = c.command(N.CMD_BLOCK_STATUS, off, ln)
            check_extents(r, cid, off, ln)
        r = c.command(N.CMD_BLOCK_STATUS, 0, IMG_SIZE, N.CMD_FLAG_REQ_ONE)
        check_extents(r, cid, 0, IMG_SIZE, req_one=True)
        still_serves(c)


def test_block_status_large_length():
    """BLOCK_STATUS with a length over 32 MiB but inside the export is not a
    data transfer: it must not be answered with extents past the end.
    (On this 4 MiB image any such length is out of range -> EINVAL.)"""
    c, cid = open_conn(True, meta=True)
    with c:
        expect_error(c, N.EINVAL, N.CMD_BLOCK_STATUS, 0, 0x80000000)


# ---- framing ----

def test_bad_request_magic():
    """bad request magic -> connection closed, no reply"""
    for structured in (False, True):
        c, _ = open_conn(structured)
        with c:
            c.request(N.CMD_READ, 0, 512, magic=0x12345678)
            got = c.assert_closed(3)
            assert not got, "reply to a bad magic: %r" % got[:40]
    server_alive_and_serving()


def test_disc():
    """DISC -> no reply, connection closed cleanly; requests in flight
    before it are answered first"""
    for structured in (False, True):
        c, _ = open_conn(structured)
        with c:
            cookie = c.request(N.CMD_READ, 0, 4096)
            disc = c.request(N.CMD_DISC)
            del c.pending[disc]                 # DISC has no reply
            r = c.read_reply()
            assert r.cookie == cookie and r.error == 0, r
            got = c.assert_closed(3)
            assert not got, "bytes after DISC: %r" % got[:40]
    server_alive_and_serving()


def test_pipelined_requests():
    """64 pipelined reads are all answered with the right data (cookies
    matched, no reply mixed up)"""
    def check(c):
        want = {}
        for i in range(64):
            off = (i * 65536 + i) % (IMG_SIZE - 65536)
            want[c.request(N.CMD_READ, off, 4096 + i)] = (off, 4096 + i)
        for _ in range(64):
            r = c.read_reply()
            off, ln = want.pop(r.cookie)
            assert r.error == 0, r
            r.assemble(off, ln)
            assert r.data == N.image_bytes(IMG, off, ln), (off, ln)
    both_modes(check)


def test_stalled_request_does_not_block_others():
    """a client that sends half a request header and waits does not block
    another client; it is served once the header completes"""
    a, _ = open_conn(True)
    b, _ = open_conn(False)
    with a, b:
        hdr = struct.pack(">IHHQQI", N.REQUEST_MAGIC, 0, N.CMD_READ, 77,
                          8192, 4096)
        a.send(hdr[:14])
        time.sleep(0.5)
        t0 = time.monotonic()
        r = b.read(0, 1 << 20)
        assert r.error == 0 and r.data == N.image_bytes(IMG, 0, 1 << 20)
        assert time.monotonic() - t0 < 3, "other client was slowed down"
        a.pending[77] = (N.CMD_READ, 4096)   # sent by hand above
        a.send(hdr[14:])
        r = a.read_reply()
        r.assemble(8192, 4096)
        assert r.cookie == 77 and r.error == 0, r
        assert r.data == N.image_bytes(IMG, 8192, 4096)


def test_stalled_write_payload_does_not_block_others():
    """a client that sends a WRITE header and half its payload, then waits,
    does not block another client"""
    a, _ = open_conn(True)
    b, _ = open_conn(True)
    with a, b:
        a.request(N.CMD_WRITE, 0, 65536, payload=b"\0" * 1000)
        time.sleep(0.3)
        r = b.read(4096, 65536)
        assert r.error == 0 and r.data == N.image_bytes(IMG, 4096, 65536)


def test_client_not_reading_replies():
    """a client that floods reads and never reads the replies does not block
    another client (per-client queue bounds)"""
    before = N.tree_rss_kib(SRV.pid)
    a, _ = open_conn(True)
    b, _ = open_conn(True)
    with a, b:
        a.timeout = 0.5
        a.sock.settimeout(0.5)
        try:
            for i in range(1000):       # 1000 x 1 MiB of replies, unread
                a.request(N.CMD_READ, 0, 1 << 20)
        except (Timeout, Closed):
            pass                        # the server stopped reading: good
        time.sleep(1)
        t0 = time.monotonic()
        r = b.read(0, 65536)
        assert r.error == 0 and r.data == N.image_bytes(IMG, 0, 65536)
        assert time.monotonic() - t0 < 3, "other client blocked"
        grown = N.tree_rss_kib(SRV.pid) - before
        assert grown < 300 * 1024, \
            "server RSS grew %d MiB for one unread client" % (grown // 1024)


def test_handshake_stall_and_nbdcopy():
    """slowloris: clients that stall mid-handshake while another copies the
    whole image with nbdcopy (md5 equal); with --handshake-timeout 2 the
    stalled ones are closed within ~3 s, a finished handshake is not"""
    big = os.path.join(TMP, "big.img")
    N.make_image(big, BIG_IMG_SIZE, seed=7)
    srv = N.Server(["-r", "--handshake-timeout", "2", "file://" + big],
                   TMP, "hs")
    srv.start()
    try:
        stalled = srv.connect()
        stalled.read_greeting()             # then nothing at all
        stalled2 = srv.connect()
        stalled2.start()                    # flags, one option, then nothing
        stalled2.option(N.OPT_LIST)
        stalled3 = srv.connect()
        stalled3.start()                    # half an option header
        stalled3.send(struct.pack(">Q", N.IHAVEOPT)[:6])
        t0 = time.monotonic()
        done = srv.connect()                # finished handshake: idle is ok
        done.handshake("", structured=True)
        out = os.path.join(TMP, "copy.img")
        p = subprocess.run(["nbdcopy", srv.uri(), out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=60)
        assert p.returncode == 0, "nbdcopy: %s" % p.stdout.decode()[-500:]
        with open(big, "rb") as f1, open(out, "rb") as f2:
            h1 = hashlib.md5(f1.read()).hexdigest()
            h2 = hashlib.md5(f2.read()).hexdigest()
        assert h1 == h2, "nbdcopy copy differs: %s != %s" % (h1, h2)
        for i, s in enumerate((stalled, stalled2, stalled3), 1):
            left = max(0.1, t0 + 3.5 - time.monotonic())
            try:
                s.wait_closed(left)
            except Timeout:
                raise AssertionError("stalled client %d still open %.1f s "
                                     "after connecting" %
                                     (i, time.monotonic() - t0))
            s.close()
        time.sleep(max(0, t0 + 3 - time.monotonic()))
        # The handshake timeout must not cut off a finished handshake; and
        # a read of exactly the 32 MiB maximum is served.
        r = done.read(4096, N.MAX_REQUEST_SIZE, timeout=30)
        assert r.error == 0, "idle client after the timeout: %r" % r
        assert r.data == N.image_bytes(big, 4096, N.MAX_REQUEST_SIZE), \
            "32 MiB read: bad data"
        done.close()
        assert srv.alive(), "server died"
    finally:
        srv.stop()
        for f in ("big.img", "copy.img"):
            try:
                os.unlink(os.path.join(TMP, f))
            except OSError:
                pass


CASES = [
    test_write_too_large,           # first: measures front-end peak RSS
    test_read_ok,
    test_read_whole_image,
    test_read_past_end,
    test_read_offset_overflow,
    test_read_zero_length,
    test_read_too_large,
    test_write_readonly,
    test_write_too_large_header_only,
    test_unknown_command,
    test_read_unknown_flags,
    test_read_inapplicable_flags,
    test_flush_readonly,
    test_cache,
    test_block_status_without_context,
    test_block_status_out_of_range,
    test_block_status_valid,
    test_block_status_large_length,
    test_bad_request_magic,
    test_disc,
    test_pipelined_requests,
    test_stalled_request_does_not_block_others,
    test_stalled_write_payload_does_not_block_others,
    test_client_not_reading_replies,
    test_handshake_stall_and_nbdcopy,
]


def main():
    return N.run_cases_against_server(CASES, IMG_SIZE, 400, globals())


if __name__ == "__main__":
    sys.exit(main())
