#!/usr/bin/env bash
# NBD TLS with X.509 certificates on a Unix socket (--tls=require
# --tls-certificates): nbdinfo sees the export over TLS, nbdcopy copies it
# bit for bit, with the client's certificate directory as tls-certificates=.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdinfo nbdcopy
make_tls_keys

make_image disk.img 3000001
start_nbdcurld --tls=require --tls-certificates "$PKI" -r "file://$tmp/disk.img"

uri=$(x509_uri "$PKI/client1")
expect_tls_info "nbdinfo over TLS" "$uri"
grep -q '"export-size": 3000001' "$tmp/client.out" ||
    fail "wrong size: $(cat "$tmp/client.out")"

# A client with no certificate of its own is fine without --tls-verify-peer.
expect_works "nbdinfo, no client certificate" \
    nbdinfo --size "$(x509_uri "$PKI/noclient")"

expect_works "nbdcopy over TLS" nbdcopy "$uri" out.img
same_bytes out.img disk.img "nbdcopy over TLS"

rm -f out.img
expect_works "nbdcopy over TLS, one connection" \
    nbdcopy --connections=1 --request-size=65536 "$uri" out.img
same_bytes out.img disk.img "nbdcopy over TLS, one connection"

stop_nbdcurld
check_no_leftovers
