#!/usr/bin/env bash
# PSK: a client with the wrong key for a known user, or a user the server's
# file does not have, gets nothing; the right key still works after them.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdinfo
make_tls_keys

make_image disk.img 1M
start_nbdcurld --tls=require --tls-psk "$PKI/keys.psk" -r "file://$tmp/disk.img"

expect_works "alice, right key" nbdinfo --size "$(psk_uri alice "$PKI/keys.psk")"
expect_refused "alice, wrong key" \
    nbdinfo --size "$(psk_uri alice "$PKI/wrongpsk/keys.psk")"
expect_refused "bob, wrong key" \
    nbdinfo --size "$(psk_uri bob "$PKI/wrongpsk/keys.psk")"
expect_refused "carol, unknown user" \
    nbdinfo --size "$(psk_uri carol "$PKI/unknownpsk/keys.psk")"
# No key at all: a clear-text client.
expect_refused "clear text" nbdinfo --size "$NBD_URI"
expect_works "alice again" nbdinfo --size "$(psk_uri alice "$PKI/keys.psk")"
[ "$(cat "$tmp/client.out")" = 1048576 ] || fail "size $(cat "$tmp/client.out")"

stop_nbdcurld
check_no_leftovers
