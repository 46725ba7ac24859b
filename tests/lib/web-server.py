#!/usr/bin/python3
# web-server.py: nbdcurld's test web server, correct or misbehaving on demand.
#
#   web-server.py [--port N] [--bind ADDR | --unix PATH] [--log FILE] [--seed N]
#                 [--tls-cert PEM --tls-key PEM] DIR
#
# With --tls-cert and --tls-key it speaks https (the same paths).
#
# Serves the files in DIR over HTTP/1.1 with keep-alive.  The first path
# component picks the behaviour, so one server covers every case:
#
#   /good/FILE          correct: HEAD, single byte ranges, If-Match, If-Range
#   /ignore-range/FILE  GET answers 200 with the whole file (HEAD still says
#                       Accept-Ranges: bytes)
#   /short-body/FILE    206 with correct headers, fewer bytes, then close
#   /long-body/FILE     206, Content-Range right, but Content-Length and the
#                       body longer than the range
#   /wrong-range/FILE   206 for a range shifted by SHIFT bytes, with a
#                       Content-Range and body that match the shifted range
#   /no-length/FILE     HEAD has no Content-Length; GET works
#   /head-403/FILE      HEAD refused with 403 (like presigned URLs); GET works
#   /head-405/FILE      HEAD refused with 405; GET works
#   /redirect-file/FILE every request: 302 to file:///etc/passwd
#   /redirect/FILE      every request: 302 to /good/FILE
#   /redirect-to/[ADDR:]PORT/FILE  every request: 302 to
#                       http://ADDR:PORT/good/FILE (another server; ADDR is
#                       a 127.x.y.z address, 127.0.0.1 when not given)
#   /status-500/FILE    every request: 500
#   /stall/FILE         HEAD works; GET sends its headers, then nothing
#   /slow-head/FILE     HEAD sends nothing for a long time; GET works
#   Correct data in forms that nbdcurld's direct (spliced) reads leave to
#   libcurl or must cope with (tests/web/test-direct-reads.sh):
#   /chunked/FILE       206 bodies with Transfer-Encoding: chunked
#   /http10/FILE        replies say HTTP/1.0; the connection closes after each
#   /interim/FILE       a 100 Continue before each 206
#   /trickle/FILE       the first TRICKLE_BYTES of each 206 body one byte per
#                       segment, a millisecond apart
#   /drop-idle/FILE     the connection is closed after each 206 without
#                       saying so (no Connection: close)
#   /bare-lf/FILE       header lines of 206 replies end in LF, not CRLF
#   /huge-headers/FILE  206 replies carry 20 KiB of extra headers
#   /garbage-status/FILE  GET replies start with a line that is not HTTP
#   /huge-length/FILE   206 with a Content-Length of 20 digits (libcurl
#                       reads such a body to the end of the connection)
#   /two-lengths/FILE   206 with two different Content-Length headers
#   /nul-header/FILE    206 with a NUL byte in a header name
#   /many-interim/FILE  ten 100 Continue replies before each 206
#   /mixed-line-ends/FILE  206 replies whose last header line ends in a bare
#                       LF, then CRLF CRLF: to a lenient reader the section
#                       ends at the bare LF's blank line, and the body then
#                       starts with CRLF (the right length, the wrong bytes)
#   /folded-first/FILE  206 replies whose first header line is folded (starts
#                       with a space, and has a colon): libcurl 7.88 unfolds
#                       it into the last header of the handle's previous
#                       transfer, already freed
#   /mangle/FILE        the header section of about half the 206 replies to
#                       ranges longer than a byte is damaged at random (bytes
#                       flipped, dropped or inserted, digits changed, lines
#                       repeated, the blank line lost), with the right body,
#                       then the connection is closed; --seed makes it
#                       repeatable; a damaged reply is logged with status=0
#                       (tests/web/test-mangled-replies.py)
#   /changing/FILE      from the second request on, ETag, Last-Modified and
#                       the size (Content-Length of HEAD, the total in
#                       Content-Range) are different on every request, as if
#                       the object were replaced each time
#   Replies that must be checked whichever way they are read, and servers
#   that would hold a request for ever (tests/web/test-fallback-checked.sh,
#   test-interim-limit.sh, test-slow-body.sh, test-reuse-damaged.sh):
#   /fallback-500/FILE  the first GET of each range: a correct 206 whose body
#   /fallback-range/FILE  starts in one-byte segments (as /trickle/: a direct
#   /fallback-etag/FILE   read hands it to libcurl); every later GET of that
#                       range: damaged, with a body as long as the range: a
#                       500 error page, the range shifted by SHIFT bytes, or
#                       another ETag and other bytes (the object replaced)
#   /interim-segments/FILE  INTERIM_FEW 100 Continue replies before each 206,
#                       each in its own segment, a little apart
#   /interim-flood/FILE 100 Continue replies in their own segments,
#                       INTERIM_FLOOD_GAP seconds apart, for INTERIM_FLOOD
#                       of them, before each 206
#   /delay/FILE         correct, but every GET waits DELAY_SECONDS before its
#                       reply: a read that is in flight for a while
#                       (tests/process/test-graceful-stop.sh)
#   /late-body/FILE     206 replies to ranges of LATE_BODY_MIN bytes or more
#                       send their headers at once and their body
#                       LATE_BODY_SECONDS later; smaller ranges as /good/:
#                       a big read whose body is slow, and small reads
#                       behind it (tests/nbd/test-small-reads-first.sh)
#   /slow-body/FILE     206 bodies of one byte every SLOW_BYTE_GAP seconds
#                       (below nbdcurld's minimum rate), SLOW_BYTES of them,
#                       then the connection is closed
#   /reuse-damaged/FILE on each connection the first reply is correct (a
#                       GET's body starts in one-byte segments, as
#                       /trickle/), and every later one is damaged (a 206
#                       with Content-Encoding: gzip and other bytes of the
#                       range's length), then the connection is closed
#   /unknown-total/FILE 206 replies whose Content-Range gives the total as
#                       "*" (unknown), with validators as usual
#   /unknown-total-unpinned/FILE  the same without ETag or Last-Modified
#                       anywhere: nothing tells the reads that the object
#                       is still the one opened
#   /token/FILE         correct, but only for a request that carries
#                       "Authorization: Bearer TOKEN" or the cookie
#                       "token=TOKEN" with the current token (or the one
#                       before it, for TOKEN_GRACE seconds); else 401.
#                       With --token-file FILE --token-lifetime SECS the
#                       token changes every SECS seconds and is written to
#                       FILE (whole, by rename) each time; --token-delay
#                       SECS holds every GET that long, so that a copy
#                       lasts several tokens
#                       (tests/scripts/test-header-script.sh).
#                       POST /login answers {"token": "TOKEN"}, as the
#                       login server of nbdkit-curl-plugin(1)'s example.
#   Faults that pass, for nbdcurld's retries (tests/web/test-retries.sh):
#   /flaky/KIND[raSECS|radateSECS]-COUNT/FILE  the first COUNT range GETs
#                       of each range (counted by the range's last byte,
#                       which a retry of what is left of a read keeps), or
#                       with COUNT pN the first N range GETs of the path,
#                       or with COUNT "always" every one, get the fault
#                       KIND; the others are correct.  KIND: a status
#                       (408, 429, 500, 502, 503, 504, 404) with a small
#                       error page; reset (a 206 and half its body, then a
#                       TCP reset); close (the connection closed without a
#                       reply); short (a 206 and half its body, then
#                       closed); stall (a 206 and half its body, then
#                       nothing for STALL_SECONDS); 503etag (503, and once the faults are
#                       over the object has changed: another ETag and
#                       other bytes, as /fallback-etag/).  raSECS adds
#                       Retry-After: SECS, radateSECS Retry-After as the
#                       HTTP-date SECS from now.  A fault is logged with
#                       its status, 0 for reset, close and stall.
#   Cookies (tests/web/test-cookies.sh): SESSION_COOKIE is "srv=granted".
#   /set-cookie/FILE    HEAD answers as /good/ with Set-Cookie: srv=granted
#                       (Path=/); a GET without that cookie is refused (403)
#   /cookie-redirect/FILE  302 to /cookie-required/FILE, setting the cookie
#   /cookie-required/FILE  every request without the cookie is refused (403)
#
# The port is printed on stdout (one line) once the server listens, so a
# test can start it with port 0 and read the port back.  One line per
# request goes to the log (stderr by default):
#   GET /ignore-range/disk.img range=bytes=0-4095 status=200 body_bytes_sent=N path_total=M auth=no
#   ... auth=no ua="nbdcurld/0.1.0" cookie=- xtest=- xtest2=- authz=- conns=1
# body_bytes_sent counts what this response wrote to the socket (also when
# the client hung up early); path_total sums it over all requests for the
# path, so a test can prove that no whole body was sent; auth says whether
# the request carried an Authorization header.  The fields after it say
# what the client sent (tests/web/test-curl-keys*.sh): ua the User-Agent,
# cookie the Cookie header, xtest and xtest2 the test headers X-Nbdcurld-Test and
# X-Nbdcurld-Test2, authz the Authorization header, each as "VALUE" or "-"
# when the request had none (a header sent more than once: the values
# joined by " | "; in a value, backslash and double quote are escaped with
# a backslash and other bytes outside printable ASCII are written \xHH);
# conns counts the connections open to this server when the line is
# written (this one included); via is the Via header a proxy adds
# (tests/web/test-proxy.sh), host the Host header
# (tests/web/test-unix-socket.sh), time the Unix time the line was written, in seconds with three
# decimals.  New fields go at the end of the line.
#
# Only the standard library, and only for tests on 127.0.0.1.

import argparse
import email.utils
import http.server
import os
import random
import re
import socket
import socketserver
import ssl
import struct
import sys
import threading
import time

STALL_SECONDS = 60
SHIFT = 512                 # /wrong-range/: bytes the answered range is off
CHUNK = 256 * 1024

MODES = {
    "good", "ignore-range", "short-body", "long-body", "wrong-range",
    "no-length", "head-403", "head-405", "redirect-file", "redirect",
    "status-500", "stall", "slow-head", "changing",
    "chunked", "http10", "interim", "trickle", "drop-idle", "bare-lf",
    "huge-headers", "garbage-status", "huge-length", "two-lengths",
    "nul-header", "many-interim", "mangle", "folded-first", "mixed-line-ends",
    "fallback-500", "fallback-range", "fallback-etag", "interim-segments",
    "interim-flood", "slow-body", "reuse-damaged", "unknown-total",
    "unknown-total-unpinned", "delay", "token", "flaky", "late-body",
    "set-cookie", "cookie-redirect", "cookie-required",
}
SESSION_COOKIE = "srv=granted"
DELAY_SECONDS = 2
TRICKLE_BYTES = 600
INTERIM_FEW = 3             # nbdcurld takes MAX_INTERIM_RESPONSES (4)
INTERIM_FLOOD = 300
INTERIM_FLOOD_GAP = 0.2
SLOW_BYTE_GAP = 2.0
LATE_BODY_MIN = 65536
LATE_BODY_SECONDS = 3.0
SLOW_BYTES = 60
# /fallback-*/: what every GET of a range after the first gets.
FALLBACK_DAMAGE = {"fallback-500": "500", "fallback-range": "range",
                   "fallback-etag": "etag"}

log_lock = threading.Lock()
open_connections = 0        # under log_lock: the log's conns=
mangle_random = random.Random(1)    # /mangle/: under log_lock; --seed
log_file = sys.stderr
tls = False                 # --tls-cert: sendfile() would bypass TLS
path_totals = {}            # request path -> body bytes sent, all requests
request_counts = {}         # request path -> requests seen (for /changing/)
range_counts = {}           # (path, Range) -> GETs seen (for /fallback-*/)
flaky_counts = {}           # (path, last byte or None) -> GETs seen (/flaky/)
FLAKY = re.compile(r"(408|429|500|502|503|504|404|reset|close|short|stall|503etag)"
                   r"(?:ra(date)?([0-9]{1,3}))?-(always|p?[0-9]{1,3})")


def log(line):
    with log_lock:
        log_file.write(line + "\n")
        log_file.flush()


def quoted(values):
    """A log field for a header's values: "-" without any, else "VALUE"
    (several joined by " | "), escaped as the comment at the top says."""
    if not values:
        return "-"
    out = []
    for c in " | ".join(values):
        if c in '"\\':
            out.append("\\" + c)
        elif " " <= c <= "~":
            out.append(c)
        else:
            out.append("\\x%02x" % ord(c) if ord(c) < 256 else "\\u%04x" % ord(c))
    return '"' + "".join(out) + '"'


class RangeError(Exception):
    pass


def parse_range(value, size):
    """Return (first, last) for a Range header value, strictly.

    Only one range is supported: "bytes=A-B", "bytes=A-" or "bytes=-N".
    Anything else (other units, several ranges, spaces, A > B, a range that
    starts past the end) raises RangeError, which becomes 416.
    """
    m = re.fullmatch(r"bytes=([0-9]{1,19})-([0-9]{0,19})", value)
    if m:
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else size - 1
        if first > last or first >= size:
            raise RangeError(value)
        return first, min(last, size - 1)
    m = re.fullmatch(r"bytes=-([0-9]{1,19})", value)
    if m:
        n = int(m.group(1))
        if n == 0 or size == 0:
            raise RangeError(value)
        return max(0, size - n), size - 1
    raise RangeError(value)


class Handler(http.server.BaseHTTPRequestHandler):
    # Small replies must not wait for Nagle's delayed ACK (40 ms each).
    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"
    server_version = "nbdcurld-test-web-server/1"

    # --- plumbing ---

    def log_message(self, format, *args):
        pass                    # our own log line per request instead

    def setup(self):
        global open_connections
        super().setup()
        self.requests_here = 0  # on this connection (for /reuse-damaged/)
        with log_lock:
            open_connections += 1

    def finish(self):
        global open_connections
        with log_lock:
            open_connections -= 1
        super().finish()

    def handle_one_request(self):
        # A client that hangs up (curl aborting a transfer it does not
        # like) is normal here, not worth a traceback.
        try:
            super().handle_one_request()
        except (ConnectionError, TimeoutError):
            self.close_connection = True

    def finish_log(self, status, sent):
        with log_lock:
            total = path_totals.get(self.path, 0) + sent
            path_totals[self.path] = total
            conns = open_connections
        h = self.headers
        log("%s %s range=%s status=%d body_bytes_sent=%d path_total=%d auth=%s"
            " ua=%s cookie=%s xtest=%s xtest2=%s authz=%s conns=%d via=%s host=%s"
            " time=%.3f" % (
                self.command, self.path, h.get("Range", "-"),
                status, sent, total,
                "yes" if "Authorization" in h else "no",
                quoted(h.get_all("User-Agent")), quoted(h.get_all("Cookie")),
                quoted(h.get_all("X-Nbdcurld-Test")),
                quoted(h.get_all("X-Nbdcurld-Test2")),
                quoted(h.get_all("Authorization")), conns,
                quoted(h.get_all("Via")), quoted(h.get_all("Host")), time.time()))

    def reply(self, status, headers=(), body=b""):
        """A complete small response with an exact Content-Length."""
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        sent = 0
        if self.command != "HEAD" and body:
            self.wfile.write(body)
            sent = len(body)
        self.finish_log(status, sent)

    def send_file_bytes(self, f, offset, count):
        """sendfile() count bytes from offset; returns bytes written even
        if the client goes away part way (then the connection is closed)."""
        sent = 0
        sock = self.connection.fileno()
        try:
            while tls and sent < count:
                f.seek(offset + sent)
                data = f.read(min(CHUNK, count - sent))
                if not data:
                    break
                self.wfile.write(data)
                sent += len(data)
            while sent < count:
                n = os.sendfile(sock, f.fileno(), offset + sent,
                                min(CHUNK, count - sent))
                if n == 0:      # file shrank under us
                    break
                sent += n
        except (ConnectionError, TimeoutError):
            self.close_connection = True
        return sent

    # --- the resource ---

    def resolve(self):
        """Map /MODE/FILE to (mode, path in DIR, name), or reply 404."""
        parts = self.path.split("?", 1)[0].split("/")
        # /redirect-to/[ADDR:]PORT/FILE: FILE is on the other server, not
        # here (ADDR: a loopback address, 127.0.0.1 when not given).
        m = (re.fullmatch(r"(127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}:)?([0-9]{1,5})", parts[2])
             if len(parts) == 4 else None)
        if (m and parts[0] == "" and parts[1] == "redirect-to"
                and 0 < int(m.group(2)) < 65536
                and parts[3] not in ("", ".", "..")):
            return parts[1], None, "%s%d/%s" % (m.group(1) or "127.0.0.1:",
                                                int(m.group(2)), parts[3])
        # /flaky/SPEC/FILE: the spec is kept for serve().
        self.flaky = None
        if (len(parts) == 4 and parts[0] == "" and parts[1] == "flaky"
                and FLAKY.fullmatch(parts[2])):
            self.flaky = FLAKY.fullmatch(parts[2])
            parts = ["", "flaky", parts[3]]
        if (len(parts) != 3 or parts[0] != "" or parts[1] not in MODES
                or parts[2] in ("", ".", "..")):
            self.reply(404, body=b"not found\n")
            return None
        path = os.path.join(self.server.directory, parts[2])
        if not os.path.isfile(path):
            self.reply(404, body=b"not found\n")
            return None
        return parts[1], path, parts[2]

    def object_state(self, mode, path):
        """(size, etag, last-modified) as this request sees the object."""
        st = os.stat(path)
        size, mtime = st.st_size, int(st.st_mtime)
        etag = '"%x-%x"' % (st.st_mtime_ns, size)
        if mode == "changing":
            with log_lock:
                n = request_counts.get(self.path, 0) + 1
                request_counts[self.path] = n
            if n > 1:           # "replaced" since the first request
                size += n
                mtime += n
                etag = '"%x-%x-%d"' % (st.st_mtime_ns, size, n)
        return size, etag, mtime

    def preconditions_ok(self, etag, mtime):
        im = self.headers.get("If-Match")
        if im is not None:
            tags = [t.strip() for t in im.split(",")]
            if "*" not in tags and etag not in tags:
                return False
        ius = self.headers.get("If-Unmodified-Since")
        if ius is not None:
            try:
                when = email.utils.parsedate_to_datetime(ius).timestamp()
            except (TypeError, ValueError):
                when = None
            if when is not None and mtime > when:
                return False
        return True

    def if_range_ok(self, etag, last_modified):
        ir = self.headers.get("If-Range")
        if ir is None:
            return True
        if ir.startswith('"') or ir.startswith("W/"):
            return ir == etag   # strong comparison: weak never matches
        return ir == last_modified

    def do_HEAD(self):
        self.serve()

    def do_GET(self):
        self.serve()

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0") or "0")
        if length:
            self.rfile.read(length)
        if self.path != "/login":
            self.reply(404, body=b"not found\n")
            return
        body = ('{"token": "%s"}\n' % current_token()).encode()
        self.reply(200, [("Content-Type", "application/json")], body)

    def token_ok(self):
        # The token of now, or the one before it for TOKEN_GRACE seconds
        # after it changed (a script may have read it just before).
        tokens = {current_token(), current_token(time.time() - TOKEN_GRACE)}
        cookies = [c.strip() for c in self.headers.get("Cookie", "").split(";")]
        return any(self.headers.get("Authorization", "") == "Bearer " + t or
                   "token=" + t in cookies for t in tokens)

    def serve(self):
        r = self.resolve()
        if r is None:
            return
        mode, path, name = r
        head = self.command == "HEAD"
        self.requests_here += 1

        if mode == "status-500":
            self.reply(500, body=b"internal error (on purpose)\n")
            return
        if mode == "redirect-file":
            self.reply(302, [("Location", "file:///etc/passwd")])
            return
        if mode == "redirect":
            self.reply(302, [("Location", "/good/" + name)])
            return
        if mode == "redirect-to":
            where, name = name.split("/", 1)
            self.reply(302, [("Location", "http://%s/good/%s" % (where, name))])
            return
        if mode == "cookie-redirect":
            self.reply(302, [("Location", "/cookie-required/" + name),
                             ("Set-Cookie", SESSION_COOKIE + "; Path=/")])
            return
        has_cookie = SESSION_COOKIE in [
            c.strip() for v in self.headers.get_all("Cookie", []) for c in v.split(";")]
        if ((mode == "set-cookie" and not head or mode == "cookie-required")
                and not has_cookie):
            self.reply(403, body=b"no session cookie\n")
            return
        if head and mode in ("head-403", "head-405"):
            status = int(mode[5:])
            extra = [("Allow", "GET")] if status == 405 else []
            self.reply(status, extra)
            return
        if head and mode == "slow-head":
            time.sleep(STALL_SECONDS)
            self.close_connection = True
            return
        if not head and mode == "delay":
            time.sleep(DELAY_SECONDS)
        if mode == "token":
            # Checked as the request arrives; then the reply takes its time.
            if not self.token_ok():
                self.reply(401, [("WWW-Authenticate", "Bearer")], b"token expired\n")
                return
            if not head and token_delay:
                time.sleep(token_delay)

        size, etag, mtime = self.object_state(mode, path)
        last_modified = email.utils.formatdate(mtime, usegmt=True)
        validators = [("ETag", etag), ("Last-Modified", last_modified),
                      ("Accept-Ranges", "bytes")]
        if mode == "unknown-total-unpinned":
            validators = [("Accept-Ranges", "bytes")]

        if not self.preconditions_ok(etag, mtime):
            self.reply(412, validators, b"precondition failed\n")
            return

        if head:
            self.send_response(200)
            for k, v in validators:
                self.send_header(k, v)
            if mode == "set-cookie":
                self.send_header("Set-Cookie", SESSION_COOKIE + "; Path=/")
            if mode != "no-length":
                self.send_header("Content-Length", str(size))
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            self.finish_log(200, 0)
            return

        real_size = os.stat(path).st_size
        rng = self.headers.get("Range")
        if mode == "ignore-range" or not self.if_range_ok(etag, last_modified):
            rng = None
        if rng is None:
            self.send_whole(mode, path, real_size, validators)
            return
        try:
            first, last = parse_range(rng, real_size)
        except RangeError:
            self.reply(416, validators + [("Content-Range", "bytes */%d" % size)],
                       b"range not satisfiable\n")
            return
        if mode == "flaky" and self.flaky_fault(path, first, last, size, validators):
            return
        damage = None
        if mode in FALLBACK_DAMAGE:
            with log_lock:
                key = (self.path, rng)
                range_counts[key] = range_counts.get(key, 0) + 1
                if range_counts[key] > 1:
                    damage = FALLBACK_DAMAGE[mode]
        elif mode == "reuse-damaged" and self.requests_here > 1:
            damage = "encoding"
        if damage is not None:
            self.send_damaged(damage, path, first, last - first + 1, size, validators)
            if mode == "reuse-damaged":
                self.close_connection = True
            return
        if mode in FALLBACK_DAMAGE or mode == "reuse-damaged":
            mode = "trickle"
        self.send_range(mode, path, first, last, size, validators)

    def flaky_fault(self, path, first, last, total, validators):
        """/flaky/: answer with the fault if this GET gets one (True)."""
        kind, date, secs, count = self.flaky.groups()
        per_path = count.startswith("p")
        with log_lock:
            key = (self.path, None if per_path else last)
            n = flaky_counts.get(key, 0) + 1
            flaky_counts[key] = n
        limit = (10 ** 9 if count == "always"
                 else int(count[1:]) if per_path else int(count))
        if n > limit:
            if kind == "503etag":   # the object was replaced meanwhile
                self.send_damaged("etag", path, first, last - first + 1, total,
                                  validators)
                return True
            return False
        if kind in ("reset", "short", "stall"):
            count = last - first + 1
            self.send_response(206)
            for k, v in validators:
                self.send_header(k, v)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, total))
            self.send_header("Content-Length", str(count))
            self.end_headers()
            with open(path, "rb") as f:
                sent = self.send_file_bytes(f, first, count // 2)
            self.close_connection = True
            if kind == "stall":
                time.sleep(STALL_SECONDS)
            elif kind == "reset":
                # Closing with a zero linger time sends RST, not FIN.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
            else:
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.finish_log(0 if kind in ("reset", "stall") else 206, sent)
            return True
        if kind == "close":
            self.close_connection = True
            self.finish_log(0, 0)
            return True
        headers = []
        if secs is not None:
            headers.append(("Retry-After", email.utils.formatdate(
                time.time() + int(secs), usegmt=True) if date else secs))
        status = 503 if kind == "503etag" else int(kind)
        self.reply(status, headers, b"not now (on purpose)\n")
        return True

    def send_damaged(self, damage, path, first, count, total, validators):
        """A reply to a range that must not be used, with a body of exactly
        the range's length: nothing but the checks can tell it apart."""
        status, headers = 206, list(validators)
        with open(path, "rb") as f:
            f.seek(first)
            data = f.read(count)
        if damage == "500":
            status = 500
            data = (b"<html>internal error (on purpose)</html>\n" * (count // 40 + 1))[:count]
        elif damage == "range":
            first = first + SHIFT if first + count + SHIFT <= total else first - SHIFT
            with open(path, "rb") as f:
                f.seek(first)
                data = f.read(count)
        elif damage == "etag":
            headers = [(k, '"replaced"' if k == "ETag" else v) for k, v in headers]
            data = bytes(b ^ 0xff for b in data)
        elif damage == "encoding":
            headers.append(("Content-Encoding", "gzip"))
            data = bytes(b ^ 0xff for b in data)
        if status == 206:
            headers.append(("Content-Range", "bytes %d-%d/%d" % (first, first + count - 1,
                                                                 total)))
        self.reply(status, headers, data)

    def send_whole(self, mode, path, size, validators):
        if mode == "ignore-range":
            # Keep little in kernel buffers, so that body_bytes_sent says
            # how much the client really let through before hanging up.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF,
                                       64 * 1024)
        self.send_response(200)
        for k, v in validators:
            self.send_header(k, v)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        with open(path, "rb") as f:
            sent = self.send_file_bytes(f, 0, size)
        self.finish_log(200, sent)

    def send_range(self, mode, path, first, last, total, validators):
        count = last - first + 1
        length = count           # what Content-Length says
        body = count             # bytes we really send
        if mode == "short-body":
            body = count // 2
        elif mode == "long-body":
            extra = min(4096, total - 1 - last)
            if extra == 0:       # range ends at EOF: send garbage instead
                extra = 4096
            length = body = count + extra
        elif mode == "wrong-range":
            shift = SHIFT if last + SHIFT < total else -min(SHIFT, first)
            if shift == 0:       # range is the whole file: nothing to shift
                shift = 1 if count > 1 else 0
                last -= shift
                count -= shift
                length = body = count
            first += shift
            last += shift

        if mode == "mangle" and count > 1:
            self.send_mangled_range(path, first, count, total, validators)
            return
        if mode in ("chunked", "bare-lf", "garbage-status", "huge-length",
                    "two-lengths", "nul-header", "folded-first",
                    "mixed-line-ends"):
            self.send_unusual_range(mode, path, first, count, total, validators)
            return
        if mode == "interim":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if mode == "many-interim":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n" * 10)
        if mode in ("interim-segments", "interim-flood"):
            many, gap = ((INTERIM_FEW, 0.05) if mode == "interim-segments"
                         else (INTERIM_FLOOD, INTERIM_FLOOD_GAP))
            for _ in range(many):
                self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                time.sleep(gap)
        if mode == "http10":
            self.protocol_version = "HTTP/1.0"
            self.close_connection = True
        self.send_response(206)
        for k, v in validators:
            self.send_header(k, v)
        self.send_header("Content-Range", "bytes %d-%d/%s" % (
            first, last, "*" if mode.startswith("unknown-total") else total))
        self.send_header("Content-Length", str(length))
        if mode == "huge-headers":
            for i in range(20):
                self.send_header("X-Padding-%d" % i, "p" * 1024)
        self.end_headers()

        if mode == "trickle":
            with open(path, "rb") as f:
                f.seek(first)
                head = f.read(min(TRICKLE_BYTES, count))
            for i in range(len(head)):
                self.wfile.write(head[i:i + 1])
                time.sleep(0.001)
            first += len(head)
            count -= len(head)
            body = count
            sent_head = len(head)
        else:
            sent_head = 0

        if mode == "late-body" and count >= LATE_BODY_MIN:
            time.sleep(LATE_BODY_SECONDS)

        if mode == "slow-body":
            with open(path, "rb") as f:
                f.seek(first)
                data = f.read(min(SLOW_BYTES, count))
            sent = 0
            try:
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    sent += 1
                    time.sleep(SLOW_BYTE_GAP)
            except ConnectionError:
                pass
            self.close_connection = True
            self.finish_log(206, sent)
            return

        if mode == "stall":
            time.sleep(STALL_SECONDS)
            self.close_connection = True
            self.finish_log(206, 0)
            return

        with open(path, "rb") as f:
            sent = sent_head + self.send_file_bytes(f, first, min(body, count))
        if mode == "drop-idle":
            self.close_connection = True
        if body > count:         # long-body: pad past the range
            try:
                self.wfile.write(b"\xa5" * (body - count))
                sent += body - count
            except ConnectionError:
                pass
        if mode in ("short-body", "long-body"):
            # Short: the client must notice the missing bytes, not wait.
            # Long: what follows would be garbage on a kept-alive connection.
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.finish_log(206, sent)


    @staticmethod
    def mangle(head, rnd):
        """One to three random changes to a header section (bytes).

        What a change must not do is make a well-formed reply with another
        body: a CRLF blank line before the end of the section (the rest
        of it then starts the body), or bytes after it.  No client can
        tell that from a server that sends other bytes.  So the changes
        stay before the final CRLF CRLF and write no CR (two could make
        such a blank line), except that the blank line may be lost.  A
        bare LF can end the section early too, but nbdcurld refuses
        replies that mix line ends, so LFs are written."""
        assert head.endswith(b"\r\n\r\n")
        end, head = head[-4:], bytearray(head[:-4])
        for _ in range(rnd.randint(1, 3)):
            kind = rnd.randrange(6)
            at = rnd.randrange(len(head))
            if kind == 0:                           # flip a byte
                head[at] = rnd.choice([b for b in range(256) if b != 0x0d])
            elif kind == 1 and len(head) > 1:       # drop a byte
                del head[at]
            elif kind == 2:                         # insert a byte
                head.insert(at, rnd.choice(b"\n\0\t :;,-/0123456789\x7f\xff"))
            elif kind == 3:                         # change a digit
                digits = [i for i, c in enumerate(head) if 0x30 <= c <= 0x39]
                if digits:
                    head[rnd.choice(digits)] = rnd.choice(b"0123456789")
            elif kind == 4:                         # repeat a line
                lines = bytes(head).split(b"\r\n")
                i = rnd.randrange(len(lines))
                lines.insert(i, lines[i])
                head = bytearray(b"\r\n".join(lines))
            elif kind == 5:                         # lose the blank line
                end = b"\r\n"
        return bytes(head) + end

    def send_mangled_range(self, path, first, count, total, validators):
        """A 206 with the right body whose header section is damaged about
        half the time; the connection is closed after it either way, so a
        reader waiting for bytes a damaged length promised sees EOF."""
        lines = [b"HTTP/1.1 206 Partial Content"]
        lines += [("%s: %s" % kv).encode() for kv in validators]
        lines.append(("Content-Range: bytes %d-%d/%d" % (first, first + count - 1,
                                                         total)).encode())
        lines.append(("Content-Length: %d" % count).encode())
        head = b"\r\n".join(lines) + b"\r\n\r\n"
        with log_lock:
            damaged = mangle_random.random() < 0.5
            if damaged:
                head = self.mangle(head, mangle_random)
        with open(path, "rb") as f:
            f.seek(first)
            data = f.read(count)
        try:
            self.wfile.write(head + data)
            self.wfile.flush()
        except ConnectionError:
            pass
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.finish_log(206 if not damaged else 0, count)

    def send_unusual_range(self, mode, path, first, count, total, validators):
        """A 206 written by hand: chunked, with bare LF line ends, or after
        a line that is not a status line."""
        eol = b"\n" if mode == "bare-lf" else b"\r\n"
        lines = [b"garbage, not a status line" if mode == "garbage-status"
                 else b"HTTP/1.1 206 Partial Content"]
        lines += [("%s: %s" % kv).encode() for kv in validators]
        lines.append(("Content-Range: bytes %d-%d/%d" % (first, first + count - 1,
                                                         total)).encode())
        if mode == "chunked":
            lines.append(b"Transfer-Encoding: chunked")
        elif mode == "huge-length":
            lines.append(b"Content-Length: 99999999999999999999")
        else:
            lines.append(("Content-Length: %d" % count).encode())
        if mode == "two-lengths":
            lines.append(("Content-Length: %d" % (count + 1)).encode())
        if mode == "nul-header":
            lines.append(b"X-Bad\0Name: 1")
        if mode == "folded-first":
            # With a colon: libcurl refuses a folded line without one
            # before it gets to the unfolding.
            lines.insert(1, b" X-Folded: onto a header of no reply of this transfer")
        with open(path, "rb") as f:
            f.seek(first)
            data = f.read(count)
        out = eol.join(lines) + eol + eol
        if mode == "mixed-line-ends":
            out = eol.join(lines) + b"\n" + eol + eol
        if mode == "chunked":
            for i in range(0, len(data), 65536):
                piece = data[i:i + 65536]
                out += b"%x\r\n" % len(piece) + piece + b"\r\n"
            out += b"0\r\n\r\n"
        else:
            out += data
        try:
            self.wfile.write(out)
        except ConnectionError:
            self.close_connection = True
        if mode != "chunked" and mode != "bare-lf":
            self.close_connection = True     # the client gave up on it
        self.finish_log(206, count)


# /token/: the current token, and the file it is written to.
token_file = None
token_lifetime = 0.0
token_delay = 0.0
token_secret = "%x" % random.SystemRandom().getrandbits(64)
token_written = None


TOKEN_GRACE = 0.2


def current_token(when=None):
    when = time.time() if when is None else when
    n = int(when / token_lifetime) if token_lifetime > 0 else 0
    return "tok-%s-%d" % (token_secret, n)


def write_token_file():
    """Keep --token-file holding the current token (a background thread)."""
    global token_written
    while True:
        token = current_token()
        if token != token_written:
            tmp = token_file + ".tmp"
            with open(tmp, "w") as f:
                f.write(token + "\n")
            os.rename(tmp, token_file)
            token_written = token
        time.sleep(0.05)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True       # a stalled handler must not block exit
    allow_reuse_address = True
    # The listen backlog: socketserver's default of 5 overflows when many
    # fetchers reconnect at once (/drop-idle/), and a connection the kernel
    # then drops waits seconds for its retransmits.
    request_queue_size = 128

    def handle_error(self, request, client_address):
        # Hang-ups are expected; anything else is a bug in this script.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class UnixHandler(Handler):
    disable_nagle_algorithm = False     # no TCP options on a Unix socket


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """--unix PATH: the same server on a Unix socket (unix-socket-path=)."""
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def main():
    global log_file, tls
    ap = argparse.ArgumentParser(description="nbdcurld test web server")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--unix", help="listen on this Unix socket instead (prints 0)")
    ap.add_argument("--log", help="append one line per request here")
    ap.add_argument("--seed", type=int, default=1,
                    help="seed of the damage /mangle/ does")
    ap.add_argument("--token-file", help="/token/: write the current token here")
    ap.add_argument("--token-lifetime", type=float, default=0,
                    help="/token/: seconds each token is valid (0: one token)")
    ap.add_argument("--token-delay", type=float, default=0,
                    help="/token/: seconds every GET waits before its reply")
    ap.add_argument("--tls-cert", help="serve https with this certificate (PEM)")
    ap.add_argument("--tls-key", help="and this key (PEM)")
    ap.add_argument("directory")
    args = ap.parse_args()
    global token_file, token_lifetime, token_delay
    token_file, token_lifetime, token_delay = (args.token_file, args.token_lifetime,
                                               args.token_delay)
    if token_file:
        token = current_token()
        with open(token_file + ".tmp", "w") as f:
            f.write(token + "\n")
        os.rename(token_file + ".tmp", token_file)
        threading.Thread(target=write_token_file, daemon=True).start()
    if args.log:
        log_file = open(args.log, "a", buffering=1)
    mangle_random.seed(args.seed)

    if args.unix:
        srv = UnixServer(args.unix, UnixHandler)
    else:
        srv = Server((args.bind, args.port), Handler)
    if args.tls_cert:
        tls = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.directory = os.path.abspath(args.directory)
    print(0 if args.unix else srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
