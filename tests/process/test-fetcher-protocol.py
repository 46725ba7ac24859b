#!/usr/bin/python3
# test-fetcher-protocol.py: the fetcher role on its own, spoken to directly.
#
# Runs "nbdcurld-fetcher --internal-role=fetcher" (next to $NBDCURLD, or
# $NBDCURLD_FETCHER) with a socketpair on fd 3 (the
# front-end's side is ours) and a configuration pipe on fd 4, exactly as
# the supervisor would, and checks:
#   - IPC_FETCHER_STARTED, then IPC_FETCHER_OPENED: size and flags; ENOENT and exit 1 for a missing
#     file;
#   - reads at odd offsets and lengths return exactly the file's bytes;
#     writes (with FUA) and flushes land;
#   - every malformed request (past the end, length 0, too long, unknown
#     type or flags, wrong or huge payload_len, write to a read-only
#     export, ...) ends the fetcher with a nonzero exit status, without a
#     reply and without a crash;
#   - with tests/lib/web-server.py: http exports open, serve ranges, and turn
#     a misbehaving web server into EIO or a refused open.
# Output is TAP; the exit status is 0 only if every test passed.

import errno
import fcntl
import mmap
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
NBDCURLD = os.environ.get("NBDCURLD",
                          os.path.join(ROOT, "build", "src", "nbdcurld"))
# The fetcher's own executable, which the supervisor finds next to itself.
NBDCURLD = os.environ.get("NBDCURLD_FETCHER",
                          os.path.join(os.path.dirname(NBDCURLD), "nbdcurld-fetcher"))
WEB_SERVER = os.path.join(ROOT, "tests", "lib", "web-server.py")

# src/common/ipc-messages.h (the messages, their header, FETCHER_CAN_*,
# IPC_FLAG_FUA, MAX_OPEN_FAILURE_MESSAGE), fetcher-wire.h (the fetcher's
# configuration, FETCHER_READONLY and _VERBOSE), limits-readahead.h,
# limits-nbd.h (MAX_REQUEST: NBD_MAX_REQUEST_SIZE)
HEADER = struct.Struct("=HHIQQIIQ")     # struct ipc_header
assert HEADER.size == 40
# struct fetcher_config_wire: twelve numbers, allow_ports, the cache's
# three, nstrings.
FETCHER_WIRE = struct.Struct("=12I8H3II")
IPC_CONFIG_FETCHER = 3
IPC_CONFIG_END = 4
IPC_FETCHER_OPENED = 32
IPC_FETCHER_STARTED = 38
IPC_FETCHER_OPEN = 40
IPC_READ = 33
IPC_WRITE = 34
IPC_FLUSH = 35
IPC_REPLY = 36
IPC_FETCHER_STATS = 41
IPC_STAGE_WANTED = 42
FETCHER_CAN_STAGE = 8
FETCHER_STATS = struct.Struct("=7Q")
IPC_CACHE = 39
READAHEAD_MAX_BYTES = 16 * 1024 * 1024
FETCHER_CAN_WRITE, FETCHER_CAN_FLUSH, FETCHER_CAN_FUA = 1, 2, 4
FETCHER_READONLY, FETCHER_VERBOSE = 1, 2
IPC_FLAG_FUA = 1
MAX_REQUEST = 32 * 1024 * 1024
MAX_OPEN_FAILURE_MESSAGE = 384

TIMEOUT = 20                            # seconds for any one step


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def header(type_, flags=0, payload_len=0, id_=0, offset=0, length=0, error=0,
           area_offset=0):
    return HEADER.pack(type_, flags, payload_len, id_, offset, length, error,
                       area_offset)


DATA_AREA_SIZE = 64 * 1024 * 1024       # src/common/data-path.h
F_ADD_SEALS, F_SEAL_SEAL, F_SEAL_SHRINK, F_SEAL_GROW = 1033, 1, 2, 4


def fetcher_string_count():
    """How many strings a fetcher's configuration carries (config.h's
    FETCHER_NSTRINGS), read from the tables that make them: config.h's
    FETCHER_OWN_STRINGS rows and curl-keys.h's TEXT and LIST rows that
    are sent TO_FETCHER.  A wrong count is refused by the fetcher, so a
    change of layout that this misses fails the test loudly."""
    src = os.path.join(ROOT, "src", "common")
    with open(os.path.join(src, "config.h")) as f:
        config_h = f.read()
    own = config_h[config_h.index("#define FETCHER_OWN_STRINGS("):]
    own = own[:own.index("\n\n")]
    with open(os.path.join(src, "curl-keys.h")) as f:
        keys_h = f.read()
    table = keys_h[keys_h.index("#define CURL_KEYS("):]
    table = table[:table.index("\n\n")]
    rows = re.findall(r"\b(TEXT|LIST) \(([^()]*(?:\([^()]*\)[^()]*)*)\)", table)
    sent = [r for r in rows if re.search(r"\bTO_FETCHER\b", r[1])]
    return len(re.findall(r"^\s*STRING \(", own, re.M)) + len(sent)


FETCHER_NSTRINGS = fetcher_string_count()


def config_bytes(url, flags=0, connections=4, timeout=0, retries=0,
                 retry_delay_ms=0, readahead=0):
    # The URL and export name come first (config.h's FETCHER_OWN_STRINGS);
    # every other string is empty.  No CA certificates, the IP version
    # any, the oldest TLS libcurl's, http-version none; retries none
    # unless asked (the errors tested here come at once).
    strings = [url.encode(), b"test-export"] + [b""] * (FETCHER_NSTRINGS - 2)
    wire = FETCHER_WIRE.pack(flags, connections, 30, timeout, 0,
                             0,                 # CA certificates: none
                             0, 0, 0,           # IP version, TLS, HTTP version
                             retries, retry_delay_ms,
                             readahead,
                             *[0] * 8,          # allow_ports: none
                             0, 0, 0,           # the cache: none
                             len(strings))
    lengths = struct.pack("=%dI" % len(strings), *[len(s) for s in strings])
    payload = wire + lengths + b"".join(strings)
    return (header(IPC_CONFIG_FETCHER, payload_len=len(payload)) + payload
            + header(IPC_CONFIG_END))


class Fetcher:
    """One fetcher process and our end of its socket."""

    def __init__(self, url, flags=0, connections=4, go=True, **config):
        """go: send IPC_FETCHER_OPEN first, as the supervisor does before
        it hands the socket on; False leaves that to the test."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        cfg_r, cfg_w = os.pipe()
        self.log = tempfile.TemporaryFile()
        # Move the child's fds above 3 and 4 first, so the dup2s below
        # cannot overwrite one another; all are close-on-exec except the
        # dup2 targets.
        hi_sock = fcntl.fcntl(theirs.fileno(), fcntl.F_DUPFD_CLOEXEC, 10)
        hi_cfg = fcntl.fcntl(cfg_r, fcntl.F_DUPFD_CLOEXEC, 10)
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, self.log.fileno(), 2),
            (os.POSIX_SPAWN_DUP2, hi_sock, 3),
            (os.POSIX_SPAWN_DUP2, hi_cfg, 4),
        ]
        # The data area at fd 5, a sealed memfd as the supervisor makes it;
        # requests name places in it, and read data arrives there.
        area_fd = os.memfd_create("test-data-area", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        os.ftruncate(area_fd, DATA_AREA_SIZE)
        fcntl.fcntl(area_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
        self.area = mmap.mmap(area_fd, DATA_AREA_SIZE)
        hi_area = fcntl.fcntl(area_fd, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(area_fd)
        actions.append((os.POSIX_SPAWN_DUP2, hi_area, 5))
        self.next_area = 0
        self.pending = {}
        self.stats = None
        # A file: export's image comes opened at fd 7, as the supervisor
        # passes it (read-only unless the export is writable); fd 6, the
        # data pipe, is not given (no FETCHER_DATA_PIPE): data comes
        # through the area.
        hi_img = None
        path = url[len("file://"):] if url.startswith("file://") else None
        if path and os.path.exists(path):
            mode = os.O_RDONLY if flags & FETCHER_READONLY else os.O_RDWR
            img = os.open(path, mode | os.O_CLOEXEC)
            hi_img = fcntl.fcntl(img, fcntl.F_DUPFD_CLOEXEC, 10)
            os.close(img)
            actions.append((os.POSIX_SPAWN_DUP2, hi_img, 7))
        # The environment the supervisor gives a fetcher: nothing but the
        # sanitizer settings (a sanitizer build needs them in every process).
        env = {k: v for k, v in os.environ.items()
               if k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS")}
        self.pid = os.posix_spawn(NBDCURLD, [NBDCURLD, "--internal-role=fetcher"],
                                  env, file_actions=actions)
        for fd in (hi_sock, hi_cfg, cfg_r, hi_area):
            os.close(fd)
        if hi_img is not None:
            os.close(hi_img)
        theirs.close()
        os.write(cfg_w, config_bytes(url, flags, connections, **config))
        os.close(cfg_w)
        if go:
            ours.sendall(header(IPC_FETCHER_OPEN))
        self.sock = ours
        self.sock.settimeout(TIMEOUT)
        self.status = None

    def send(self, data):
        self.sock.sendall(data)

    def recv_exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                raise Failure("EOF after %d of %d bytes" % (len(buf), n))
            buf += chunk
        return bytes(buf)

    def recv_message(self):
        h = HEADER.unpack(self.recv_exact(HEADER.size))
        payload = self.recv_exact(h[2]) if h[2] else b""
        return h, payload

    def opened(self):
        """IPC_FETCHER_STARTED (all zero), then IPC_FETCHER_OPENED; a
        fetcher that fails before its sandbox sends only the latter.  A
        failed open's reason is kept in self.reason."""
        h, _ = self.recv_message()
        if h[0] == IPC_FETCHER_STARTED:
            check(h[1:] == (0,) * 7, "STARTED has every field 0: %r" % (h,))
            h, payload = self.recv_message()
        else:
            payload = b""
        (type_, flags, plen, _, size, _, error, _) = h
        check(type_ == IPC_FETCHER_OPENED, "then OPENED, not %d" % type_)
        check(plen == 0 or error != 0, "OPENED has no payload when it succeeds")
        check(plen <= MAX_OPEN_FAILURE_MESSAGE, "a reason of %d bytes" % plen)
        self.reason = payload.decode("ascii", "replace")
        return size, flags, error

    def area_place(self, length):
        """A place for length bytes in the data area, as the front-end
        would hand out (here: round robin, 64 KiB aligned)."""
        if self.next_area + length > DATA_AREA_SIZE:
            self.next_area = 0
        off = self.next_area
        self.next_area += (length + 65535) // 65536 * 65536
        return off

    def read_header(self, id_, offset, length):
        place = self.area_place(length)
        self.pending[id_] = (place, length)
        return header(IPC_READ, id_=id_, offset=offset, length=length, area_offset=place)

    def read(self, id_, offset, length):
        self.send(self.read_header(id_, offset, length))

    def write(self, id_, offset, data, flags=0):
        place = self.area_place(len(data))
        self.area[place:place + len(data)] = data
        self.send(header(IPC_WRITE, flags, 0, id_, offset, len(data), area_offset=place))

    def reply(self):
        """(id, error, data): a read's data is taken from the data area.
        The fetcher's figures (IPC_FETCHER_STATS) may come before it: the
        last are kept in self.stats (web bytes, transfers, retries,
        readahead hits and bytes, read cache hits and bytes).  So may a
        fetcher's asking for staging spans (IPC_STAGE_WANTED), counted in
        self.stage_wanted and never answered: a front-end need not lend."""
        (type_, flags, plen, id_, off, length, error, area_off), payload = self.recv_message()
        while type_ in (IPC_FETCHER_STATS, IPC_STAGE_WANTED):
            fields = (flags, id_, off, length, error, area_off)
            if type_ == IPC_STAGE_WANTED:
                check(plen == 0 and fields == (0,) * 6, "IPC_STAGE_WANTED with a field set")
                self.stage_wanted = getattr(self, "stage_wanted", 0) + 1
            else:
                check(plen == FETCHER_STATS.size and fields == (0,) * 6,
                      "a statistics message with only its payload")
                self.stats = FETCHER_STATS.unpack(payload)
            (type_, flags, plen, id_, off, length, error, area_off), payload = \
                self.recv_message()
        check(type_ == IPC_REPLY, "reply type %d" % type_)
        check(plen == 0 and area_off == 0, "a reply carries nothing but id and error")
        data = b""
        if id_ in self.pending:
            place, length = self.pending.pop(id_)
            if error == 0:
                data = self.area[place:place + length]
        return id_, error, data

    def wait(self):
        """Wait for the process; returns its exit status (or -signal)."""
        deadline = time.time() + TIMEOUT
        while self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid != 0:
                self.status = os.waitstatus_to_exitcode(status)
                break
            if time.time() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                raise Failure("the fetcher did not exit")
            time.sleep(0.02)
        return self.status

    def stderr(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.sock.close()
        if self.status is None:
            try:
                self.wait()
            except Failure:
                pass
        self.log.close()

    def expect_nothing_then_eof(self):
        """No reply may come: only EOF when the fetcher exits."""
        r, _, _ = select.select([self.sock], [], [], TIMEOUT)
        check(r, "neither a reply nor EOF")
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            data = b""          # it exited with our bytes unread: also EOF
        check(data == b"", "got %d bytes instead of EOF" % len(data))


# ---- fixtures ----

tmpdir = tempfile.mkdtemp(prefix="nbdcurld-fetcher-")
IMAGE_SIZE = 3 * 1024 * 1024 + 12345   # odd on purpose
image = os.path.join(tmpdir, "disk.img")
with open(image, "wb") as f:
    f.write(os.urandom(IMAGE_SIZE))
with open(image, "rb") as f:
    IMAGE = f.read()
URL = "file://" + image

ODD_READS = [(0, 1), (1, 511), (4095, 2), (12345, 65537), (IMAGE_SIZE - 1, 1),
             (IMAGE_SIZE - 100000, 100000), (777, 3 * 1024 * 1024)]


def check_opened(fx, size, flags):
    s, fl, err = fx.opened()
    check(err == 0, "OPENED error %d (%s)" % (err, fx.stderr()))
    check(s == size, "size %d, expected %d" % (s, size))
    check(fl == flags, "flags %d, expected %d" % (fl, flags))


def check_reads(fx, data, reads):
    # All sent in one go, the fetcher must take a batch.  From a thread,
    # as a front-end would (it never blocks): the fetcher stops reading
    # when its queue is full and blocks writing replies until we read.
    batch = b"".join(fx.read_header(1000 + i, off, ln)
                     for i, (off, ln) in enumerate(reads))
    sender = threading.Thread(target=fx.send, args=(batch,), daemon=True)
    sender.start()
    seen = set()
    for _ in reads:
        id_, err, payload = fx.reply()
        i = id_ - 1000
        check(0 <= i < len(reads) and i not in seen, "unexpected reply id %d" % id_)
        seen.add(i)
        off, ln = reads[i]
        check(err == 0, "read %d+%d: error %d" % (off, ln, err))
        check(payload == data[off:off + ln], "read %d+%d: wrong data" % (off, ln))
    sender.join(TIMEOUT)
    check(not sender.is_alive(), "the requests were not all taken")


# ---- file: tests ----

def t_opened_and_reads():
    with Fetcher(URL) as fx:
        check_opened(fx, IMAGE_SIZE, FETCHER_CAN_WRITE | FETCHER_CAN_FLUSH | FETCHER_CAN_FUA)
        check_reads(fx, IMAGE, ODD_READS)
        # Its figures came before the replies they count: every byte read.
        want = sum(length for _, length in ODD_READS)
        check(fx.stats[0] == want and fx.stats[1] == len(ODD_READS),
              "statistics: %r, expected %d bytes in %d reads" % (fx.stats, want, len(ODD_READS)))
        fx.sock.shutdown(socket.SHUT_WR)
        check(fx.wait() == 0, "exit status %s after EOF" % fx.status)


def t_write_lands():
    copy = os.path.join(tmpdir, "write.img")
    shutil.copyfile(image, copy)
    with Fetcher("file://" + copy) as fx:
        check_opened(fx, IMAGE_SIZE, 7)
        new = os.urandom(10001)
        off = 54321
        fx.write(7, off, new, IPC_FLAG_FUA)
        id_, err, payload = fx.reply()
        check((id_, err, payload) == (7, 0, b""), "write reply %r" % ((id_, err, payload),))
        fx.send(header(IPC_FLUSH, id_=8))
        check(fx.reply() == (8, 0, b""), "flush reply")
        expect = IMAGE[:off] + new + IMAGE[off + len(new):]
        check_reads(fx, expect, [(off - 1, len(new) + 2)])
        with open(copy, "rb") as f:
            check(f.read() == expect, "the file on disk does not hold the write")
        fx.sock.shutdown(socket.SHUT_WR)
        check(fx.wait() == 0, "exit status %s" % fx.status)


def t_readonly():
    with Fetcher(URL, flags=FETCHER_READONLY) as fx:
        check_opened(fx, IMAGE_SIZE, 0)
        check_reads(fx, IMAGE, [(3, 5)])
        fx.write(1, 0, b"x")
        fx.expect_nothing_then_eof()
        st = fx.wait()
        check(st > 0, "exit status %s after a write to a read-only export" % st)
    with open(image, "rb") as f:
        check(f.read() == IMAGE, "a read-only image changed")


def t_missing_file():
    """A file: fetcher started without the image's descriptor (the
    supervisor never does that) refuses to open, naming the export."""
    with Fetcher("file://" + os.path.join(tmpdir, "no-such.img")) as fx:
        size, flags, err = fx.opened()
        check(err == errno.EBADF, "OPENED error %d, expected EBADF" % err)
        check(size == 0 and flags == 0, "OPENED with an error has size and flags 0")
        check(fx.wait() == 1, "exit status %s" % fx.status)
        check("no-such.img" in fx.stderr(), "the log names the file")


def t_eof_mid_header():
    with Fetcher(URL) as fx:
        check_opened(fx, IMAGE_SIZE, 7)
        fx.send(header(IPC_READ, id_=1, offset=0, length=1)[:20])
        fx.sock.shutdown(socket.SHUT_WR)
        fx.expect_nothing_then_eof()
        st = fx.wait()
        check(st > 0, "exit status %s" % st)


BAD_REQUESTS = [
    ("read past the end", header(IPC_READ, id_=1, offset=IMAGE_SIZE - 10, length=11)),
    ("read at the end", header(IPC_READ, id_=1, offset=IMAGE_SIZE, length=1)),
    ("offset + length overflows", header(IPC_READ, id_=1, offset=2**64 - 1, length=2)),
    ("read of length 0", header(IPC_READ, id_=1, offset=0, length=0)),
    ("read longer than 32 MiB", header(IPC_READ, id_=1, offset=0, length=MAX_REQUEST + 1)),
    ("unknown type", header(99, id_=1, offset=0, length=1)),
    ("reply type sent to the fetcher", header(IPC_REPLY, id_=1)),
    ("config type after start", header(IPC_CONFIG_END)),
    ("READ with a payload", header(IPC_READ, payload_len=1, id_=1, offset=0, length=1) + b"x"),
    ("READ with a huge payload_len", header(IPC_READ, payload_len=0xFFFFFFFF, id_=1, length=1)),
    ("READ with unknown flags", header(IPC_READ, flags=2, id_=1, offset=0, length=1)),
    ("READ with FUA", header(IPC_READ, flags=IPC_FLAG_FUA, id_=1, offset=0, length=1)),
    ("READ with an error field", header(IPC_READ, id_=1, offset=0, length=1, error=5)),
    ("WRITE with a payload",
     header(IPC_WRITE, payload_len=10, id_=1, offset=0, length=10) + b"x" * 10),
    ("WRITE with an oversized payload_len",
     header(IPC_WRITE, payload_len=0xFFFFFFFF, id_=1, offset=0, length=0xFFFFFFFF)),
    ("WRITE of 64 MiB", header(IPC_WRITE, id_=1, offset=0, length=2 * MAX_REQUEST)),
    ("WRITE with unknown flags", header(IPC_WRITE, flags=8, id_=1, length=1)),
    ("WRITE past the end", header(IPC_WRITE, id_=1, offset=IMAGE_SIZE - 1, length=2)),
    ("FLUSH with a length", header(IPC_FLUSH, id_=1, length=1)),
    ("FLUSH with a payload", header(IPC_FLUSH, payload_len=1, id_=1) + b"x"),
    ("READ past the end of the data area",
     header(IPC_READ, id_=1, offset=0, length=11, area_offset=DATA_AREA_SIZE - 10)),
    ("data area offset overflows",
     header(IPC_READ, id_=1, offset=0, length=2, area_offset=2**64 - 1)),
    ("CACHE with a data area offset",
     header(IPC_CACHE, id_=1, offset=0, length=1, area_offset=65536)),
    ("CACHE past the end", header(IPC_CACHE, id_=1, offset=IMAGE_SIZE - 1, length=2)),
    ("CACHE of length 0", header(IPC_CACHE, id_=1, offset=0, length=0)),
    ("CACHE with FUA", header(IPC_CACHE, flags=IPC_FLAG_FUA, id_=1, offset=0, length=1)),
    ("CACHE longer than 32 MiB", header(IPC_CACHE, id_=1, offset=0, length=MAX_REQUEST + 1)),
    ("WRITE outside the data area",
     header(IPC_WRITE, id_=1, offset=0, length=1, area_offset=DATA_AREA_SIZE)),
]


def make_bad_request_test(name, data):
    def test():
        # A writable export, so that writes are refused for their fields
        # only, not because the export is read-only.
        copy = os.path.join(tmpdir, "bad.img")
        shutil.copyfile(image, copy)
        with Fetcher("file://" + copy) as fx:
            check_opened(fx, IMAGE_SIZE, 7)
            # A good read first: the process is serving.
            check_reads(fx, IMAGE, [(10, 10)])
            fx.send(data)
            fx.sock.shutdown(socket.SHUT_WR)
            fx.expect_nothing_then_eof()
            st = fx.wait()
            check(st != 0, "exit status 0: the bad request was accepted")
            check(st > 0, "killed by signal %d" % -st)
            check("protocol violation" in fx.stderr(),
                  "no warning logged: %r" % fx.stderr())
        with open(copy, "rb") as f:
            check(f.read() == IMAGE, "the image changed")
    test.__name__ = name
    return test


# ---- http: tests, with tests/lib/web-server.py ----

web = None
web_url = None


def start_web_server():
    global web, web_url
    web = subprocess.Popen([sys.executable, WEB_SERVER, "--log",
                            os.path.join(tmpdir, "web.log"), tmpdir],
                           stdout=subprocess.PIPE)
    web_url = "http://127.0.0.1:%d" % int(web.stdout.readline())


def http_open_ok(mode, connections=4, **config):
    """A read-only export: no write, flush or FUA; with a readahead store
    it may stage reads (FETCHER_CAN_STAGE)."""
    fx = Fetcher("%s/%s/disk.img" % (web_url, mode), connections=connections, **config)
    check_opened(fx, IMAGE_SIZE, FETCHER_CAN_STAGE if config.get("readahead") else 0)
    return fx


def make_http_good_test(mode, connections, readahead=0):
    def test():
        with http_open_ok(mode, connections, readahead=readahead) as fx:
            reads = ODD_READS + [(i * 65536 + 17, 65536) for i in range(40)]
            check_reads(fx, IMAGE, reads)
            # One at a time, in order: the store answers most.
            for off in range(0, IMAGE_SIZE, 100000):
                check_reads(fx, IMAGE, [(off, min(100000, IMAGE_SIZE - off))])
            fx.sock.shutdown(socket.SHUT_WR)
            check(fx.wait() == 0, "exit status %s" % fx.status)
    test.__name__ = "http %s: open and pipelined reads (%d connections%s)" % (
        mode, connections, ", readahead" if readahead else "")
    return test


def web_gets():
    with open(os.path.join(tmpdir, "web.log")) as f:
        return sum(1 for line in f if line.startswith("GET /good/disk.img range=bytes="))


def t_http_cache():
    """CACHE is answered once its range is stored; reads of it then send
    no request; a file: export answers CACHE at once."""
    with Fetcher(URL) as fx:
        check_opened(fx, IMAGE_SIZE, 7)
        fx.send(header(IPC_CACHE, id_=7, offset=0, length=IMAGE_SIZE))
        check(fx.reply()[:2] == (7, 0), "file: CACHE not answered with 0")
    with http_open_ok("good", 2, readahead=READAHEAD_MAX_BYTES) as fx:
        fx.send(header(IPC_CACHE, id_=7, offset=4096, length=1 << 20))
        check(fx.reply()[:2] == (7, 0), "http: CACHE not answered with 0")
        before = web_gets()
        check(before >= 1, "the CACHE sent no range request")
        # Backwards, so that no read looks sequential.
        reads = [(4096 + (1 << 20) - (i + 1) * 65536, 65536) for i in range(16)]
        for r in reads:
            check_reads(fx, IMAGE, [r])
        check(web_gets() == before, "reads of a cached range sent %d requests"
              % (web_gets() - before))
        fx.sock.shutdown(socket.SHUT_WR)
        check(fx.wait() == 0, "exit status %s" % fx.status)


def t_http_queue_full():
    # More requests than transfers plus the fetcher's queue (128): it must
    # stop reading, then go on as replies drain, and answer every one.
    with http_open_ok("good", 2) as fx:
        reads = [((i * 7919) % (IMAGE_SIZE - 4096), 4096) for i in range(200)]
        check_reads(fx, IMAGE, reads)
        fx.sock.shutdown(socket.SHUT_WR)
        check(fx.wait() == 0, "exit status %s" % fx.status)


def t_http_half_close():
    # shutdown(SHUT_WR) right after the requests: the replies still come.
    with http_open_ok("good", 3) as fx:
        reads = [(i * 100003, 50000) for i in range(20)]
        for i, (off, ln) in enumerate(reads):
            fx.read(i, off, ln)
        fx.sock.shutdown(socket.SHUT_WR)
        for _ in reads:
            id_, err, payload = fx.reply()
            off, ln = reads[id_]
            check(err == 0 and payload == IMAGE[off:off + ln], "read %d: wrong reply" % id_)
        check(fx.wait() == 0, "exit status %s" % fx.status)


def t_http_close_while_stalled():
    # Closing the socket entirely, with a read stuck on a stalled server:
    # the fetcher leaves at once instead of waiting for the transfer.
    with http_open_ok("stall", 1) as fx:
        fx.read(1, 0, 4096)
        time.sleep(0.3)
        fx.sock.close()
        start = time.time()
        check(fx.wait() == 0, "exit status %s" % fx.status)
        check(time.time() - start < 5, "took %.1f s to exit" % (time.time() - start))


def make_http_eio_test(mode, expect_log):
    def test():
        with http_open_ok(mode) as fx:
            fx.read(5, 1000, 100000)
            id_, err, payload = fx.reply()
            check((id_, err, payload) == (5, errno.EIO, b""),
                  "reply %r, expected EIO" % ((id_, err, len(payload)),))
            check(expect_log in fx.stderr(), "log lacks %r: %r" % (expect_log, fx.stderr()))
            fx.sock.shutdown(socket.SHUT_WR)
            check(fx.wait() == 0, "exit status %s" % fx.status)
    test.__name__ = "http %s: read fails with EIO" % mode
    return test


def make_http_refused_test(path, expect_errno, expect_log):
    def test():
        with Fetcher(web_url + path) as fx:
            size, flags, err = fx.opened()
            check(err == expect_errno, "OPENED error %d, expected %d" % (err, expect_errno))
            check(fx.wait() == 1, "exit status %s" % fx.status)
            check(expect_log in fx.reason, "the reason it gives lacks %r: %r"
                  % (expect_log, fx.reason))
            check("127.0.0.1" not in fx.reason or "redirect" in fx.reason,
                  "the reason repeats the export's URL: %r" % fx.reason)
    test.__name__ = "http %s: open refused (errno %d)" % (path, expect_errno)
    return test


def t_http_ignore_range_not_downloaded():
    # HEAD claims ranges, GET ignores them: the reply is cut off at once.
    with http_open_ok("ignore-range") as fx:
        fx.read(1, 0, 4096)
        check(fx.reply()[:2] == (1, errno.EIO), "expected EIO")
        fx.sock.shutdown(socket.SHUT_WR)
        fx.wait()
    # The server logs a response when it is over, which is when the
    # fetcher hung up.
    sent = []
    for _ in range(100):
        with open(os.path.join(tmpdir, "web.log")) as f:
            sent = [int(l.rsplit("body_bytes_sent=", 1)[1].split()[0])
                    for l in f if l.startswith("GET /ignore-range/")]
        if sent:
            break
        time.sleep(0.05)
    check(sent and max(sent) < IMAGE_SIZE // 2,
          "the server sent %s bytes of a %d byte object" % (sent, IMAGE_SIZE))


def web_requests_now():
    with open(os.path.join(tmpdir, "web.log")) as f:
        return len(f.readlines())


def t_spare_waits():
    """A fetcher not yet told to open (a spare) starts, enters its sandbox,
    says STARTED, and then sends nothing to the web server however long
    it waits; at end of file it exits 0, quietly."""
    before = web_requests_now()
    with Fetcher("%s/good/disk.img" % web_url, go=False) as fx:
        h, _ = fx.recv_message()
        check(h[0] == IPC_FETCHER_STARTED, "STARTED first, not %d" % h[0])
        r, _, _ = select.select([fx.sock], [], [], 1.0)
        check(not r, "a spare sent something before it was told to open")
        check(web_requests_now() == before, "a spare went to the web server")
        fx.sock.shutdown(socket.SHUT_WR)
        check(fx.wait() == 0, "exit status %s after EOF" % fx.status)
        check("error" not in fx.stderr().lower(), "it complained: %s" % fx.stderr())
    # Told later, it opens then.
    with Fetcher("%s/good/disk.img" % web_url, go=False) as fx:
        h, _ = fx.recv_message()
        check(h[0] == IPC_FETCHER_STARTED, "STARTED first, not %d" % h[0])
        time.sleep(0.3)
        fx.send(header(IPC_FETCHER_OPEN))
        h, _ = fx.recv_message()
        check(h[0] == IPC_FETCHER_OPENED and h[6] == 0 and h[4] == IMAGE_SIZE,
              "OPENED after the word: %r" % (h,))
        check_reads(fx, IMAGE, [(4097, 70000)])


def make_bad_open_test(name, data):
    """Anything but a whole IPC_FETCHER_OPEN first ends the fetcher with
    a nonzero status and no request to the web server."""
    def test():
        for url in ("%s/good/disk.img" % web_url, URL):
            before = web_requests_now()
            with Fetcher(url, go=False) as fx:
                fx.send(data)
                if len(data) < HEADER.size:
                    fx.sock.shutdown(socket.SHUT_WR)
                status = fx.wait()
                check(status not in (0, None), "%s: exit status %s" % (url[:4], status))
            check(web_requests_now() == before, "the web server was asked")
    test.__name__ = "the word to open: " + name
    return test


BAD_OPENS = [
    ("a READ instead", header(IPC_READ, id_=1, offset=0, length=512)),
    ("OPEN with a field set", header(IPC_FETCHER_OPEN, length=1)),
    ("OPEN with a payload", header(IPC_FETCHER_OPEN, payload_len=4) + b"abcd"),
    ("half an OPEN, then EOF", header(IPC_FETCHER_OPEN)[:20]),
]


def t_python_http_server_refused():
    # python3 -m http.server ignores Range and says nothing about it.
    port_sock = socket.socket()
    port_sock.bind(("127.0.0.1", 0))
    port = port_sock.getsockname()[1]
    port_sock.close()
    srv = subprocess.Popen([sys.executable, "-m", "http.server", "-b", "127.0.0.1",
                            str(port)], cwd=tmpdir, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        with Fetcher("http://127.0.0.1:%d/disk.img" % port) as fx:
            size, flags, err = fx.opened()
            check(err == errno.EIO, "OPENED error %d, expected EIO" % err)
            check(fx.wait() == 1, "exit status %s" % fx.status)
            check("does not support byte ranges" in fx.reason, "reason: %r" % fx.reason)
    finally:
        srv.kill()
        srv.wait()


# ---- main ----

def main():
    tests = [t_opened_and_reads, t_write_lands, t_readonly, t_missing_file,
             t_eof_mid_header]
    bad_tests = [make_bad_request_test(n, d) for n, d in BAD_REQUESTS]
    tests += bad_tests
    http_tests = [
        make_http_good_test("good", 4),
        make_http_good_test("good", 1),
        make_http_good_test("good", 4, READAHEAD_MAX_BYTES),
        make_http_good_test("good", 1, READAHEAD_MAX_BYTES),
        make_http_good_test("redirect", 2, READAHEAD_MAX_BYTES),
        t_http_cache,
        make_http_good_test("no-length", 4),
        make_http_good_test("head-403", 2),
        make_http_good_test("head-405", 2),
        make_http_good_test("redirect", 3),
        t_http_queue_full,
        t_http_half_close,
        t_http_close_while_stalled,
        make_http_eio_test("short-body", "of 100000 bytes"),
        make_http_eio_test("long-body", "more than the 100000 bytes"),
        make_http_eio_test("wrong-range", "does not match the requested 1000-100999"),
        make_http_eio_test("ignore-range", "ignored the Range header"),
        make_http_eio_test("changing", "changed"),
        t_http_ignore_range_not_downloaded,
        make_http_refused_test("/good/no-such.img", errno.ENOENT, "HTTP 404"),
        make_http_refused_test("/status-500/disk.img", errno.EIO, "HTTP 500"),
        make_http_refused_test("/redirect-file/disk.img", errno.EIO, "redirects may lead only"),
        t_python_http_server_refused,
        t_spare_waits,
    ] + [make_bad_open_test(n, d) for n, d in BAD_OPENS]
    have_web = os.path.exists(WEB_SERVER)
    tests += http_tests
    names = {t_opened_and_reads: "file: OPENED size and flags, odd reads batched",
             t_write_lands: "file: FUA write and flush land",
             t_readonly: "file: read-only export, write ends the fetcher",
             t_missing_file: "file: no image descriptor gives OPENED EBADF, exit 1",
             t_eof_mid_header: "EOF inside a request header ends with nonzero status",
             t_http_ignore_range_not_downloaded: "http ignore-range: body not downloaded",
             t_http_half_close: "http: replies still come after a half-close",
             t_http_close_while_stalled: "http: full close with a stalled read exits at once",
             t_http_queue_full: "http good: 200 reads at once (queue full, then drains)",
             t_python_http_server_refused: "http python http.server: open refused",
             t_http_cache: "CACHE: answered once stored, its reads send nothing",
             t_spare_waits: "spare: sandboxed, waits without a request, exits 0 at EOF, opens when told"}

    print("1..%d" % len(tests))
    if not os.access(NBDCURLD, os.X_OK):
        print("Bail out! no executable at %s (set NBDCURLD_FETCHER)" % NBDCURLD)
        return 1
    failed = 0
    try:
        for n, t in enumerate(tests, 1):
            name = names.get(t, t.__name__)
            if t in http_tests and not have_web:
                print("ok %d - %s # SKIP no tests/lib/web-server.py" % (n, name))
                continue
            if t in http_tests and web is None:
                start_web_server()
            if t in bad_tests:
                name = "bad request ends the fetcher: " + name
            try:
                t()
                print("ok %d - %s" % (n, name))
            except (Failure, OSError) as e:
                failed += 1
                print("not ok %d - %s" % (n, name))
                for line in str(e).splitlines():
                    print("# " + line)
            sys.stdout.flush()
    finally:
        if web is not None:
            web.kill()
            web.wait()
        shutil.rmtree(tmpdir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
