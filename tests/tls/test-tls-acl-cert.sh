#!/usr/bin/env bash
# --allow cert:DN (the client certificate's whole subject, RFC 4514) and
# --allow san:NAME (a DNS name or e-mail address in its subjectAltName) per
# export, under --tls-verify-peer: client1 and client2 each list and open
# their own exports only; a part of a DN is not the DN.  Without
# --tls-verify-peer an unverified certificate naming client1 (another CA's,
# same subject and SAN) is no identity at all.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdinfo nbdcopy
make_tls_keys

names=(bycn bydns bymail byc2 cnonly open)
for e in "${names[@]}"; do
    make_image "$e.img" "$(( 100000 + ${#e} * 4096 ))"
done
exports=(
    --export-ro "bycn=file://$tmp/bycn.img" --allow "cert:CN=client1,O=nbdcurld-test"
    --export-ro "bydns=file://$tmp/bydns.img" --allow san:client1.nbdcurld.test
    --export-ro "bymail=file://$tmp/bymail.img" --allow san:client1@nbdcurld.test
    --export-ro "byc2=file://$tmp/byc2.img" --allow san:client2.nbdcurld.test
        --allow "cert:CN=nobody,O=nbdcurld-test"
    --export-ro "cnonly=file://$tmp/cnonly.img" --allow cert:CN=client1
    --export-ro "open=file://$tmp/open.img"
)

# check CLIENT ALLOWED...: with CLIENT's certificate, exactly ALLOWED are
# listed and open.
check() {
    local who=$1 e want
    shift
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    expect_list "$who" "$(x509_uri "$PKI/$who")" "$want"
    for e in "${names[@]}"; do
        if [[ " $want " = *" $e "* ]]; then
            rm -f out.img
            expect_works "$who: $e" nbdcopy "$(x509_uri "$PKI/$who" "$e")" out.img
            same_bytes out.img "$e.img" "$who: copy of $e"
        else
            expect_refused "$who: $e" nbdinfo --size "$(x509_uri "$PKI/$who" "$e")"
        fi
    done
}

# No CRL here: client2 is a valid client.
start_nbdcurld --tls=require --tls-verify-peer --tls-certificates "$PKI/nocrl" \
    "${exports[@]}"
check client1 bycn bydns bymail open
check client2 byc2 open
stop_nbdcurld

# Without --tls-verify-peer no certificate is checked, so none names
# anyone: nbdcurld refuses certificate rules then, at start.
if "$NBDCURLD" -f --unix "$tmp/refused.sock" --tls=require \
        --tls-certificates "$PKI/nocrl" "${exports[@]}" 2> refused.err; then
    fail "started with certificate rules and without --tls-verify-peer"
fi
grep -q -- "--tls-verify-peer" refused.err ||
    fail "the refusal does not name --tls-verify-peer: $(cat refused.err)"
# Under it, a certificate from another CA that claims client1's subject
# and names opens nothing.
start_nbdcurld --tls=require --tls-verify-peer --tls-certificates "$PKI/nocrl" \
    "${exports[@]}"
for e in bycn bydns bymail open; do
    expect_refused "unverified certificate: $e" \
        nbdinfo --size "$(x509_uri "$PKI/wrongca" "$e")"
    # Nor does one of the right CA, subject and names, issued for TLS
    # servers only (a web server's certificate is no client's).
    expect_refused "server-only certificate: $e" \
        nbdinfo --size "$(x509_uri "$PKI/serveronly" "$e")"
done
stop_nbdcurld
check_no_leftovers
