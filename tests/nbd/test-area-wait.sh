#!/usr/bin/env bash
# Requests that wait for room in the data area: with --client-memory=256K
# (four chunks) nearly every read of a pipelining client waits for earlier
# replies to be sent.  A
# wait that nothing ends (a client that has sent all its requests sends
# nothing more) is a stall: every copy here has a timeout, and must be
# byte-exact.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy

mkdir www
make_image www/disk.img 48M
start_nginx "$tmp/www"
image_md5=$(md5_of www/disk.img)

# copy_with LABEL URL NBDCOPY-OPTIONS...: one copy to out.img, in time.
copy_with() {
    local label=$1 url=$2 rc=0
    shift 2
    rm -f out.img
    timeout -k 5 60 \
        "$NBDCURLD" --client-memory=256K -r "$url" --run "nbdcopy $* \"\$uri\" out.img" || rc=$?
    [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || fail "$label: stalled (no progress in 60 s)"
    [ "$rc" -eq 0 ] || fail "$label: nbdcopy failed ($rc)"
    [ "$(md5_of out.img)" = "$image_md5" ] || fail "$label: copy differs"
}

for round in 1 2 3; do
    copy_with "http, 4 connections, round $round" "$NGINX_URL/disk.img" \
        --connections=4 --threads=4
done
copy_with "http, 1 connection, 64 requests" "$NGINX_URL/disk.img" \
    --connections=1 --requests=64
# Requests larger than the budget go one at a time.
copy_with "http, 1 MiB requests" "$NGINX_URL/disk.img" \
    --connections=2 --request-size=1048576
copy_with "file, 4 connections" "file://$tmp/www/disk.img" \
    --connections=4 --threads=4
