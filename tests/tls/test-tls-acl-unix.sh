#!/usr/bin/env bash
# --allow unix: clients on a Unix socket.  On a Unix socket an export with
# only address rules is refused, one with "unix" among them served; rules
# before the first --export apply to every export and to a single URL's.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdinfo

make_image a.img 100001
make_image b.img 200002
make_image c.img 300003

start_nbdcurld --export-ro "a=file://$tmp/a.img" --allow unix \
    --export-ro "b=file://$tmp/b.img" --allow 127.0.0.1 \
    --export-ro "c=file://$tmp/c.img" --allow 127.0.0.1 --allow unix
expect_list "unix client" "$NBD_URI" "a c "
expect_works "a" nbdinfo --size "$(nbd_uri a)"
[ "$(cat "$tmp/client.out")" = 100001 ] || fail "a: $(cat "$tmp/client.out")"
expect_works "c" nbdinfo --size "$(nbd_uri c)"
expect_refused "b (address rules only)" nbdinfo --size "$(nbd_uri b)"
stop_nbdcurld

# Global rules: every export.
start_nbdcurld --allow 127.0.0.1 --export-ro "a=file://$tmp/a.img" \
    --export-ro "b=file://$tmp/b.img"
expect_list "global 127.0.0.1 on a Unix socket" "$NBD_URI" ""
expect_refused "global rule, a" nbdinfo --size "$(nbd_uri a)"
expect_refused "global rule, b" nbdinfo --size "$(nbd_uri b)"
stop_nbdcurld

start_nbdcurld --allow unix --export-ro "a=file://$tmp/a.img" \
    --export-ro "b=file://$tmp/b.img"
expect_works "global unix, a" nbdinfo --size "$(nbd_uri a)"
expect_works "global unix, b" nbdinfo --size "$(nbd_uri b)"
stop_nbdcurld

# The single URL's export.
start_nbdcurld --allow 10.0.0.0/8 -r "file://$tmp/a.img"
expect_refused "single export, 10.0.0.0/8" nbdinfo --size "$NBD_URI"
stop_nbdcurld
start_nbdcurld --allow unix -r "file://$tmp/a.img"
expect_works "single export, unix" nbdinfo --size "$NBD_URI"
stop_nbdcurld
check_no_leftovers
