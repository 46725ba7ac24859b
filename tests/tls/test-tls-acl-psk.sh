#!/usr/bin/env bash
# --allow psk:USER after an --export: that export is alice's only.  alice
# lists and opens both exports; bob lists only b, opens b, and cannot open
# a (nbdinfo and nbdcopy fail: NBD_REP_ERR_POLICY).
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdinfo nbdcopy
make_tls_keys

make_image a.img 1000001
make_image b.img 2000002
start_nbdcurld --tls=require --tls-psk "$PKI/keys.psk" \
    --export-ro "a=file://$tmp/a.img" --allow psk:alice \
    --export-ro "b=file://$tmp/b.img"

alice() { psk_uri alice "$PKI/keys.psk" "$1"; }
bob() { psk_uri bob "$PKI/keys.psk" "$1"; }

expect_list "alice" "$(alice "")" "a b "
expect_list "bob" "$(bob "")" "b "

expect_works "alice opens a" nbdcopy "$(alice a)" a.out
same_bytes a.out a.img "alice's copy of a"
expect_works "alice opens b" nbdinfo --size "$(alice b)"
[ "$(cat "$tmp/client.out")" = 2000002 ] || fail "alice, b: $(cat "$tmp/client.out")"
expect_works "bob opens b" nbdcopy "$(bob b)" b.out
same_bytes b.out b.img "bob's copy of b"

expect_refused "bob opens a (nbdinfo)" nbdinfo --size "$(bob a)"
rm -f a.out
expect_refused "bob opens a (nbdcopy)" nbdcopy "$(bob a)" a.out
if [ -s a.out ] && cmp -s a.out a.img; then
    fail "bob got a's bytes"
fi
# The refusal is not the end of the server: alice still gets a.
expect_works "alice opens a again" nbdinfo --size "$(alice a)"

stop_nbdcurld
check_no_leftovers
