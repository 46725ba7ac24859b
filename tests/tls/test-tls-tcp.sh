#!/usr/bin/env bash
# NBD TLS over TCP (nbds://): nbdinfo and nbdcopy with X.509 (the client
# checks the server's certificate: name localhost and address 127.0.0.1
# both match it, a client that trusts another CA refuses the server) and
# with PSK.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdinfo nbdcopy
make_tls_keys

make_image disk.img 2500007
start_nbdcurld_tcp --tls=require --tls-certificates "$PKI" -r "file://$tmp/disk.img"

uri=$(x509_tcp_uri "$PKI/client1")
expect_tls_info "nbdinfo nbds://127.0.0.1" "$uri"
expect_works "nbdinfo nbds://localhost" \
    nbdinfo --size "$(x509_tcp_uri "$PKI/client1" "" localhost)"
expect_works "nbdcopy nbds://" nbdcopy "$uri" out.img
same_bytes out.img disk.img "nbdcopy over TCP and TLS"

# The client checks the server: signed by a CA it does not trust -> no.
expect_refused "client trusting another CA" \
    nbdinfo --size "$(x509_tcp_uri "$PKI/otherca")"

# Clear text over TCP: refused.
expect_refused "clear text over TCP" nbdinfo --size "nbd://127.0.0.1:$NBD_PORT/"
stop_nbdcurld

start_nbdcurld_tcp --tls=require --tls-psk "$PKI/keys.psk" -r "file://$tmp/disk.img"
rm -f out.img
uri=$(psk_tcp_uri bob "$PKI/keys.psk")
expect_works "nbdinfo nbds:// PSK" nbdinfo --size "$uri"
expect_works "nbdcopy nbds:// PSK" nbdcopy "$uri" out.img
same_bytes out.img disk.img "nbdcopy over TCP and PSK"
expect_refused "wrong PSK over TCP" \
    nbdinfo --size "$(psk_tcp_uri bob "$PKI/wrongpsk/keys.psk")"

stop_nbdcurld
check_no_leftovers
