"""nbdraw: a tiny raw NBD client for protocol tests.

It speaks the fixed newstyle handshake and the transmission phase byte by
byte, so a test can send exactly the malformed input it wants.  Every read
has a deadline: a test can fail, but it can never hang.

Also here: starting and stopping the server under test, looking at its
process tree in /proc, and a minimal TAP runner.

Reference: the NBD protocol specification (NetworkBlockDevice/nbd,
doc/proto.md).  Constants mirror src/common/nbd-protocol.h, limits-nbd.h
and src/frontend/limits-handshake.h.
"""

import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback

# Where the shared helpers are (this folder, tests/lib/) and the source
# tree, for the tests in the folders beside this one.
LIB = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(LIB))

# ---- Constants (doc/proto.md; src/common/nbd-protocol.h, limits-nbd.h;
# src/frontend/limits-handshake.h) ----

NBDMAGIC = 0x4E42444D41474943          # "NBDMAGIC"
IHAVEOPT = 0x49484156454F5054          # "IHAVEOPT"
REP_MAGIC = 0x0003E889045565A9

FLAG_FIXED_NEWSTYLE = 1 << 0
FLAG_NO_ZEROES = 1 << 1
FLAG_C_FIXED_NEWSTYLE = FLAG_FIXED_NEWSTYLE
FLAG_C_NO_ZEROES = FLAG_NO_ZEROES

OPT_EXPORT_NAME = 1
OPT_ABORT = 2
OPT_LIST = 3
OPT_STARTTLS = 5
OPT_INFO = 6
OPT_GO = 7
OPT_STRUCTURED_REPLY = 8
OPT_LIST_META_CONTEXT = 9
OPT_SET_META_CONTEXT = 10

REP_ACK = 1
REP_SERVER = 2
REP_INFO = 3
REP_META_CONTEXT = 4
REP_FLAG_ERROR = 1 << 31
REP_ERR_UNSUP = REP_FLAG_ERROR | 1
REP_ERR_POLICY = REP_FLAG_ERROR | 2
REP_ERR_INVALID = REP_FLAG_ERROR | 3
REP_ERR_PLATFORM = REP_FLAG_ERROR | 4
REP_ERR_TLS_REQD = REP_FLAG_ERROR | 5
REP_ERR_UNKNOWN = REP_FLAG_ERROR | 6
REP_ERR_SHUTDOWN = REP_FLAG_ERROR | 7
REP_ERR_BLOCK_SIZE_REQD = REP_FLAG_ERROR | 8
REP_ERR_TOO_BIG = REP_FLAG_ERROR | 9

INFO_EXPORT = 0
INFO_NAME = 1
INFO_DESCRIPTION = 2
INFO_BLOCK_SIZE = 3

TFLAG_HAS_FLAGS = 1 << 0
TFLAG_READ_ONLY = 1 << 1
TFLAG_SEND_FLUSH = 1 << 2
TFLAG_SEND_FUA = 1 << 3
TFLAG_SEND_TRIM = 1 << 5
TFLAG_SEND_WRITE_ZEROES = 1 << 6
TFLAG_SEND_DF = 1 << 7
TFLAG_CAN_MULTI_CONN = 1 << 8
TFLAG_SEND_CACHE = 1 << 10

REQUEST_MAGIC = 0x25609513
CMD_READ = 0
CMD_WRITE = 1
CMD_DISC = 2
CMD_FLUSH = 3
CMD_TRIM = 4
CMD_CACHE = 5
CMD_WRITE_ZEROES = 6
CMD_BLOCK_STATUS = 7

CMD_FLAG_FUA = 1 << 0
CMD_FLAG_NO_HOLE = 1 << 1
CMD_FLAG_DF = 1 << 2
CMD_FLAG_REQ_ONE = 1 << 3
CMD_FLAG_FAST_ZERO = 1 << 4

SIMPLE_REPLY_MAGIC = 0x67446698
STRUCTURED_REPLY_MAGIC = 0x668E33EF
REPLY_FLAG_DONE = 1 << 0
REPLY_TYPE_NONE = 0
REPLY_TYPE_OFFSET_DATA = 1
REPLY_TYPE_OFFSET_HOLE = 2
REPLY_TYPE_BLOCK_STATUS = 5
REPLY_TYPE_ERROR = (1 << 15) | 1
REPLY_TYPE_ERROR_OFFSET = (1 << 15) | 2

EPERM = 1
EIO = 5
ENOMEM = 12
EINVAL = 22
ENOSPC = 28
EOVERFLOW = 75
ENOTSUP = 95
ESHUTDOWN = 108

META_BASE_ALLOCATION = b"base:allocation"

MAX_REQUEST_SIZE = 32 * 1024 * 1024
MAX_STRING = 4096
MAX_OPTION_LENGTH = MAX_STRING + 4096
MAX_OPTIONS = 32

DEFAULT_TIMEOUT = 5.0

# By hand, the usual build directory of this tree (meson passes $NBDCURLD).
DEFAULT_NBDCURLD = os.path.join(ROOT, "build", "src", "nbdcurld")


class Closed(Exception):
    """The server closed (or reset) the connection."""


class Timeout(Exception):
    """Nothing arrived before the deadline."""


class ProtocolError(Exception):
    """The server sent something the protocol does not allow."""


def rep_name(rep):
    names = {REP_ACK: "ACK", REP_SERVER: "SERVER", REP_INFO: "INFO",
             REP_META_CONTEXT: "META_CONTEXT", REP_ERR_UNSUP: "ERR_UNSUP",
             REP_ERR_POLICY: "ERR_POLICY", REP_ERR_INVALID: "ERR_INVALID",
             REP_ERR_PLATFORM: "ERR_PLATFORM",
             REP_ERR_TLS_REQD: "ERR_TLS_REQD",
             REP_ERR_UNKNOWN: "ERR_UNKNOWN",
             REP_ERR_SHUTDOWN: "ERR_SHUTDOWN",
             REP_ERR_BLOCK_SIZE_REQD: "ERR_BLOCK_SIZE_REQD",
             REP_ERR_TOO_BIG: "ERR_TOO_BIG"}
    return names.get(rep, "0x%x" % rep)


class OptReply:
    """One option reply: option, reply type and payload."""

    def __init__(self, option, reply, data):
        self.option = option
        self.reply = reply
        self.data = data

    @property
    def is_error(self):
        return bool(self.reply & REP_FLAG_ERROR)

    def __repr__(self):
        return "OptReply(opt=%d, %s, %d bytes%s)" % (
            self.option, rep_name(self.reply), len(self.data),
            (": %r" % self.data[:80]) if self.is_error and self.data else "")


class Reply:
    """A complete reply to one request (simple, or all structured chunks).

    error: 0, or the first error number the server reported.
    data: for a successful read, the bytes read (holes as zeroes).
    chunks: [(flags, type, payload)] for structured replies.
    extents: {context id: [(length, flags)]} for block status.
    """

    def __init__(self, cookie, structured):
        self.cookie = cookie
        self.structured = structured
        self.error = 0
        self.message = b""
        self.data = None
        self.chunks = []
        self.extents = {}
        self.content = []           # [(offset, bytes)] of content chunks

    def assemble(self, offset, length):
        """For a successful structured read of [offset, +length): check the
        content chunks (inside the request, no overlap, whole range
        covered; doc/proto.md) and put the bytes in self.data."""
        if not self.structured or self.error:
            return
        buf = bytearray(length)
        seen = []
        for off, data in self.content:
            if off < offset or off + len(data) > offset + length:
                raise ProtocolError("content chunk [%d,+%d) outside the "
                                    "request [%d,+%d)" %
                                    (off, len(data), offset, length))
            for a, b in seen:
                if off < b and a < off + len(data):
                    raise ProtocolError("overlapping content chunks")
            seen.append((off, off + len(data)))
            buf[off - offset:off - offset + len(data)] = data
        covered = sum(b - a for a, b in seen)
        if covered != length:
            raise ProtocolError("read reply covers %d of %d bytes" %
                                (covered, length))
        self.data = bytes(buf)

    def __repr__(self):
        return "Reply(cookie=%d, %s, error=%d%s)" % (
            self.cookie, "structured" if self.structured else "simple",
            self.error, (" %r" % self.message) if self.message else "")


def pack_string(s):
    """32-bit length then the bytes (names, queries)."""
    if isinstance(s, str):
        s = s.encode()
    return struct.pack(">I", len(s)) + s


def info_payload(name, infos=(), name_len=None):
    """Payload of NBD_OPT_INFO / NBD_OPT_GO.  name_len overrides the name
    length field (to lie about it)."""
    if isinstance(name, str):
        name = name.encode()
    nl = len(name) if name_len is None else name_len
    return (struct.pack(">I", nl) + name + struct.pack(">H", len(infos)) +
            b"".join(struct.pack(">H", i) for i in infos))


def meta_payload(name, queries, count=None):
    """Payload of NBD_OPT_LIST/SET_META_CONTEXT.  count overrides the number
    of queries field."""
    n = len(queries) if count is None else count
    return (pack_string(name) + struct.pack(">I", n) +
            b"".join(pack_string(q) for q in queries))


class Conn:
    """One raw connection to the server."""

    def __init__(self, path, timeout=DEFAULT_TIMEOUT, rcvbuf=None):
        """path: a Unix socket's path, or (host, port) for TCP.  rcvbuf:
        SO_RCVBUF to ask for (small: replies back up in the server)."""
        self.timeout = timeout
        self.sock = socket.socket(
            socket.AF_INET if isinstance(path, tuple) else socket.AF_UNIX,
            socket.SOCK_STREAM)
        if rcvbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.structured = False
        self.no_zeroes = False
        self.pending = {}           # cookie -> (type, length)
        self.partial = {}           # cookie -> Reply under construction
        self.next_cookie = 1
        self.export_size = None
        self.export_flags = None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- bytes --

    def send(self, data):
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError) as e:
            raise Closed("send: %s" % e)
        except socket.timeout:
            raise Timeout("send blocked for %.1f s" % self.timeout)

    def recv_exact(self, n, timeout=None):
        """Read exactly n bytes or raise Closed / Timeout."""
        deadline = time.monotonic() + (self.timeout if timeout is None
                                       else timeout)
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout("got %d of %d bytes" % (len(buf), n))
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            except socket.timeout:
                raise Timeout("got %d of %d bytes" % (len(buf), n))
            except ConnectionResetError:
                raise Closed("reset after %d of %d bytes" % (len(buf), n))
            if not chunk:
                raise Closed("EOF after %d of %d bytes" % (len(buf), n))
            buf += chunk
        return bytes(buf)

    def wait_closed(self, timeout=None):
        """Wait until the server closes the connection.  Returns the bytes
        that arrived before the close; raises Timeout if it stays open."""
        deadline = time.monotonic() + (self.timeout if timeout is None
                                       else timeout)
        got = bytearray()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout("connection still open after %.1f s "
                              "(%d bytes received)" %
                              (self.timeout if timeout is None else timeout,
                               len(got)))
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                return bytes(got)
            if not chunk:
                return bytes(got)
            got += chunk

    def is_closed(self, timeout=None):
        try:
            self.wait_closed(timeout)
            return True
        except Timeout:
            return False

    def assert_closed(self, timeout=None, what="connection"):
        """Assert the server closes the connection within the timeout."""
        try:
            return self.wait_closed(timeout)
        except Timeout as e:
            raise AssertionError("%s not closed by the server: %s" % (what, e))

    # -- handshake --

    def read_greeting(self):
        data = self.recv_exact(18)
        magic, opt, flags = struct.unpack(">QQH", data)
        return magic, opt, flags

    def send_client_flags(self, flags=FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES):
        self.no_zeroes = bool(flags & FLAG_C_NO_ZEROES)
        self.send(struct.pack(">I", flags))

    def start(self, flags=FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES):
        """Greeting (checked) and client flags: ready for options."""
        magic, opt, hflags = self.read_greeting()
        if magic != NBDMAGIC or opt != IHAVEOPT:
            raise ProtocolError("bad greeting %x %x" % (magic, opt))
        self.send_client_flags(flags)
        return hflags

    def send_option(self, option, data=b"", length=None):
        """Send one option; length overrides the length field."""
        if isinstance(data, str):
            data = data.encode()
        ln = len(data) if length is None else length
        self.send(struct.pack(">QII", IHAVEOPT, option, ln) + data)

    def read_option_reply(self, timeout=None):
        hdr = self.recv_exact(20, timeout)
        magic, option, reply, length = struct.unpack(">QIII", hdr)
        if magic != REP_MAGIC:
            raise ProtocolError("bad option reply magic 0x%x" % magic)
        if length > 64 * 1024 * 1024:
            raise ProtocolError("option reply length %d" % length)
        data = self.recv_exact(length, timeout) if length else b""
        return OptReply(option, reply, data)

    def read_option_replies(self, option, timeout=None):
        """All replies to one option, up to and including the final one
        (ACK or an error)."""
        replies = []
        while True:
            r = self.read_option_reply(timeout)
            if r.option != option:
                raise ProtocolError("reply for option %d, expected %d" %
                                    (r.option, option))
            replies.append(r)
            if r.reply == REP_ACK or r.is_error:
                return replies
            if r.reply not in (REP_SERVER, REP_INFO, REP_META_CONTEXT):
                raise ProtocolError("unexpected reply %r" % r)
            if len(replies) > 1000:
                raise ProtocolError("too many replies")

    def option(self, option, data=b"", length=None, timeout=None):
        """Send one option and read all its replies."""
        self.send_option(option, data, length)
        return self.read_option_replies(option, timeout)

    def opt_list(self):
        """[(name, description)] from NBD_OPT_LIST; raises on error."""
        out = []
        replies = self.option(OPT_LIST)
        final = replies[-1]
        if final.reply != REP_ACK:
            raise ProtocolError("LIST failed: %r" % final)
        for r in replies[:-1]:
            if r.reply != REP_SERVER or len(r.data) < 4:
                raise ProtocolError("LIST: unexpected %r" % r)
            (nl,) = struct.unpack(">I", r.data[:4])
            if nl > len(r.data) - 4:
                raise ProtocolError("LIST: name length %d > reply" % nl)
            out.append((r.data[4:4 + nl], r.data[4 + nl:]))
        return out

    @staticmethod
    def parse_infos(replies):
        """{info type: payload} from REP_INFO replies."""
        infos = {}
        for r in replies:
            if r.reply == REP_INFO:
                if len(r.data) < 2:
                    raise ProtocolError("short INFO reply")
                (t,) = struct.unpack(">H", r.data[:2])
                infos[t] = r.data[2:]
        return infos

    def info_or_go(self, option, name="", infos=()):
        """Send INFO or GO; returns (final reply, {info type: payload}).
        On a successful GO, records export size and flags."""
        replies = self.option(option, info_payload(name, infos))
        final = replies[-1]
        inf = self.parse_infos(replies)
        if final.reply == REP_ACK:
            if INFO_EXPORT not in inf or len(inf[INFO_EXPORT]) != 10:
                raise ProtocolError("no valid NBD_INFO_EXPORT before ACK")
            size, flags = struct.unpack(">QH", inf[INFO_EXPORT])
            if option == OPT_GO:
                self.export_size, self.export_flags = size, flags
        return final, inf

    def go(self, name="", infos=()):
        """GO; raises unless ACK.  Returns (size, transmission flags)."""
        final, _ = self.info_or_go(OPT_GO, name, infos)
        if final.reply != REP_ACK:
            raise ProtocolError("GO failed: %r" % final)
        return self.export_size, self.export_flags

    def export_name(self, name=""):
        """EXPORT_NAME; returns (size, flags) or raises Closed."""
        if isinstance(name, str):
            name = name.encode()
        self.send_option(OPT_EXPORT_NAME, name)
        data = self.recv_exact(10)
        size, flags = struct.unpack(">QH", data)
        if not self.no_zeroes:
            self.recv_exact(124)
        self.export_size, self.export_flags = size, flags
        return size, flags

    def structured_reply(self):
        r = self.option(OPT_STRUCTURED_REPLY)
        if r[-1].reply != REP_ACK:
            raise ProtocolError("STRUCTURED_REPLY refused: %r" % r[-1])
        self.structured = True

    def meta_context(self, option, name="", queries=(META_BASE_ALLOCATION,)):
        """LIST or SET_META_CONTEXT; returns (final, [(id, name)])."""
        replies = self.option(option, meta_payload(name, list(queries)))
        out = []
        for r in replies[:-1]:
            if r.reply != REP_META_CONTEXT or len(r.data) < 4:
                raise ProtocolError("unexpected %r" % r)
            (cid,) = struct.unpack(">I", r.data[:4])
            out.append((cid, r.data[4:]))
        return replies[-1], out

    def handshake(self, name="", structured=True, meta=False):
        """Full handshake to transmission.  Returns the base:allocation
        context id when meta is set, else None."""
        self.start()
        cid = None
        if structured:
            self.structured_reply()
        if meta:
            final, ctx = self.meta_context(OPT_SET_META_CONTEXT, name)
            if final.reply != REP_ACK or len(ctx) != 1:
                raise ProtocolError("SET_META_CONTEXT: %r %r" % (final, ctx))
            cid = ctx[0][0]
        self.go(name)
        return cid

    # -- transmission --

    def request(self, cmd, offset=0, length=0, flags=0, payload=b"",
                cookie=None, magic=REQUEST_MAGIC):
        """Send one request (header plus payload); returns its cookie."""
        if cookie is None:
            cookie = self.next_cookie
            self.next_cookie += 1
        self.pending[cookie] = (cmd, length)
        self.send(struct.pack(">IHHQQI", magic, flags, cmd, cookie,
                              offset & 0xFFFFFFFFFFFFFFFF, length) + payload)
        return cookie

    def read_reply(self, timeout=None):
        """Read until one request's reply is complete; returns the Reply."""
        deadline = time.monotonic() + (self.timeout if timeout is None
                                       else timeout)

        def left():
            return max(0.0, deadline - time.monotonic())

        while True:
            (magic,) = struct.unpack(">I", self.recv_exact(4, left()))
            if magic == SIMPLE_REPLY_MAGIC:
                err, cookie = struct.unpack(">IQ", self.recv_exact(12, left()))
                if cookie not in self.pending:
                    raise ProtocolError("simple reply, unknown cookie %d" %
                                        cookie)
                cmd, length = self.pending.pop(cookie)
                r = Reply(cookie, False)
                r.error = err
                if cmd == CMD_READ and err == 0:
                    if self.structured:
                        raise ProtocolError("simple reply to READ after "
                                            "structured replies")
                    r.data = self.recv_exact(length, left())
                return r
            if magic != STRUCTURED_REPLY_MAGIC:
                raise ProtocolError("bad reply magic 0x%08x" % magic)
            if not self.structured:
                raise ProtocolError("structured reply not negotiated")
            flags, typ, cookie, length = struct.unpack(
                ">HHQI", self.recv_exact(16, left()))
            if cookie not in self.pending:
                raise ProtocolError("chunk for unknown cookie %d" % cookie)
            if length > MAX_REQUEST_SIZE + 4096:
                raise ProtocolError("chunk length %d" % length)
            payload = self.recv_exact(length, left()) if length else b""
            r = self.partial.setdefault(cookie, Reply(cookie, True))
            self._add_chunk(r, flags, typ, payload)
            if flags & REPLY_FLAG_DONE:
                del self.partial[cookie]
                self.pending.pop(cookie)
                return r

    def _add_chunk(self, r, flags, typ, payload):
        cmd, length = self.pending[r.cookie]
        r.chunks.append((flags, typ, payload))
        if typ & (1 << 15):
            if len(payload) < 6:
                raise ProtocolError("short error chunk")
            err, ml = struct.unpack(">IH", payload[:6])
            if ml > len(payload) - 6:
                raise ProtocolError("error message length %d > chunk" % ml)
            if err == 0:
                raise ProtocolError("error chunk with error 0")
            if not r.error:
                r.error = err
                r.message = payload[6:6 + ml]
        elif typ == REPLY_TYPE_OFFSET_DATA or typ == REPLY_TYPE_OFFSET_HOLE:
            if cmd != CMD_READ:
                raise ProtocolError("content chunk for command %d" % cmd)
            if typ == REPLY_TYPE_OFFSET_DATA:
                if len(payload) < 9:
                    raise ProtocolError("short OFFSET_DATA")
                (off,) = struct.unpack(">Q", payload[:8])
                data = payload[8:]
            else:
                if len(payload) != 12:
                    raise ProtocolError("OFFSET_HOLE length %d" % len(payload))
                off, n = struct.unpack(">QI", payload)
                if n == 0:
                    raise ProtocolError("empty OFFSET_HOLE")
                data = bytes(n)
            r.content.append((off, data))
        elif typ == REPLY_TYPE_BLOCK_STATUS:
            if cmd != CMD_BLOCK_STATUS:
                raise ProtocolError("block status chunk for command %d" % cmd)
            if len(payload) < 12 or (len(payload) - 4) % 8:
                raise ProtocolError("block status chunk length %d" %
                                    len(payload))
            (cid,) = struct.unpack(">I", payload[:4])
            ext = [struct.unpack(">II", payload[i:i + 8])
                   for i in range(4, len(payload), 8)]
            if cid in r.extents:
                raise ProtocolError("two block status chunks for context %d"
                                    % cid)
            r.extents[cid] = ext
        elif typ == REPLY_TYPE_NONE:
            if payload or not flags & REPLY_FLAG_DONE:
                raise ProtocolError("bad NONE chunk")
        else:
            raise ProtocolError("unknown chunk type %d" % typ)

    def command(self, cmd, offset=0, length=0, flags=0, payload=b"",
                timeout=None):
        """Send one request and wait for its reply.  For a read, reply.data
        is the data, checked against the request's bounds."""
        cookie = self.request(cmd, offset, length, flags, payload)
        r = self.read_reply(timeout)
        if r.cookie != cookie:
            raise ProtocolError("reply for cookie %d, expected %d" %
                                (r.cookie, cookie))
        if cmd == CMD_READ:
            r.assemble(offset, length)
        return r

    def read(self, offset, length, flags=0, timeout=None):
        return self.command(CMD_READ, offset, length, flags, timeout=timeout)


# ---- The server under test ----

def import_nbd():
    """libnbd's Python module, or a TAP skip (exit 77) without it."""
    try:
        import nbd
    except ImportError:
        print("1..0 # SKIP python3-libnbd (import nbd) not available")
        sys.exit(77)
    return nbd


def nbdcurld_path():
    return os.environ.get("NBDCURLD", DEFAULT_NBDCURLD)


def _pdeathsig():
    """In the child before exec: die if the test process dies, so a killed
    test never leaves a server behind."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)          # PR_SET_PDEATHSIG
    except Exception:
        pass


def free_tcp_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def read_roles():
    """{ROLE_X: {"name": ..., "comm": ..., "arg": ...}}: the rows of the
    server's one table of roles (src/common/roles.c), so that a test
    names each process as the server does."""
    path = os.path.join(ROOT, "src", "common", "roles.c")
    with open(path) as f:
        text = f.read()
    out = {}
    for m in re.finditer(r"\[(ROLE_[A-Z_]+)\] = \{(.*?)\n  \},", text, re.S):
        fields = dict(re.findall(r"\.(name|comm|arg) = \"?([^\",]*)\"?,", m.group(2)))
        out[m.group(1)] = fields
    assert len(out) >= 7 and all("comm" in r for r in out.values()), "roles.c: %r" % out
    return out


ROLES = read_roles()
FRONTEND_COMM = ROLES["ROLE_FRONTEND"]["comm"]
FETCHER_COMM = ROLES["ROLE_FETCHER"]["comm"]
LAUNCHER_COMM = ROLES["ROLE_LAUNCHER"]["comm"]
KEYHOLDER_COMM = ROLES["ROLE_KEYHOLDER"]["comm"]
# The file remover: a child nbdcurld started as root keeps for removing
# its socket at exit when --user may not (the tests' directories are
# root's own): one process more, idle, whatever the clients do.
REMOVER_COMM = ROLES["ROLE_REMOVER"]["comm"]


class Server:
    """nbdcurld -f ... -U SOCK, started in a private temporary directory.
    With tcp=True it listens on 127.0.0.1 and a free port instead, and
    sock is (host, port); nofile=N starts it under RLIMIT_NOFILE N (soft
    and hard, as after "ulimit -n N")."""

    def __init__(self, args, tmpdir, name="sock", tcp=False, nofile=None):
        self.log = os.path.join(tmpdir, name + ".log")
        if tcp:
            self.sock = ("127.0.0.1", free_tcp_port())
            listen = ["-i", self.sock[0], "-p", str(self.sock[1])]
        else:
            self.sock = os.path.join(tmpdir, name)
            listen = ["-U", self.sock]
        self.args = [nbdcurld_path(), "-f"] + listen + list(args)
        self.nofile = nofile
        self.proc = None

    def _preexec(self):
        _pdeathsig()
        if self.nofile is not None:
            import resource
            resource.setrlimit(resource.RLIMIT_NOFILE,
                               (self.nofile, self.nofile))

    def start(self, timeout=10.0):
        logf = open(self.log, "ab")
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL,
                                     stdout=logf, stderr=subprocess.STDOUT,
                                     preexec_fn=self._preexec)
        logf.close()
        deadline = time.monotonic() + timeout
        tcp = isinstance(self.sock, tuple)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited with status %d: %s" %
                                   (self.proc.returncode, self.log_text()))
            if tcp or os.path.exists(self.sock):
                s = socket.socket(socket.AF_INET if tcp else socket.AF_UNIX,
                                  socket.SOCK_STREAM)
                try:
                    s.connect(self.sock)
                    return self
                except OSError:
                    pass
                finally:
                    s.close()
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("server socket %s did not appear" % self.sock)

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        """Stop the server (SIGTERM, then SIGKILL) and its children."""
        if self.proc is None:
            return None
        kids = descendants(self.proc.pid) if self.alive() else []
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        deadline = time.monotonic() + 3
        for pid in kids:
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if pid_alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        return self.proc.returncode

    def log_text(self):
        try:
            with open(self.log, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def connect(self, timeout=DEFAULT_TIMEOUT, rcvbuf=None):
        return Conn(self.sock, timeout, rcvbuf)

    def uri(self, name=""):
        if isinstance(self.sock, tuple):
            return "nbd://%s:%d/%s" % (self.sock[0], self.sock[1], name)
        return "nbd+unix:///%s?socket=%s" % (name, self.sock)

    def frontend(self):
        """The front-end's pid (comm FRONTEND_COMM), or None."""
        fe = [p for p, comm in children(self.pid) if comm == FRONTEND_COMM]
        return fe[0] if len(fe) == 1 else None

    def processes(self):
        """Pids of the supervisor and every live process under it that
        serves (not the file remover, REMOVER_COMM)."""
        if not self.alive():
            return []
        return [p for p in tree_pids(self.pid)
                if (proc_stat(p) or ("",))[0] != REMOVER_COMM]


# ---- /proc ----

def proc_stat(pid):
    """(comm, state, ppid) of a process, or None if it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    lp, rp = s.index("("), s.rindex(")")
    rest = s[rp + 2:].split()
    return s[lp + 1:rp], rest[0], int(rest[1])


def pid_alive(pid):
    st = proc_stat(pid)
    return st is not None and st[1] != "Z"


def children(pid):
    """[(pid, comm)] of the live children of pid."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        st = proc_stat(int(d))
        if st and st[2] == pid and st[1] != "Z":
            out.append((int(d), st[0]))
    return sorted(out)


def descendants(pid):
    out = []
    todo = [pid]
    while todo:
        for c, _ in children(todo.pop()):
            out.append(c)
            todo.append(c)
    return out


def tree_pids(pid):
    """pid and its live descendants, from one pass over /proc (fast with
    hundreds of processes, unlike descendants())."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = proc_stat(int(d))
            if st and st[1] != "Z":
                kids.setdefault(st[2], []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def rss_kib(pid, field="VmRSS"):
    """VmRSS (or VmHWM, the peak) of a process in KiB, 0 if it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_kib(pid, field="VmRSS"):
    return sum(rss_kib(p, field) for p in [pid] + descendants(pid))


def pss_kib(pid):
    """Proportional set size of a process in KiB (shared pages divided
    among the processes that map them), 0 if it is gone."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def fd_count(pid):
    """Open file descriptors of a process (None if it is gone)."""
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return None


def cpu_seconds(pid):
    """User plus system CPU time a process has used, in seconds."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")


def time_factor():
    """How much slower than a plain build the server under test may be:
    $NBDCURLD_TEST_TIME_FACTOR, else 3 under a sanitizer (meson sets
    ASAN_OPTIONS then), else 1.  Latency limits are multiplied by it."""
    f = os.environ.get("NBDCURLD_TEST_TIME_FACTOR")
    if f:
        return float(f)
    return 3.0 if os.environ.get("ASAN_OPTIONS") else 1.0


def raise_nofile(want):
    """Let this test process open want descriptors (up to the hard limit)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE,
                           (want if hard == resource.RLIM_INFINITY
                            else min(want, hard), hard))


def sanitized():
    return bool(os.environ.get("ASAN_OPTIONS"))


def reset_close(sock):
    """Close a socket abruptly: SO_LINGER 0 makes the kernel send a TCP RST
    (a Unix socket's peer just sees the close, with unread data lost)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


def wait_until(cond, timeout, step=0.05):
    """Poll cond() until it is true or the timeout passes; returns its last
    value."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)


# ---- Test images ----

def make_tls_keys(pki, key_type=None):
    """tests/lib/make-tls-keys.sh [--key-type KEY_TYPE] PKI.  None when the
    keys are made; else the status the test ends with, its TAP line
    printed: 77 (a skip: certtool/psktool missing) or 1 (a failure, with
    the output)."""
    args = [os.path.join(LIB, "make-tls-keys.sh")]
    if key_type:
        args += ["--key-type", key_type]
    keys = subprocess.run(args + [pki], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if keys.returncode == 77:
        print("1..0 # SKIP certtool/psktool (gnutls-bin) not installed")
        return 77
    if keys.returncode != 0:
        print("1..1\nnot ok 1 - make-tls-keys.sh %s" % (key_type or ""))
        diag(keys.stdout.decode(errors="replace"))
        return 1
    return None


def make_image(path, size, seed=1):
    """A file of size bytes whose every 8-byte word encodes its offset, so a
    read at the wrong offset is always visible."""
    with open(path, "wb") as f:
        chunk = 1 << 20
        for base in range(0, size, chunk):
            n = min(chunk, size - base)
            words = (n + 7) // 8
            data = b"".join(struct.pack(">Q", (base + 8 * i) ^
                                        (seed * 0x9E3779B97F4A7C15 &
                                         0xFFFFFFFFFFFFFFFF))
                            for i in range(words))
            f.write(data[:n])


def image_bytes(path, offset, length):
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(length)


# ---- TAP ----

class Tap:
    """Run test functions and print TAP.  A case passes when it returns;
    any exception fails it.  check_alive, when given, runs after each case:
    a server that died fails that case."""

    def __init__(self, cases, check_alive=None):
        self.cases = cases
        self.check_alive = check_alive
        self.failed = 0

    @staticmethod
    def describe(fn):
        # The docstring's first paragraph, on one line ('#' would start a
        # TAP directive).
        para = (fn.__doc__ or "").strip().split("\n\n")[0]
        doc = " ".join(para.split()).replace("#", "no.")
        name = fn.__name__.replace("test_", "", 1)
        return "%s: %s" % (name, doc) if doc else name

    def run(self):
        print("1..%d" % len(self.cases), flush=True)
        for n, fn in enumerate(self.cases, 1):
            desc = self.describe(fn)
            err = None
            t0 = time.monotonic()
            try:
                fn()
            except Exception:
                err = traceback.format_exc()
            if err is None and self.check_alive is not None:
                msg = self.check_alive()
                if msg:
                    err = msg
            dt = time.monotonic() - t0
            if err is None:
                print("ok %d - %s (%.1fs)" % (n, desc, dt), flush=True)
            else:
                self.failed += 1
                print("not ok %d - %s" % (n, desc), flush=True)
                for line in err.rstrip().splitlines():
                    print("#   " + line, flush=True)
        return 0 if self.failed == 0 else 1


def run_cases_with_image(cases, img_size, watchdog_seconds, namespace,
                        web=False):
    """The main of a test that starts its own servers: make the image (in
    TMP/www when web is set, served there by tests/lib/web-server.py, whose
    port goes to WEB_PORT), set TMP and IMG in namespace (the module's
    globals()), run the cases as TAP, clean up.  Returns the exit status.
    The watchdog grows with time_factor()."""
    require_binary()
    watchdog(watchdog_seconds * time_factor())
    tmp = tmpdir()
    www = os.path.join(tmp, "www")
    os.mkdir(www)
    img = os.path.join(www, "img")
    make_image(img, img_size)
    namespace.update(TMP=tmp, IMG=img)
    server = None
    try:
        if web:
            server, namespace["WEB_PORT"] = start_web_server(www)
        return Tap(cases).run()
    finally:
        if server:
            server.kill()
            server.wait()
        rmtree(tmp)


def run_cases_against_server(cases, img_size, watchdog_seconds, namespace, teardown=None,
                             tcp=False):
    """The main of a test over one read-only file: export: make the image,
    start the server (on TCP with tcp set), set TMP, IMG and SRV in namespace (the test module's
    globals(), which its cases read) to the directory, the image and the
    server, run the cases
    as TAP (a case during which the server died fails), then teardown()
    and stop.  Returns the exit status: 0 only if every case passed and
    the server was alive to the end."""
    require_binary()
    watchdog(watchdog_seconds)
    tmp = tmpdir()
    img = os.path.join(tmp, "disk.img")
    make_image(img, img_size)
    srv = Server(["-r", "file://" + img], tmp, tcp=tcp)
    try:
        srv.start()
    except RuntimeError as e:
        print("1..1\nnot ok 1 - server starts")
        diag(e)
        rmtree(tmp)
        return 1
    namespace.update(TMP=tmp, IMG=img, SRV=srv)

    def check_alive():
        if not srv.alive():
            return "server died (status %s)\n%s" % (srv.proc.returncode,
                                                   srv.log_text()[-3000:])
        return None

    try:
        rc = Tap(cases, check_alive).run()
        if rc:
            diag("server log (tail):\n" + srv.log_text()[-4000:])
    finally:
        if teardown:
            teardown()
        alive = srv.alive()
        srv.stop()
        rmtree(tmp)
    if not alive:
        diag("server was not alive at the end")
        rc = 1
    return rc


def run_tls_cases(cases, servers, tmp, img, img_size, keys, watchdog_seconds,
                  start=None):
    """The main of a TLS test: its keys made (keys: (PKI directory, key
    type or None) pairs, see make_tls_keys), the image at img, start()
    when given (it starts servers up front), then the cases as TAP.  servers
    is the test's dict of name -> Server, filled up front or by the cases;
    a case during which one died fails, and on a failure each one's log
    tail is shown.  Every server is stopped and tmp removed at the end.
    Returns the exit status.  The watchdog grows with time_factor()."""
    require_binary()
    watchdog(watchdog_seconds * time_factor())

    def check_alive():
        dead = [name for name, srv in servers.items() if not srv.alive()]
        if dead:
            return "server(s) died: %s\n%s" % (
                ", ".join(dead), "\n".join(servers[n].log_text()[-2000:] for n in dead))
        return None

    try:
        for pki, key_type in keys:
            failed = make_tls_keys(pki, key_type)
            if failed:
                return failed
        make_image(img, img_size)
        if start:
            start()
        rc = Tap(cases, check_alive).run()
        if rc:
            for name, srv in servers.items():
                diag("%s server log (tail):\n%s" % (name, srv.log_text()[-2000:]))
        return rc
    finally:
        for srv in servers.values():
            srv.stop()
        rmtree(tmp)


def diag(msg):
    for line in str(msg).rstrip().splitlines():
        print("# " + line, flush=True)


def watchdog(seconds):
    """Abort the whole test (and, through PDEATHSIG, the server) if it runs
    longer than this."""
    import faulthandler
    faulthandler.dump_traceback_later(seconds, exit=True)


def require_binary():
    """Exit 77 (skip) when the server binary is missing."""
    if not os.access(nbdcurld_path(), os.X_OK):
        print("1..0 # SKIP %s not built" % nbdcurld_path())
        sys.exit(77)


def tmpdir():
    d = tempfile.mkdtemp(prefix="nbdcurld-test-")
    return d


def rmtree(d):
    shutil.rmtree(d, ignore_errors=True)


# ---- Many clients at once (resource tests, tests/load.py) ----

def clients_at_once(address, n, image, length=65536, timeout=60.0,
                    at_peak=None):
    """n raw clients connect first, then all do the handshake (structured
    replies, GO) and one read of length bytes at once, one thread each;
    every read is compared with image (the export's bytes).  Each stays
    connected until every one has read (or failed), so the server holds
    all n clients and their fetchers at the same time; at_peak(), when
    given, runs then (before any closes).  Returns one
    dict per client: ok (bool), why (str, when not ok), go and first (the
    monotonic times GO was sent and the read's reply was complete: the
    GO-to-first-byte latency is first - go), start (when the handshake
    began)."""
    import threading
    threading.stack_size(256 * 1024)
    results = [{"ok": False, "why": "not run"} for _ in range(n)]
    conns = [None] * n
    for i in range(n):
        try:
            conns[i] = Conn(address, timeout)
        except OSError as e:
            results[i]["why"] = "connect: %s" % e
    gate = threading.Event()
    done = threading.Barrier(sum(c is not None for c in conns), action=at_peak)

    def one(i):
        c, res = conns[i], results[i]
        off = (i * 1048576 + 4096 * (i % 7) + i) % max(1, len(image) - length)
        try:
            gate.wait()
            res["start"] = time.monotonic()
            c.start()
            c.structured_reply()
            res["go"] = time.monotonic()
            c.go()
            r = c.read(off, length)
            res["first"] = time.monotonic()
            if r.error:
                res["why"] = "read error %d" % r.error
            elif r.data != image[off:off + length]:
                res["why"] = "wrong data at %d" % off
            else:
                res.update(ok=True, why="")
        except Exception as e:
            res["why"] = "%s: %s" % (type(e).__name__, e)
        finally:
            try:
                done.wait(timeout)
            except threading.BrokenBarrierError:
                pass
            c.close()

    threads = [threading.Thread(target=one, args=(i,), daemon=True)
               for i in range(n) if conns[i] is not None]
    for t in threads:
        t.start()
    gate.set()
    for t in threads:
        t.join(2 * timeout + 5)
    return results


def percentiles(values, ps=(50, 90, 99)):
    """{p: value} by nearest rank, plus "max"; empty for no values."""
    v = sorted(values)
    if not v:
        return {}
    out = {p: v[min(len(v) - 1, max(0, -(-p * len(v) // 100) - 1))]
           for p in ps}
    out["max"] = v[-1]
    return out


def time_to_serve(address, image_path, deadline):
    """Seconds until a new client (handshake with structured replies, GO,
    a 64 KiB read compared with the image file) is served, or None if it
    got nowhere within deadline seconds.  A client that is dropped tries
    again; the clock runs on."""
    t0 = time.monotonic()
    off = 1024 * 1024 + 7
    while time.monotonic() - t0 < deadline:
        left = deadline - (time.monotonic() - t0)
        try:
            with Conn(address, timeout=left) as c:
                c.handshake()
                r = c.read(off, 65536)
                if r.error or r.data != image_bytes(image_path, off, 65536):
                    raise AssertionError("wrong read %r" % r)
                return time.monotonic() - t0
        except (Closed, OSError):
            time.sleep(0.05)
        except Timeout:
            return None
    return None


def abrupt_client(address, i, image_size, timeout=DEFAULT_TIMEOUT):
    """One client that vanishes: every third resets right after sending GO
    (its fetcher arrives for a client that is gone); the others finish GO,
    put four 1 MiB reads in flight, then reset."""
    c = Conn(address, timeout)
    mib = 1024 * 1024
    try:
        if i % 3 == 0:
            c.start()
            c.send_option(OPT_GO, info_payload(""))
            return
        c.handshake()
        for k in range(4):
            c.request(CMD_READ, ((i * 4 + k) * mib) % (image_size - mib), mib)
    finally:
        reset_close(c.sock)


def unread_client(address, image_size, reads=64, length=32 * 1024 * 1024):
    """A client that finishes GO (simple replies, SO_RCVBUF 4 KiB), sends
    reads of length bytes and never reads a reply.  Returns the Conn (the
    caller closes it)."""
    c = Conn(address, rcvbuf=4096)
    c.handshake(structured=False)
    for i in range(reads):
        c.request(CMD_READ, (i * length) % (image_size - length + 1), length)
    return c


def timed_copies(uri, image_path, outdir, n=2, timeout=60.0):
    """n nbdcopy copies of uri at once, each to a file compared with the
    image afterwards.  Returns their wall time; raises AssertionError if
    one fails, is wrong, or takes longer than timeout."""
    import filecmp
    outs = [os.path.join(outdir, "copy%d" % i) for i in range(n)]
    for o in outs:
        if os.path.exists(o):
            os.unlink(o)
    t0 = time.monotonic()
    procs = [subprocess.Popen(["nbdcopy", uri, o], stderr=subprocess.PIPE)
             for o in outs]
    try:
        for p in procs:
            p.wait(max(0.1, timeout - (time.monotonic() - t0)))
    except subprocess.TimeoutExpired:
        raise AssertionError("nbdcopy took more than %.0f s" % timeout)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    took = time.monotonic() - t0
    for p, o in zip(procs, outs):
        if p.returncode != 0:
            raise AssertionError("nbdcopy failed: %s" %
                                 p.stderr.read().decode(errors="replace")[-500:])
        if not filecmp.cmp(o, image_path, shallow=False):
            raise AssertionError("copy %s differs from the image" % o)
        os.unlink(o)
    return took


def start_web_server(www, log=None):
    """tests/lib/web-server.py serving www; returns (process, port)."""
    args = ["/usr/bin/python3", os.path.join(LIB, "web-server.py")]
    if log:
        args += ["--log", log]
    web = subprocess.Popen(args + [www], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, preexec_fn=_pdeathsig)
    return web, int(web.stdout.readline())
