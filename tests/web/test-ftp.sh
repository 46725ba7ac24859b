#!/usr/bin/env bash
# ftp:// exports through a real FTP server (pyftpdlib): the size from SIZE,
# a byte-exact copy, odd and pipelined reads (REST and RETR, with passive
# data connections on ports the sandbox must allow), and a login with
# --auth-user and --auth-password.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy nbdinfo
requires_python_nbd
if ! $PY -c 'import pyftpdlib' 2>/dev/null; then
    echo "$0: SKIP: $PY cannot import pyftpdlib (python3-pyftpdlib)" >&2
    exit 77
fi

password='ftp-Pw-3e9a'
mkdir pub home
make_image pub/disk.img 3145733          # 3 MiB and 5 bytes: an odd size
make_image home/private.img 1M

# Anonymous users see pub/; alice sees home/.  The server prints its port.
cat > ftp-server.py <<'PY'
import sys
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer
pub, home, password = sys.argv[1:4]
auth = DummyAuthorizer()
auth.add_anonymous(pub)
auth.add_user("alice", password, home, perm="elr")
FTPHandler.authorizer = auth
FTPHandler.banner = "nbdcurld test"
server = FTPServer(("127.0.0.1", 0), FTPHandler)
print(server.address[1], flush=True)
server.serve_forever()
PY
: > ftp.port
$PY ftp-server.py "$tmp/pub" "$tmp/home" "$password" > ftp.port 2> ftp.log &
kill_on_exit $!
port=$(port_from ftp.port "the FTP server")
url=ftp://127.0.0.1:$port

# Size and a whole copy.
rm -f out.img
"$NBDCURLD" -r "$url/disk.img" --run '
    nbdinfo --size "$uri" > size.txt && nbdcopy "$uri" out.img' 2> copy.log ||
    fail "copy: $(tail -n 5 copy.log)"
[ "$(cat size.txt)" = 3145733 ] || fail "size $(cat size.txt), expected 3145733"
[ "$(md5_of out.img)" = "$(md5_of pub/disk.img)" ] || fail "the copy differs"

# Odd, overlapping and pipelined reads, each checked against the image.
start_nbdcurld -r "$url/disk.img"
$PY - "$NBD_URI" "$tmp/pub/disk.img" <<'PY' || fail "odd reads through FTP"
import random, sys
import nbd
uri, path = sys.argv[1:3]
image = open(path, 'rb').read()
size = len(image)
h = nbd.NBD()
h.connect_uri(uri)
cases = [(0, 1), (size - 1, 1), (size - 5, 5), (4095, 2), (1048575, 3),
         (12345, 65536 + 7), (size - 1048576 - 3, 1048576)]
rng = random.Random(7)
cases += [(o, rng.randint(1, 200000)) for o in (rng.randrange(size - 200000) for _ in range(12))]
for off, n in cases:
    got = h.pread(n, off)
    if got != image[off:off + n]:
        sys.exit("read of %d at %d differs" % (n, off))
# Pipelined: all in flight at once.
bufs = [(off, n, nbd.Buffer(n)) for off, n in cases]
cookies = [h.aio_pread(b, off) for off, n, b in bufs]
# aio_command_completed retires a command the first time it says so.
pending = set(cookies)
while pending:
    h.poll(-1)
    pending = {c for c in pending if not h.aio_command_completed(c)}
for off, n, b in bufs:
    if b.to_bytearray() != image[off:off + n]:
        sys.exit("pipelined read of %d at %d differs" % (n, off))
h.shutdown()
PY
stop_nbdcurld

# A user's file: refused anonymously, served with the password, which no
# log line shows.
if "$NBDCURLD" -r "$url/private.img" --run 'nbdinfo --size "$uri"' 2> anon.log; then
    fail "served a user's file to an anonymous login"
fi
# Not there for this login: the message names the URL and the next step.
grep -qF "cannot be opened: $url/private.img: not found: " anon.log ||
    fail "anonymous: the URL is not named: $(cat anon.log)"
grep -q 'check the URL' anon.log || fail "anonymous: no next step: $(cat anon.log)"
# A wrong password: the keys to check are named.
printf 'wrong-Pw\n' > wrong.txt
if "$NBDCURLD" -r --auth-user alice --auth-password "+$tmp/wrong.txt" "$url/private.img" \
       --run 'nbdinfo --size "$uri"' 2> wrong.log; then
    fail "served with a wrong password"
fi
grep -q 'access denied: .*check user= and password=' wrong.log ||
    fail "wrong password: the message does not say what to check: $(cat wrong.log)"
printf '%s\n' "$password" > pw.txt
rm -f out.img
"$NBDCURLD" -v -r --auth-user alice --auth-password "+$tmp/pw.txt" \
    "$url/private.img" --run 'nbdcopy "$uri" out.img' 2> user.log ||
    fail "login as alice: $(tail -n 5 user.log)"
[ "$(md5_of out.img)" = "$(md5_of home/private.img)" ] || fail "alice's copy differs"
! grep -q -- "$password" user.log anon.log || fail "the password is in a log"
