#!/usr/bin/env bash
# Address and identity rules together: an export with both kinds needs a
# match of each; rules before the first --export (of either kind) apply to
# every export; the single URL's export takes global rules too.  PSK on a
# Unix socket.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdinfo
make_tls_keys

make_image a.img 100001
make_image b.img 200002
psk=(--tls=require --tls-psk "$PKI/keys.psk")
as() { psk_uri "$1" "$PKI/keys.psk" "${2:-}"; }
size_is() {
    [ "$(cat "$tmp/client.out")" = "$1" ] || fail "$2: size $(cat "$tmp/client.out")"
}

# Address rule that matches (unix) and identity rule: only alice.
# Address rule that does not match (10.0.0.0/8) and identity: nobody.
start_nbdcurld "${psk[@]}" \
    --export-ro "a=file://$tmp/a.img" --allow unix --allow psk:alice \
    --export-ro "b=file://$tmp/b.img" --allow 10.0.0.0/8 --allow psk:alice
expect_list "alice" "$(as alice)" "a "
expect_list "bob" "$(as bob)" ""
expect_works "alice, a" nbdinfo --size "$(as alice a)"
size_is 100001 "alice, a"
expect_refused "bob, a (identity)" nbdinfo --size "$(as bob a)"
expect_refused "alice, b (address)" nbdinfo --size "$(as alice b)"
expect_refused "bob, b" nbdinfo --size "$(as bob b)"
stop_nbdcurld

# A global identity rule and a global address rule: both apply to both
# exports.
start_nbdcurld "${psk[@]}" --allow psk:bob --allow unix \
    --export-ro "a=file://$tmp/a.img" --export-ro "b=file://$tmp/b.img"
expect_list "global psk:bob: bob" "$(as bob)" "a b "
expect_list "global psk:bob: alice" "$(as alice)" ""
expect_works "global psk:bob, bob, b" nbdinfo --size "$(as bob b)"
size_is 200002 "global psk:bob, bob, b"
expect_refused "global psk:bob, alice, a" nbdinfo --size "$(as alice a)"
expect_refused "global psk:bob, alice, b" nbdinfo --size "$(as alice b)"
stop_nbdcurld

# A global address rule that does not match, and an identity rule: the
# rightful user is refused too.
start_nbdcurld "${psk[@]}" --allow 127.0.0.1 \
    --export-ro "a=file://$tmp/a.img" --allow psk:alice
expect_refused "global 127.0.0.1, alice on a Unix socket" \
    nbdinfo --size "$(as alice a)"
stop_nbdcurld

# The single URL's export.
start_nbdcurld "${psk[@]}" --allow psk:alice -r "file://$tmp/a.img"
expect_works "single export, alice" nbdinfo --size "$(as alice)"
size_is 100001 "single export, alice"
expect_refused "single export, bob" nbdinfo --size "$(as bob)"
stop_nbdcurld
check_no_leftovers
