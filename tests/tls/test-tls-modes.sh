#!/usr/bin/env bash
# --tls=require refuses a clear-text client; --tls=on (and --tls on) serves
# clear-text and TLS clients alike; --tls=off (the default) serves clear
# text and refuses a client that insists on TLS.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdinfo nbdcopy
make_tls_keys

make_image disk.img 1M
url=file://$tmp/disk.img

start_nbdcurld --tls=require --tls-certificates "$PKI" -r "$url"
expect_refused "clear text, --tls=require" nbdinfo --size "$NBD_URI"
expect_refused "clear text copy, --tls=require" nbdcopy "$NBD_URI" out.img
expect_works "TLS, --tls=require" nbdinfo --size "$(x509_uri "$PKI/client1")"
stop_nbdcurld

for mode in --tls=on "--tls on"; do
    # shellcheck disable=SC2086 # "--tls on" is two words on purpose
    start_nbdcurld $mode --tls-certificates "$PKI" -r "$url"
    expect_works "clear text, $mode" nbdinfo --json "$NBD_URI"
    grep -q '"TLS": false' "$tmp/client.out" ||
        fail "$mode: clear-text client reports TLS: $(cat "$tmp/client.out")"
    rm -f out.img
    expect_works "clear text copy, $mode" nbdcopy "$NBD_URI" out.img
    same_bytes out.img disk.img "clear text copy, $mode"
    expect_tls_info "TLS, $mode" "$(x509_uri "$PKI/client1")"
    stop_nbdcurld
done

for mode in --tls=off ""; do
    # shellcheck disable=SC2086
    start_nbdcurld $mode -r "$url"
    expect_works "clear text, ${mode:-no --tls}" nbdinfo --size "$NBD_URI"
    expect_refused "TLS client, ${mode:-no --tls}" \
        nbdinfo --size "$(x509_uri "$PKI/client1")"
    stop_nbdcurld
done
check_no_leftovers
