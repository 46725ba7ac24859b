#!/usr/bin/env bash
# Multi-conn is advertised iff every export is read-only.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdinfo

make_image disk.img 1M
url=file://$tmp/disk.img

# multi_conn ARGS...: "true" or "false", as nbdinfo sees the export of
# nbdcurld ARGS (started with --run).
multi_conn() {
    "$NBDCURLD" "$@" --run 'nbdinfo "$uri"' > info.txt
    sed -n 's/^[[:space:]]*can_multi_conn: //p' info.txt
}

[ "$(multi_conn -r "$url")" = true ] || fail "-r file: no multi-conn"
[ "$(multi_conn "$url")" = false ] || fail "writable file: multi-conn"

mkdir www
cp disk.img www/
start_nginx "$tmp/www"
[ "$(multi_conn "$NGINX_URL/disk.img")" = true ] || fail "http (read-only): no multi-conn"
[ "$(multi_conn --export-ro a="$url" --export b="$NGINX_URL/disk.img")" = true ] ||
    fail "read-only file + http: no multi-conn"

# One writable export: no export may offer multi-conn.
start_nbdcurld --export a="$url" --export b="$NGINX_URL/disk.img"
for e in a b; do
    nbdinfo "$(nbd_uri "$e")" > info.txt
    grep -q 'can_multi_conn: false' info.txt || fail "export $e offers multi-conn"
done
nbdinfo "$(nbd_uri a)" | grep -q 'is_read_only: false' || fail "export a is read-only"
nbdinfo "$(nbd_uri b)" | grep -q 'is_read_only: true' || fail "http export b is writable"
nbdinfo --list "$NBD_URI" > list.txt
grep -q 'export="a"' list.txt && grep -q 'export="b"' list.txt ||
    fail "nbdinfo --list does not show both exports: $(cat list.txt)"
