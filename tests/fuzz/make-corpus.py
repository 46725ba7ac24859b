#!/usr/bin/env python3
"""Write the seed corpora of tests/fuzz/corpus/NAME/: a few valid inputs
per harness, in the input format its opening comment describes, so that
fuzzing starts from the protocols' real paths.

    tests/fuzz/make-corpus.py [DIR]     (default: tests/fuzz/corpus)

Deterministic: running it again rewrites the same files.
"""

import os
import struct
import sys

# NBD (big-endian), from src/nbd-protocol.h.
IHAVEOPT = 0x49484156454F5054
REQUEST_MAGIC = 0x25609513
OPT = dict(EXPORT_NAME=1, ABORT=2, LIST=3, STARTTLS=5, INFO=6, GO=7,
           STRUCTURED_REPLY=8, LIST_META_CONTEXT=9, SET_META_CONTEXT=10)
CMD = dict(READ=0, WRITE=1, DISC=2, FLUSH=3, TRIM=4, CACHE=5, BLOCK_STATUS=7)
INFO_NAME, INFO_DESCRIPTION, INFO_BLOCK_SIZE = 1, 2, 3
FLAG_FUA, FLAG_DF, FLAG_REQ_ONE = 1, 4, 8

# Internal messages (native order), from src/common/ipc-messages.h.
IPC = dict(CONFIG_FRONTEND=1, CONFIG_EXPORT=2, CONFIG_FETCHER=3, CONFIG_END=4,
           URL_CHECKED=8, CONFIG_TLS=9, CONFIG_ACCESS=10, FETCHER_OPENED=32, READ=33,
           WRITE=34, FLUSH=35, REPLY=36, PIPE_DISCARD=37, CACHE=39, KEY_SIGN=48,
           KEY_PSK=50)


def option(code, data=b''):
    return struct.pack('>QII', IHAVEOPT, code, len(data)) + data


def info_go(code, name, infos=()):
    return option(code, struct.pack('>I', len(name)) + name +
                  struct.pack('>H', len(infos)) +
                  b''.join(struct.pack('>H', i) for i in infos))


def meta(code, name, queries):
    data = struct.pack('>I', len(name)) + name + struct.pack('>I', len(queries))
    for q in queries:
        data += struct.pack('>I', len(q)) + q
    return option(code, data)


def request(cmd, offset=0, count=0, flags=0, data=b''):
    return struct.pack('>IHHQQI', REQUEST_MAGIC, flags, CMD[cmd], 0, offset, count) + data


def ipc(type_, flags=0, payload=b'', id_=0, offset=0, length=0, error=0, area=0):
    return struct.pack('<HHIQQIIQ', type_, flags, len(payload), id_, offset, length,
                       error, area) + payload


CLIENT_FLAGS = struct.pack('>I', 3)     # fixed newstyle, no zeroes


def handshake():
    requests = (request('READ', 0, 512) + request('BLOCK_STATUS', 0, 4096) +
                request('CACHE', 4096, 512) + request('DISC'))
    yield 'list-meta-info-go', bytes([0x00, 0xff]) + CLIENT_FLAGS + b''.join([
        option(OPT['LIST']), option(OPT['STRUCTURED_REPLY']),
        meta(OPT['LIST_META_CONTEXT'], b'', [b'base:']),
        meta(OPT['SET_META_CONTEXT'], b'', [b'base:allocation']),
        info_go(OPT['INFO'], b'ro', [INFO_NAME, INFO_DESCRIPTION]),
        info_go(OPT['GO'], b'', [INFO_BLOCK_SIZE])]) + requests
    yield 'export-name-zeroes', bytes([0x00, 0x03]) + struct.pack('>I', 1) + \
        option(OPT['EXPORT_NAME'], b'ro') + request('READ', 512, 512)
    yield 'starttls-abort', bytes([0x00, 0xff]) + CLIENT_FLAGS + \
        option(OPT['STARTTLS']) + option(OPT['ABORT'])
    yield 'unknown-export-open-error', bytes([0x01, 0x40]) + CLIENT_FLAGS + \
        info_go(OPT['GO'], b'nosuch') + info_go(OPT['INFO'], b'') + \
        info_go(OPT['GO'], b'ro')
    yield 'writable-go', bytes([0x1c | 0x20, 0xff]) + CLIENT_FLAGS + \
        info_go(OPT['GO'], b'') + request('WRITE', 0, 512, FLAG_FUA, bytes(range(256)) * 2) + \
        request('FLUSH') + request('READ', 0, 512)
    # Plain newstyle (client flags 0): EXPORT_NAME alone is served; any
    # other option ends the connection.
    yield 'plain-newstyle-export-name', bytes([0x00, 0xff]) + struct.pack('>I', 0) + \
        option(OPT['EXPORT_NAME'], b'') + request('READ', 0, 512) + request('DISC')
    yield 'plain-newstyle-list', bytes([0x00, 0xff]) + struct.pack('>I', 2) + \
        option(OPT['LIST']) + option(OPT['EXPORT_NAME'], b'')
    yield 'long-name', bytes([0x00, 0xff]) + CLIENT_FLAGS + \
        info_go(OPT['INFO'], b'L' * 4096, [INFO_NAME, INFO_DESCRIPTION]) + \
        option(OPT['LIST'])


def transmission():
    # flags: structured, base:allocation; caps: all, with a pipe;
    # size 1 MiB; budget 4 chunks; no failures; pipe reads to 64 KiB.
    setup = bytes([0x03, 0x87, 3, 1, 0, 16, 0xff])
    yield 'structured', setup + b''.join([
        request('READ', 0, 4096), request('READ', 4096, 65536 * 2, FLAG_DF),
        request('WRITE', 8192, 1000, FLAG_FUA, b'w' * 1000), request('FLUSH'),
        request('CACHE', 0, 1), request('BLOCK_STATUS', 0, 1 << 20, FLAG_REQ_ONE),
        request('TRIM', 0, 512), request('READ', (1 << 20) - 1, 2), request('DISC')])
    yield 'simple-failing', bytes([0x00, 0x07, 3, 2, 200, 0, 0x10]) + b''.join([
        request('READ', 0, 512), request('WRITE', 0, 3, 0, b'abc'),
        request('WRITE', 1 << 20, 1, 0, b'x'), request('READ', 0, 0)])
    yield 'read-only', bytes([0x08, 0x87, 3, 3, 0, 64, 0x30]) + \
        request('WRITE', 0, 16, 0, b'r' * 16) + request('READ', 0, 16)


def fetcher_replies():
    setup = bytes([0x01, 0x87, 3, 2, 0, 16])
    ops = b''
    # client READ (type index 0), offset 0, count 4096; WRITE; FLUSH.
    ops += bytes([0, 0, 0]) + struct.pack('<QH', 0, 4095)
    ops += bytes([0, 2, 1]) + struct.pack('<QH', 512, 99)
    ops += bytes([0, 3, 0]) + struct.pack('<QH', 0, 0)
    ops += bytes([2, 0x20, 0x02])         # REPLY, PIPED, for a waiting id
    ops += bytes([3, 7, 0])                # proper answers
    ops += bytes([2, 3, 0x08 | 0x10]) + struct.pack('<H', 4096)   # PIPE_DISCARD
    ops += bytes([1, 40]) + ipc(IPC['REPLY'], id_=1 << 8)         # raw header
    yield 'mixed', setup + ops
    yield 'exit', setup + bytes([0, 0, 0]) + struct.pack('<QH', 0, 511) + bytes([4])
    # Staged reads: the read-only export (structured replies), a 1 MiB
    # export, a fetcher that may stage, the default client memory.
    stage_setup = bytes([0x09, 0x08, 3, 2, 0, 0])
    wanted = bytes([5, 0])
    # STAGED into the first span held: 64 KiB at the export's offset.
    def staged(offset, kind=0):
        return bytes([6, kind, 0]) + struct.pack('<QI', offset, 65535)
    def staged_read(at, count):                        # inside the span
        return bytes([7, 0]) + struct.pack('<IH', at, count - 1)
    def read(offset, count):
        return bytes([0, 0, 0]) + struct.pack('<QH', offset, count - 1)
    # Reads answered from the span; one past it gives it back; staged
    # again further on, read from, and given back again.
    yield 'staged', stage_setup + wanted + staged(0) + staged_read(4096, 4096) + \
        staged_read(0, 512) + read(512 << 10, 512) + bytes([3, 7, 0]) + \
        staged(512 << 10) + staged_read(100, 1000) + read(0, 4096) + \
        read((1 << 20) - 4096, 4096)
    # A read in flight at the fetcher, then a span staged twice: the
    # fetcher ends, the read gets EIO.
    yield 'staged-twice', stage_setup + wanted + read(8192, 4096) + staged(0) + \
        staged_read(0, 4096) + staged(4096, kind=1)


def fetcher_requests():
    yield 'read-write-flush', bytes([3, 7]) + \
        ipc(IPC['READ'], id_=1, offset=0, length=4096, area=0) + \
        ipc(IPC['WRITE'], flags=1, id_=2, offset=4096, length=512, area=65536) + \
        ipc(IPC['FLUSH'], id_=3)
    yield 'read-only-write', bytes([2, 0]) + ipc(IPC['READ'], id_=9, length=1) + \
        ipc(IPC['WRITE'], id_=10, length=1)
    yield 'cache', bytes([3, 7]) + ipc(IPC['CACHE'], id_=4, offset=4096, length=1 << 20) + \
        ipc(IPC['READ'], id_=5, offset=4096, length=4096, area=0)
    yield 'partial', bytes([4, 1]) + ipc(IPC['READ'], id_=1, length=1 << 20)[:30]


def config():
    exports = [(0, b'', b''), (1, b'ro', b'a read-only export')]
    msgs = ipc(IPC['CONFIG_FRONTEND'], payload=struct.pack(
        '<6I', 4, 30, len(exports), 1, 16 << 20, 256))
    for flags, name, desc in exports:
        msgs += ipc(IPC['CONFIG_EXPORT'], payload=struct.pack(
            '<4I', flags, len(name), len(desc), 0) + name + desc)
    yield 'frontend', b'\x00' + msgs + ipc(IPC['CONFIG_END'])
    # --allow rules (IPv4, IPv6, unix, a PSK user on export 1), then --tls.
    rules = ipc(IPC['CONFIG_ACCESS'], payload=struct.pack(
        '<4I', 0, 1, 8, 0) + bytes([10]) + bytes(15))
    rules += ipc(IPC['CONFIG_ACCESS'], payload=struct.pack(
        '<4I', 0, 2, 128, 0) + bytes(15) + b'\x01')
    rules += ipc(IPC['CONFIG_ACCESS'], payload=struct.pack('<4I', 1, 3, 0, 0) + bytes(16))
    rules += ipc(IPC['CONFIG_ACCESS'], payload=struct.pack(
        '<4I', 1, 4, 0, 5) + bytes(16) + b'alice')
    tls = [b'NORMAL', b'-----BEGIN CERTIFICATE-----\n', b'ca', b'']
    tls_msg = ipc(IPC['CONFIG_TLS'], payload=struct.pack(
        '<6I', 2, 7, *map(len, tls)) + b''.join(tls))
    yield 'frontend-tls', b'\x00' + msgs + rules + tls_msg + ipc(IPC['CONFIG_END'])
    # struct fetcher_config_wire: flags (3 | FETCHER_COOKIE_ENGINE, bit 17),
    # 16 connections, timeouts, no CA certificates, IPv4, TLS 1.2, HTTP
    # 1.1, 5 retries from 2 s, a 16 MiB readahead store, two ports.
    # Then the strings (src/common/config.h's order): the URL, export
    # name, password, cookie, proxy, proxy password, no_proxy, cookie file
    # (one Netscape-format line and one Set-Cookie line); then the keys
    # sent as given (curl-keys.h's order): header, resolve, ciphers, TLS
    # 1.3 ciphers, user, user agent, proxy user, Unix socket path.
    strings = [b'http://example.invalid/disk.img', b'export', b'secret', b'session=1',
               b'http://proxy.invalid:3128', b'proxy-secret', b'localhost,.internal',
               b'example.invalid\tFALSE\t/\tFALSE\t0\tsession\tabc\n'
               b'Set-Cookie: lang=en; domain=example.invalid\n',
               b'X-Token: abc\r\n', b'example.invalid:80:127.0.0.1\n', b'HIGH:!aNULL',
               b'TLS_AES_128_GCM_SHA256', b'user', b'nbdkit/1.32', b'alice', b'']
    fw = struct.pack('<12I', 3 | 1 << 17, 16, 30, 0, 60, 0, 4, 12, 2, 5, 2000, 16 << 20) + \
        struct.pack('<8H', 8080, 8443, 0, 0, 0, 0, 0, 0) + \
        struct.pack('<I', len(strings)) + struct.pack('<%dI' % len(strings), *map(len, strings))
    yield 'fetcher', b'\x01' + ipc(IPC['CONFIG_FETCHER'], payload=fw + b''.join(strings)) + \
        ipc(IPC['CONFIG_END'])


def url_answer():
    def answer(flags, kind, message, log_url, path):
        return ipc(IPC['URL_CHECKED'], payload=struct.pack(
            '<6I', flags, kind, len(message), len(log_url), len(path), 0) +
            message + log_url + path)
    yield 'http', answer(1, 0, b'', b'http://example.invalid/disk.img', b'')
    yield 'file', answer(3, 4, b'', b'file:///srv/disk.img', b'/srv/disk.img')
    yield 'refused', answer(0, 0, b'gopher is not served', b'gopher://x/', b'')


def wire():
    data = bytes(range(64))
    yield 'gets', struct.pack('<HB', len(data), 32) + data + \
        bytes(range(16)) + bytes([7, 8, 4, 9, 3, 200, 10, 60, 11, 12, 2, 1, 1, 15, 8]) + b'abcdefgh'
    yield 'string-nul', struct.pack('<HB', 8, 0) + b'ab\0cdefg' + bytes([9, 8, 16, 9, 2, 2])


def web_reply():
    # mode: kind (0 HEAD, 1 probe, 2 range) | 4 ETag pinned | 8 Last-Modified
    # pinned | 0x10 empty 200 | 0x20 one byte received; size choice (index 4:
    # 1 MiB); offset; length; ETag and date choices (0: "abc" / the first
    # date); the first section's length; the sections.
    date = b'Tue, 01 Dec 2026 08:00:00 GMT'

    def web(mode, first, second=b'', offset=4096, length=4095, size_choice=4):
        return bytes([mode, size_choice]) + struct.pack('<QIBBH', offset, length, 0, 0,
                                                        len(first)) + first + second

    def reply(status, headers, end=b'\r\n'):
        return end.join([b'HTTP/1.1 ' + status] + headers + [b'', b''])

    good = reply(b'206 Partial Content', [
        b'Content-Range: bytes 4096-8191/1048576', b'ETag: "abc"',
        b'Last-Modified: ' + date, b'Content-Length: 4096'])
    interim = reply(b'100 Continue', []) + reply(b'103 Early Hints', [b'Link: </x>'])
    yield 'range-crlf', web(2 | 4 | 8, good, good)
    yield 'range-lf', web(2 | 4 | 8, good.replace(b'\r\n', b'\n'), good)
    yield 'range-interim', web(2 | 4, interim + good, interim * 3 + good)
    yield 'range-mixed', web(2, good.replace(b'ETag: "abc"\r\n', b'ETag: "abc"\n'), good)
    yield 'range-200', web(2, reply(b'200 OK', [b'Content-Length: 1048576']), good)
    yield 'range-weak-star', web(2 | 4, reply(b'206 Partial Content', [
        b'content-range:  bytes 4096-8191/*', b'ETag: W/"abc"',
        b'Content-Encoding: identity']), reply(b'206 x', [
        b'Content-Range: bytes 4096-8191/1048576', b'Content-Encoding: gzip']))
    yield 'probe', web(1 | 0x20, reply(b'206 Partial Content', [
        b'Content-Range: bytes 0-0/1048576', b'ETag: "abc"', b'Last-Modified: ' + date,
        b'Accept-Ranges: bytes']), reply(b'416 Range Not Satisfiable',
                                        [b'Content-Range: bytes */0']))
    yield 'probe-empty-200', web(1 | 0x10, reply(b'200 OK', [b'Content-Length: 0']))
    yield 'head-redirect', web(0, reply(b'302 Found', [b'Location: /y', b'ETag: "old"']) +
                               reply(b'200 OK', [b'ETag: "abc"', b'Last-Modified: ' + date,
                                                 b'Accept-Ranges: none, bytes']))


def direct_reply():
    # configuration: bits 0-1 connections - 1, bits 2-3 pipe (2: 64 KiB,
    # reads to 16 KiB direct), 0x10 ETag pinned, 0x20 Last-Modified; the
    # reads (flags: 1 continues the one before, 2 waits for those before,
    # 4 short; offset / 16; length - 1); the reply plans (kind, flags,
    # parameter; kinds: 0-1 correct, 2 status, 3 Content-Range, 4
    # validator, 5 coding, 6 line ends, 7 interim, 8 truncated, 9 length,
    # 10 syntax, 11 raw, 12 close); raw header bytes; then the pacing
    # (control byte, segment lengths).
    def direct(conf, reads, plans=(), raw=b'', pace=b''):
        return bytes([conf, len(reads) - 1]) + b''.join(
            struct.pack('<BHH', f, off, length - 1) for f, off, length in reads) + \
            bytes([len(plans)]) + b''.join(bytes(pl) for pl in plans) + \
            struct.pack('<H', len(raw)) + raw + pace

    chain = [(2, 256, 4096)] + [(3, 0, 4096)] * 5
    yield 'keepalive-good', direct(0x38, chain, [
        (0, 0, 0), (0, 0x80, 0), (1, 0x10, 0), (0, 0x03, 0x71), (0, 0x24, 0x06), (1, 0x08 | 0x40, 0x20)],
        pace=bytes([0x03, 10, 50, 0x80, 0x81, 0x07, 1, 2, 3, 0x90]) * 8)
    yield 'coalesced-two-conns', direct(0x39, [(0, 64, 1000)] + [(1, 0, 1000)] * 7,
                                        pace=bytes([0x01, 0x85, 0x04, 0x20]) * 16)
    mixed = [(2 if i % 3 == 0 else 0, 97 * i + 3, 500 + 700 * i) for i in range(12)]
    yield 'damaged-mix', direct(0x3a, mixed, [
        (2, 0, 0), (3, 0, 0), (3, 1, 8), (4, 0, 1), (4, 0, 0), (5, 0, 0), (5, 0, 4),
        (9, 0, 0), (9, 0, 2), (9, 0, 4), (10, 0, 0), (10, 0, 7), (10, 40, 8), (10, 0, 9)],
        pace=bytes([0x07, 0x80, 0x40, 0x10, 0x02, 0x85, 0x85]) * 10)
    yield 'interim-line-ends', direct(0x39, [(2, 300 * i, 3000) for i in range(8)], [
        (7, 0, 2), (7, 0, 5), (7, 1, 0x31), (6, 0, 3), (6, 2, 0), (6, 1, 0x80),
        (0, 0x13, 0x70), (9, 0, 3)])
    yield 'tiny-segments-small-pipe', direct(0x30, [(2, 10 * i, 1000) for i in range(6)],
                                             pace=bytes([0x03, 0, 0, 0, 0]) * 400)
    header = (b'HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 4096-8191/1048576'
              b'\r\nETag: "v1"\r\nContent-Length: 4096\r\n\r\n')
    yield 'raw', direct(0x38, [(0, 256, 4096), (3, 0, 4096)],
                        [(11, len(header) % 4, len(header) // 4), (11, 0, 8)], header)
    yield 'closes-and-stalls', direct(0xf9, [(2, 1000 * i, 2000) for i in range(10)], [
        (8, 0, 100), (12, 0, 0), (8, 1, 128), (12, 1, 0), (0, 0x80, 0), (2, 0, 13),
        (0, 0x40, 0x41), (7, 1, 0)], pace=bytes([0x08, 0x90, 0x01, 0x85, 0x85, 0x0c, 0x40, 0x10]) * 20)


def keyholder():
    # setup: key (0 none, 1 ECDSA, 2 RSA, 3 Ed25519) | 4 no PSK file |
    # tokens << 3 (7: a full bucket); then operations (fuzz-keyholder.c).
    full = 7 << 3

    def sign_hash(algo, changes=0, data=b''):
        return bytes([0, algo, changes, len(data)]) + data

    def sign_eddsa(algo, hash_choice=0, damage=0, changes=0):
        return bytes([1, algo, changes, hash_choice, damage])

    def psk(choice, changes=0, name=b''):
        return bytes([2, choice]) + (bytes([len(name)]) + name if name else b'') + \
            bytes([changes])

    def raw(packet, nfds=0):
        return bytes([3]) + struct.pack('<H', len(packet)) + packet + bytes([nfds])

    def later(ticks):
        return bytes([5]) + struct.pack('<H', ticks)

    # Algorithm choices 0-10: TLS 1.3's schemes in fuzz-keyholder.c's order
    # (0 ECDSA P-256, 1 P-384, 3-5 RSA-PSS-RSAE, 6-8 RSA-PSS, 9 Ed25519).
    yield 'ecdsa-psk', bytes([1 | full]) + sign_hash(0, data=bytes(range(32))) + \
        sign_hash(1, data=bytes(48)) + psk(0) + psk(5) + psk(15, name=b'nobody') + \
        bytes([4]) + later(300)
    yield 'rsa-pss', bytes([2 | full]) + sign_hash(3, 2, bytes(range(32))) + \
        sign_hash(8, 0, bytes(range(64))) + sign_hash(0, 0, bytes(32))
    yield 'ed25519', bytes([3 | full]) + sign_eddsa(9) + sign_eddsa(9, 2) + \
        sign_eddsa(9, 0, 5) + sign_eddsa(10) + sign_eddsa(9, changes=2)
    yield 'rate-limit', bytes([1 | 1 << 3]) + sign_hash(0, data=bytes(32)) + \
        psk(1) + later(256) + psk(1) + sign_hash(0, data=bytes(32))
    yield 'raw-then-close', bytes([4 | full]) + \
        raw(ipc(IPC['KEY_PSK'], payload=b'alice', id_=7)) + \
        raw(ipc(IPC['KEY_SIGN'], flags=1, length=0, payload=bytes(32)), 1) + bytes([6])
    yield 'empty-packet', bytes([3 | full]) + raw(b'')


def forward_reader():
    # Records as fuzz-forward-reader.c reads them.
    def at(offset, length):
        return b'\x00' + struct.pack('<QI', offset, length)

    def after(distance, length):
        return b'\x01' + struct.pack('<iH', distance, length)

    def again(distance):
        return b'\x02' + struct.pack('<h', distance)

    yield 'sequential', at(0, 65536) + after(0, 65535) * 12
    yield 'overlap-gap', at(1 << 30, 19456) + (after(-1024, 19456) + after(4096, 20480)) * 8
    yield 'qcow2-start', at(0, 112) + at(196608, 8) + at(65536, 65536) + at(112, 8) + \
        at(262144, 65536) + after(0, 512) + after(-1, 513) * 10
    yield 'again', at(4096, 4096) + after(0, 4096) * 6 + again(-30000) + again(0) + after(0, 4096)
    yield 'interleaved', b''.join(at(i * 65536, 65536) + at((1 << 40) + i * 65536, 65536)
                                  for i in range(8))
    yield 'top', b'\x03' + struct.pack('<II', 65536, 4096) + after(0, 4096) * 6 + \
        b'\x03' + struct.pack('<II', 0, 1)


def read_cache():
    # Records as fuzz-read-cache.c reads them: op, connection, offset,
    # length, clock step.
    def rec(op, conn, offset, length, step=1):
        return struct.pack('<BBIIH', op, conn, offset, length, step)

    fill = b''.join(rec(1, 0, i * 4096, 16384) for i in range(0, 40, 4))
    reads = b''.join(rec(0, i % 3, i * 3000, 9000) for i in range(40))
    yield 'fill-read', b'\x00\x01' + fill + reads
    yield 'scan-claims', b'\x00\x00' + rec(3, 0, 0, 1) * 30 + rec(2, 1, 0, 8192)
    yield 'changed', b'\x00\x02' + fill + rec(4, 1, 0, 0) + rec(0, 0, 0, 4096) + \
        rec(1, 1, 0, 65536) + rec(0, 1, 0, 4096) + rec(6, 1, 0, 0) + rec(0, 2, 0, 4096)
    yield 'shares', b'\x00\x00' + rec(1, 0, 0, 16384) + \
        b''.join(rec(1, 1, i * 4096, 4096, 50) for i in range(40)) * 2 + rec(0, 0, 0, 16384)
    yield 'idle-stale', b'\x00\x03' + fill + rec(0, 0, 0, 4096, 65535) + \
        b''.join(rec(1, 2, i * 4096, 4096, 40000) for i in range(40))
    yield 'hostile', b'\x01\x03' + rec(7, 0, 4096, 0) + fill + reads + rec(3, 2, 0, 0)


HARNESSES = {
    'handshake': handshake, 'transmission': transmission,
    'fetcher-replies': fetcher_replies, 'fetcher-requests': fetcher_requests,
    'config': config, 'url-answer': url_answer, 'wire': wire,
    'web-reply': web_reply, 'direct-reply': direct_reply, 'keyholder': keyholder,
    'forward-reader': forward_reader, 'read-cache': read_cache,
}


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), 'corpus')
    for name, make in HARNESSES.items():
        d = os.path.join(top, name)
        os.makedirs(d, exist_ok=True)
        for seed, data in make():
            with open(os.path.join(d, seed), 'wb') as f:
                f.write(data)
    return 0


if __name__ == '__main__':
    sys.exit(main())
