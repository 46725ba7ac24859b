#!/usr/bin/env bash
# --tls-verify-peer: only clients with a certificate signed by the CA get
# in: client1 does; no certificate, another CA's, an expired one do not;
# client2, revoked in ca-crl.pem, does not while the CRL is there and does
# without it (so the CRL is what refuses it); a certificate issued for TLS
# servers only does not, one without a stated purpose does.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdinfo nbdcopy
make_tls_keys

make_image disk.img 1M
start_nbdcurld --tls=require --tls-verify-peer --tls-certificates "$PKI" \
    -r "file://$tmp/disk.img"

expect_works "client1" nbdinfo --size "$(x509_uri "$PKI/client1")"
expect_refused "no client certificate" nbdinfo --size "$(x509_uri "$PKI/noclient")"
expect_refused "client certificate from another CA" \
    nbdinfo --size "$(x509_uri "$PKI/wrongca")"
expect_refused "expired client certificate" \
    nbdinfo --size "$(x509_uri "$PKI/expired")"
expect_refused "revoked client2 (ca-crl.pem)" \
    nbdinfo --size "$(x509_uri "$PKI/client2")"
# The certificate's purpose: one issued for TLS servers only (a web
# server's) is no client certificate, whatever it names; one that states
# no purpose, or both, is.
expect_refused "certificate for TLS servers only" \
    nbdinfo --size "$(x509_uri "$PKI/serveronly")"
grep -q 'client certificate.*not.*TLS client' "$NBDCURLD_LOG" ||
    fail "the refusal of a server-only certificate is not logged: $(tail -5 "$NBDCURLD_LOG")"
expect_works "certificate without a stated purpose" \
    nbdinfo --size "$(x509_uri "$PKI/nopurpose")"
expect_works "certificate for TLS servers and clients" \
    nbdinfo --size "$(x509_uri "$PKI/bothpurposes")"
expect_works "client1 copies" nbdcopy "$(x509_uri "$PKI/client1")" out.img
same_bytes out.img disk.img "client1 copy"
stop_nbdcurld

# Control: the same, without ca-crl.pem.
start_nbdcurld --tls=require --tls-verify-peer --tls-certificates "$PKI/nocrl" \
    -r "file://$tmp/disk.img"
expect_works "client2 without a CRL" nbdinfo --size "$(x509_uri "$PKI/client2")"
expect_refused "no client certificate (no CRL)" \
    nbdinfo --size "$(x509_uri "$PKI/noclient")"
stop_nbdcurld

# Without --tls-verify-peer a client with no certificate gets in.
start_nbdcurld --tls=require --tls-certificates "$PKI" -r "file://$tmp/disk.img"
expect_works "no client certificate, no --tls-verify-peer" \
    nbdinfo --size "$(x509_uri "$PKI/noclient")"
stop_nbdcurld
check_no_leftovers
