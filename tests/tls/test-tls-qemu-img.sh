#!/usr/bin/env bash
# qemu-img over NBD TLS: tls-creds-x509 (endpoint=client, the client's
# certificate directory; over a Unix socket qemu needs tls-hostname to
# check the server's certificate) and tls-creds-psk (dir holding keys.psk,
# username): info and a bit-for-bit convert; a wrong PSK and a clear-text
# qemu-img are refused.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires qemu-img
make_tls_keys

make_image disk.img 3145728
nbd_opts() {
    echo "driver=nbd,server.type=unix,server.path=$NBD_SOCK,tls-creds=tls0${1:-}"
}

start_nbdcurld --tls=require --tls-verify-peer --tls-certificates "$PKI" \
    -r "file://$tmp/disk.img"
x509=tls-creds-x509,id=tls0,dir=$PKI/client1,endpoint=client
expect_works "qemu-img info, x509" qemu-img info --output=json --object "$x509" \
    --image-opts "$(nbd_opts ,tls-hostname=localhost)"
grep -q '"virtual-size": 3145728' "$tmp/client.out" ||
    fail "qemu-img info: $(cat "$tmp/client.out")"
expect_works "qemu-img convert, x509" qemu-img convert --object "$x509" \
    --image-opts "$(nbd_opts ,tls-hostname=localhost)" -O raw out.img
same_bytes out.img disk.img "qemu-img convert over TLS (x509)"
# qemu checks the server's name: one the certificate does not have fails.
expect_refused "qemu-img, wrong tls-hostname" qemu-img info --object "$x509" \
    --image-opts "$(nbd_opts ,tls-hostname=not-the-server.example)"
# --tls-verify-peer: qemu without a client certificate is refused.
expect_refused "qemu-img, no client certificate" qemu-img info \
    --object "tls-creds-x509,id=tls0,dir=$PKI/noclient,endpoint=client" \
    --image-opts "$(nbd_opts ,tls-hostname=localhost)"
expect_refused "qemu-img, clear text" qemu-img info \
    --image-opts "driver=nbd,server.type=unix,server.path=$NBD_SOCK"
stop_nbdcurld

start_nbdcurld --tls=require --tls-psk "$PKI/keys.psk" -r "file://$tmp/disk.img"
rm -f out.img
psk=tls-creds-psk,id=tls0,dir=$PKI,username=alice,endpoint=client
expect_works "qemu-img convert, psk" qemu-img convert --object "$psk" \
    --image-opts "$(nbd_opts)" -O raw out.img
same_bytes out.img disk.img "qemu-img convert over TLS (psk)"
expect_refused "qemu-img, wrong psk" qemu-img info \
    --object "tls-creds-psk,id=tls0,dir=$PKI/wrongpsk,username=alice,endpoint=client" \
    --image-opts "$(nbd_opts)"
stop_nbdcurld
check_no_leftovers
