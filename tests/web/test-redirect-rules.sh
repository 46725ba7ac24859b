#!/usr/bin/env bash
# Where a redirect may lead (fetcher-connect.c), besides --allow-port
# (test-redirect-port.sh):
#   - from a URL on another host to an address of this machine (loopback,
#     link-local): refused, with a message naming the address and
#     --allow-local-redirects, which allows it;
#   - from a loopback URL to another loopback address: followed;
#   - to port 80 (an https URL's 443 likewise) without --allow-port:
#     followed, as real sites need (run as root only, with port 80 free).
# The "other host" is this machine's own non-loopback address: nbdcurld
# judges the address a connection goes to, so that is enough.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy ip

addr=$(ip -4 -o addr show scope global | awk '{ sub("/.*", "", $4); print $4; exit }')
if [ -z "$addr" ]; then
    echo "$0: SKIP: no IPv4 address besides loopback" >&2
    exit 77
fi
echo "this machine's address: $addr"

www_image 2M
WEB_LOG=$tmp/web.log
: > "$WEB_LOG"
$PY "$srcdir/lib/web-server.py" --bind 0.0.0.0 --log "$WEB_LOG" www > web.port &
kill_on_exit $!
port=$(port_from web.port "the web server on 0.0.0.0")

copy_ok() {
    rm -f "$1.img"
    nbdcopy "$(nbd_uri "$1")" "$1.img" || fail "$1: copy failed: $(tail -n 3 "$NBDCURLD_LOG")"
    [ "$(md5_of "$1.img")" = "$sum" ] || fail "$1: copy differs"
}

start_nbdcurld -r \
    --export "remote=http://$addr:$port/good/disk.img" \
    --export "remote-to-local=http://$addr:$port/redirect-to/$port/disk.img" \
    --export "local-to-local=http://127.0.0.1:$port/redirect-to/127.0.0.2:$port/disk.img"

echo "== remote-to-local: refused"
rm -f refused.img
expect_fail nbdcopy "$(nbd_uri remote-to-local)" refused.img
[ ! -s refused.img ] || fail "remote-to-local: data was copied"
sleep 0.2
grep -F "a redirect to http://127.0.0.1:$port/good/disk.img was refused: it leads to 127.0.0.1" \
    "$NBDCURLD_LOG" | grep -q -- "add --allow-local-redirects" ||
    fail "the log does not name the address and --allow-local-redirects: $(cat "$NBDCURLD_LOG")"
# The redirect was answered, but no request came over loopback for the file.
grep -q "/redirect-to/$port/disk.img .*status=302" "$WEB_LOG" ||
    fail "the redirect was never asked for: $(cat "$WEB_LOG")"
if grep -q ' /good/disk.img ' "$WEB_LOG"; then
    fail "a request reached the redirect's target: $(cat "$WEB_LOG")"
fi

echo "== remote and local-to-local: followed"
copy_ok remote
copy_ok local-to-local
stop_nbdcurld

echo "== --allow-local-redirects"
start_nbdcurld -r --allow-local-redirects \
    --export "remote-to-local=http://$addr:$port/redirect-to/$port/disk.img"
copy_ok remote-to-local
stop_nbdcurld

# Port 80 is allowed without --allow-port.
if [ "$(id -u)" -eq 0 ] && ! ss -Hltn 'sport = :80' | grep -q .; then
    echo "== a redirect to port 80"
    $PY "$srcdir/lib/web-server.py" --bind 127.0.0.1 --port 80 --log "$tmp/web80.log" www \
        > web80.port &
    kill_on_exit $!
    port_from web80.port "the web server on port 80" > /dev/null
    start_nbdcurld -r --export "to-80=http://127.0.0.1:$port/redirect-to/80/disk.img"
    copy_ok to-80
    grep -q ' /good/disk.img ' "$tmp/web80.log" || fail "to-80: port 80 saw no request"
    stop_nbdcurld
else
    echo "(not root, or port 80 is taken: the port 80 case is left out)"
fi

left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
