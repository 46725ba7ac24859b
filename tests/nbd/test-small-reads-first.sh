#!/usr/bin/env bash
# A small read is not stuck behind a big one whose body is slow: NBD
# replies may come in any order, and a read whose bytes are all here is
# answered first.  The web server sends a big range's headers at once and
# its body 3 s later (/late-body/); a 4 KiB read asked for after the big
# one, on the same connection, must be answered well before it, and both
# with the right bytes.  Both reads go through the data pipe (direct
# reads): the big one owns the pipe first, as its headers came first.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires_python_nbd

serve_image 4M
start_nbdcurld -r -v --export "late=$WEB_URL/late-body/disk.img"

cat > order.py <<'PYEOF'
import sys, time
import nbd
uri, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
h = nbd.NBD()
h.connect_uri(uri)
reads = {"big": (0, 262144), "small": (1048576, 4096)}
bufs, cookies, done = {}, {}, []
t0 = time.monotonic()
for name in ("big", "small"):
    off, n = reads[name]
    bufs[name] = nbd.Buffer(n)
    cookies[name] = h.aio_pread(bufs[name], off)
    if name == "big":
        time.sleep(0.5)         # its headers are in, its body is not
while len(done) < 2 and time.monotonic() - t0 < 30:
    h.poll(1)
    for name, c in cookies.items():
        if name not in [d[0] for d in done] and h.aio_command_completed(c):
            done.append((name, time.monotonic() - t0))
for name, t in done:
    off, n = reads[name]
    ok = bufs[name].to_bytearray() == data[off:off + n]
    print("%s %.2f %s" % (name, t, "ok" if ok else "WRONG"))
PYEOF
timeout 60 $PY order.py "$(nbd_uri late)" www/disk.img > order.out ||
    fail "the reads failed: $(cat order.out)"
cat order.out
[ "$(wc -l < order.out)" -eq 2 ] || fail "not both reads were answered"
grep -q WRONG order.out && fail "wrong bytes"
[ "$(awk 'NR == 1 { print $1 }' order.out)" = small ] ||
    fail "the small read was answered after the big one"
awk '$1 == "small" && $2 > 2 { exit 1 }' order.out ||
    fail "the small read waited for the big one's body"
# Both went through the data pipe, not libcurl.
grep -q 'goes through libcurl\|go through libcurl' "$NBDCURLD_LOG" &&
    fail "a read went through libcurl"
exit 0
