#!/usr/bin/env bash
# A fetcher that cannot be started (fork fails: RLIMIT_NPROC) costs the
# client that asked for it its export, nothing more: the server, the
# clients already served and later clients carry on.  Needs root, to run
# as a user of its own (a numeric --user no other process has), so that
# the process limit counts only this server's processes.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires_python_nbd
if [ "$(id -u)" -ne 0 ]; then
    echo "$0: SKIP: needs root (to run nbdcurld as a user of its own)" >&2
    exit 77
fi

make_image disk.img 4M
chmod 755 "$tmp"
chmod 644 disk.img
id=$((40000 + RANDOM))
# The supervisor and the front-end, as user $id, and one fetcher.
ulimit -u 3
start_nbdcurld --user "$id" --group "$id" -r "file://$tmp/disk.img"
ulimit -u unlimited 2>/dev/null || true

$PY - "$NBD_SOCK" "$tmp/disk.img" <<'PYEOF' || fail "see above; log: $(cat "$NBDCURLD_LOG")"
import sys, time
import nbd
sock, image = sys.argv[1:]
data = open(image, "rb").read()
first = nbd.NBD()
first.connect_unix(sock)
try:
    second = nbd.NBD()
    second.connect_unix(sock)
    sys.exit("a second fetcher started although the process limit forbids it")
except nbd.Error as e:
    print("second client refused as expected: %s" % e)
assert first.pread(65536, 12345) == data[12345:12345 + 65536], "first client: wrong data"
first.shutdown()
# Its fetcher exits with it: room for the next one.
for attempt in range(50):
    try:
        third = nbd.NBD()
        third.connect_unix(sock)
        break
    except nbd.Error:
        time.sleep(0.1)
else:
    sys.exit("no client served after the first one left")
assert third.pread(4096, len(data) - 4096) == data[-4096:], "third client: wrong data"
third.shutdown()
PYEOF
grep -q "no fetcher could be started" "$NBDCURLD_LOG" ||
    fail "the refusal was not logged: $(cat "$NBDCURLD_LOG")"
kill -0 "$NBDCURLD_PID" || fail "nbdcurld stopped"
echo ok
