#!/usr/bin/env bash
# With --run, -s or socket activation every network export is opened once
# before anything is served: an export that cannot be opened stops
# nbdcurld at once, with the reason on standard error, and --run's command
# never runs.  A daemon (none of the three) starts regardless: its web
# servers may come up later.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdinfo
requires_python_nbd

serve_image 1M
mkdir -p www
free=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
: > "$tmp/web-b.port"
$PY "$srcdir/lib/web-server.py" --log "$tmp/web-b.log" "$tmp/www" > "$tmp/web-b.port" &
kill_on_exit $!
b_port=$(port_from "$tmp/web-b.port" "web server B")

# refused URL EXPECTED...: --run's command must not run, nbdcurld exits 1,
# and its standard error holds each EXPECTED string.
refused() {
    local what=$1 s
    shift
    echo "== $what"
    rm -f ran
    set +e
    timeout 60 "$NBDCURLD" -r "$@" --run 'touch ran' 2> err.txt
    status=$?
    set -e
    cat err.txt
    [ "$status" -eq 1 ] || fail "$what: exit status $status, not 1"
    [ ! -e ran ] || fail "$what: --run's command ran"
    grep -q -- "--run's command was not started" err.txt ||
        fail "$what: no word that the command was not started"
}

refused "404" "$WEB_URL/good/missing.img"
grep -q 'not found (HTTP 404)' err.txt || fail "404: the reason is missing"
# It stops nbdcurld: an error, not a warning.
grep -q 'nbdcurld: error: export "" cannot be opened: not found (HTTP 404)' err.txt ||
    fail "404: not reported as an error"
grep -q 'warning: export "" cannot be opened' err.txt && fail "404: reported as a warning"

refused "connection refused" "http://127.0.0.1:$free/good/disk.img"
grep -q 'Connection refused' err.txt || fail "connection refused: the reason is missing"

refused "HTTP 500" "$WEB_URL/status-500/disk.img"
grep -q 'HTTP 500' err.txt || fail "500: the reason is missing"

refused "refused redirect" "$WEB_URL/redirect-to/$b_port/disk.img"
grep -q -- "add --allow-port $b_port" err.txt || fail "redirect: the reason is missing"

refused "failing header script" "$WEB_URL/good/disk.img" header-script='echo oops >&2; exit 3'
grep -q 'header-script failed: exit status 3' err.txt || fail "header script: its status is missing"
grep -q 'header-script: oops' err.txt || fail "header script: its standard error is missing"

# One bad export among good ones: named.
refused "one of three" --export "a=$WEB_URL/good/disk.img" \
    --export "b=$WEB_URL/good/missing.img" --export "c=$WEB_URL/good/disk.img"
grep -q 'export "b" cannot be opened' err.txt || fail "the bad export is not named"
if grep -q 'export "[ac]" cannot be opened' err.txt; then
    fail "a good export was called bad"
fi

# Good exports: the command runs, and sees the export.
echo "== good"
size=$("$NBDCURLD" -r --export "a=$WEB_URL/good/disk.img" \
    --export "c=$WEB_URL/redirect/disk.img" header-script='echo "X-Nbdcurld-Test: s"' \
    --run 'nbdinfo --size "$uri"')
[ "$size" -eq 1048576 ] || fail "good: size $size"

# Socket activation and -s.
echo "== socket activation"
if nbdinfo --size -- [ "$NBDCURLD" -r "$WEB_URL/good/missing.img" ] 2> err.txt; then
    fail "socket activation: a missing export was served"
fi
grep -q 'not found (HTTP 404)' err.txt || fail "socket activation: no reason: $(cat err.txt)"
grep -q 'not serving' err.txt || fail "socket activation: no word that it stopped: $(cat err.txt)"
echo "== -s"
# A client on stdin/stdout (libnbd's connect_command): it is refused, and
# nbdcurld says why on its standard error.
if $PY - "$NBDCURLD" "$WEB_URL/good/missing.img" 2> err.txt <<'PYEOF2'
import sys
import nbd
h = nbd.NBD()
try:
    h.connect_command([sys.argv[1], "-r", "-s", sys.argv[2]])
except nbd.Error:
    sys.exit(1)
sys.exit(0)
PYEOF2
then
    fail "-s: a missing export was served"
fi
grep -q 'not found (HTTP 404)' err.txt || fail "-s: no reason: $(cat err.txt)"
size=$(nbdinfo --size -- [ "$NBDCURLD" -r "$WEB_URL/good/disk.img" ])
[ "$size" -eq 1048576 ] || fail "socket activation: size $size"

# A daemon in the foreground starts with a missing export; each client
# that asks for it is told why (libnbd shows the server's message in its
# debug output), and the reason is logged once, not once per client.
echo "== daemon"
start_nbdcurld -r --export "gone=$WEB_URL/good/missing.img" --export "ok=$WEB_URL/good/disk.img"
[ "$(nbdinfo --size "$(nbd_uri ok)")" -eq 1048576 ] || fail "daemon: export ok"
for i in 1 2 3; do
    if LIBNBD_DEBUG=1 nbdinfo --size "$(nbd_uri gone)" > /dev/null 2> client.txt; then
        fail "daemon: the missing export was served"
    fi
    grep -q 'server error message: the export could not be opened: not found (HTTP 404)' \
        client.txt || fail "daemon: the client was not told why: $(grep -i error client.txt)"
done
sleep 0.2
cat "$NBDCURLD_LOG"
n=$(grep -c "export \"gone\" cannot be opened: $WEB_URL/good/missing.img: not found (HTTP 404)" \
    "$NBDCURLD_LOG" || true)
[ "$n" -eq 1 ] || fail "daemon: the reason was logged $n times for 3 clients, not once"
stop_nbdcurld

# Fetchers that failed to open exit on their own: give them a moment.
for i in $(seq 50); do
    [ -z "$(leftover_processes)" ] && break
    sleep 0.1
done
[ -z "$(leftover_processes)" ] || fail "processes left: $(leftover_processes)"
