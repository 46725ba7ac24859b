#!/usr/bin/env bash
# NBD TLS with pre-shared keys on a Unix socket (--tls=require --tls-psk):
# both users of the file (alice, bob) get the export with nbdinfo and copy
# it bit for bit with nbdcopy.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdinfo nbdcopy
make_tls_keys

make_image disk.img 2000003
start_nbdcurld --tls=require --tls-psk "$PKI/keys.psk" -r "file://$tmp/disk.img"

for user in alice bob; do
    uri=$(psk_uri "$user" "$PKI/keys.psk")
    expect_tls_info "$user: nbdinfo" "$uri"
    grep -q '"export-size": 2000003' "$tmp/client.out" ||
        fail "$user: wrong size: $(cat "$tmp/client.out")"
    rm -f out.img
    expect_works "$user: nbdcopy" nbdcopy "$uri" out.img
    same_bytes out.img disk.img "$user: nbdcopy with PSK"
done

stop_nbdcurld

# --tls-verify-peer is moot for PSK: accepted, as nbdkit does (libnbd's
# PSK tests start servers that way), with a note in the log.
start_nbdcurld --tls=require --tls-psk "$PKI/keys.psk" --tls-verify-peer \
    -r "file://$tmp/disk.img"
expect_works "PSK with --tls-verify-peer: nbdinfo" \
    nbdinfo --json "$(psk_uri alice "$PKI/keys.psk")"
grep -q '"export-size": 2000003' "$tmp/client.out" ||
    fail "PSK with --tls-verify-peer: wrong size: $(cat "$tmp/client.out")"
grep -q 'tls-verify-peer has no effect with --tls-psk alone' "$NBDCURLD_LOG" ||
    fail "no note about --tls-verify-peer with PSK: $(cat "$NBDCURLD_LOG")"
stop_nbdcurld
check_no_leftovers
