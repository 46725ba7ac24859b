#!/usr/bin/env bash
# make-tls-keys.sh [--key-type ecdsa|rsa|ed25519] DIR: make, with GnuTLS's certtool
# and psktool, every key and certificate the TLS tests use, in DIR (which
# is created).  Nothing here is ever committed: each test has its own, in
# its private directory, made in about a second or copied from the
# suite's cache (NBDCURLD_TLS_KEYS_CACHE, below) (ECDSA P-256 keys; RSA
# 2048 for the server key with --key-type rsa, since GnuTLS handles RSA
# keys held outside the process apart from EC ones; Ed25519 with
# --key-type ed25519, whose signatures take the whole input).
#
# Server side, the layout --tls-certificates reads (nbdkit's and qemu's):
#   DIR/ca-cert.pem DIR/ca-key.pem        the test CA
#   DIR/server-cert.pem DIR/server-key.pem
#       CN localhost; subjectAltName DNS localhost, IP 127.0.0.1 and ::1
#   DIR/ca-crl.pem                        revokes client2 only
#   DIR/nocrl/                            the same server, no CRL
#   DIR/keys.psk                          PSK users alice and bob
#   DIR/server-key.der                    the server key as DER (PKCS#8),
#                                         when openssl is there
#   DIR/other-key.pem                     an unrelated key of the same type
#                                         (what is common to every such key
#                                         is not secret)
#
# Client side, the layout libnbd's tls-certificates= and qemu's
# tls-creds-x509 (endpoint=client) read: each has ca-cert.pem (the test
# CA), client-cert.pem and client-key.pem:
#   DIR/client1/   CN=client1,O=nbdcurld-test; SAN DNS client1.nbdcurld.test
#                  and e-mail client1@nbdcurld.test
#   DIR/client2/   CN=client2,O=nbdcurld-test (revoked in DIR/ca-crl.pem)
#   DIR/wrongca/   CN=client1,O=nbdcurld-test, signed by another CA
#   DIR/expired/   CN=client3,O=nbdcurld-test, expired in 2020
#   DIR/serveronly/ CN=client1,O=nbdcurld-test, the SANs of client1, but
#                  issued for TLS servers only (extendedKeyUsage serverAuth,
#                  as a web server's certificate is)
#   DIR/nopurpose/ CN=client4,O=nbdcurld-test, no extendedKeyUsage at all
#                  (good for any purpose)
#   DIR/bothpurposes/ CN=client5,O=nbdcurld-test, serverAuth and clientAuth
#   DIR/noclient/  ca-cert.pem only: trusts the server, has no certificate
#   DIR/otherca/   ca-cert.pem of the other CA only: does not trust the
#                  server
# and for PSK (qemu's tls-creds-psk reads DIR/keys.psk):
#   DIR/keys.psk              the server's own file: alice, bob
#   DIR/wrongpsk/keys.psk     alice and bob with other keys
#   DIR/unknownpsk/keys.psk   carol, whom the server does not know
set -euo pipefail

key_type=ecdsa
if [ "${1:-}" = "--key-type" ]; then
    key_type=$2
    shift 2
fi
case "$key_type" in
    ecdsa) server_key_args=(--key-type=ecdsa --curve=secp256r1) ;;
    rsa) server_key_args=(--key-type=rsa --bits=2048) ;;
    ed25519) server_key_args=(--key-type=ed25519) ;;
    *) echo "$0: --key-type ecdsa, rsa or ed25519, not $key_type" >&2; exit 2 ;;
esac
[ $# -eq 1 ] || { echo "usage: $0 [--key-type ecdsa|rsa|ed25519] DIR" >&2; exit 2; }
dir=$1

for tool in certtool psktool; do
    command -v "$tool" >/dev/null 2>&1 ||
        { echo "$0: $tool not found (package gnutls-bin)" >&2; exit 77; }
done

# With NBDCURLD_TLS_KEYS_CACHE (set for the suite by tests/meson.build, a
# folder of the build tree), the set of one key type is made once an hour
# and copied for every test that asks: the twenty tests that need keys
# would otherwise each spend a second of certtool.  Every test still has
# its own copy, to change as it likes.
cache=${NBDCURLD_TLS_KEYS_CACHE:-}
entry=""
if [ -n "$cache" ]; then
    entry=$cache/$key_type-$(date -u +%Y%m%d%H)
    if [ -d "$entry" ]; then
        mkdir -p "$dir"
        cp -a "$entry/." "$dir/"
        exit 0
    fi
fi

mkdir -p "$dir"
cd "$dir"
umask 077
tpl=$(mktemp -d "${TMPDIR:-/tmp}/make-tls-keys.XXXXXX")
trap 'rm -rf "$tpl"' EXIT

# certtool prints the key's or certificate's fields before the PEM unless
# told not to; the files hold the PEM only.
ec_key() { certtool --generate-privkey --key-type=ecdsa --curve=secp256r1 \
               --no-text --outfile "$1" 2>/dev/null; }

# cert KEY TEMPLATE OUT [CA-CERT CA-KEY]: a certificate for KEY, self-signed
# without a CA.
cert() {
    local key=$1 template=$2 out=$3
    if [ $# -eq 3 ]; then
        certtool --generate-self-signed --load-privkey "$key" \
            --template "$template" --outfile "$out" 2>/dev/null
    else
        certtool --generate-certificate --load-privkey "$key" \
            --load-ca-certificate "$4" --load-ca-privkey "$5" \
            --template "$template" --outfile "$out" 2>/dev/null
    fi
}

# ---- the CA, and another CA nobody here trusts ----

ca_template() {
    cat <<EOF
cn = "$1"
organization = "nbdcurld-test"
serial = $2
expiration_days = 30
ca
cert_signing_key
crl_signing_key
EOF
}
ca_template "nbdcurld test CA" 1 > "$tpl/ca.info"
ca_template "nbdcurld other CA" 2 > "$tpl/other-ca.info"
ec_key ca-key.pem
cert ca-key.pem "$tpl/ca.info" ca-cert.pem
ec_key "$tpl/other-ca-key.pem"
cert "$tpl/other-ca-key.pem" "$tpl/other-ca.info" "$tpl/other-ca-cert.pem"

# ---- the server ----

cat > "$tpl/server.info" <<EOF
cn = "localhost"
organization = "nbdcurld-test"
serial = 10
expiration_days = 30
dns_name = "localhost"
ip_address = "127.0.0.1"
ip_address = "::1"
tls_www_server
signing_key
EOF
# RSA key exchange (no longer in GnuTLS's default priorities) would need
# the key to decrypt too.
[ "$key_type" = rsa ] && echo encryption_key >> "$tpl/server.info"
certtool --generate-privkey "${server_key_args[@]}" --no-text \
    --outfile server-key.pem 2>/dev/null
cert server-key.pem "$tpl/server.info" server-cert.pem ca-cert.pem ca-key.pem
certtool --generate-privkey "${server_key_args[@]}" --no-text \
    --outfile other-key.pem 2>/dev/null
# The DER (PKCS#8) form of the server key, for tests that look for it.
if command -v openssl >/dev/null 2>&1; then
    openssl pkcs8 -topk8 -nocrypt -in server-key.pem -outform DER \
        -out server-key.der
fi

# ---- clients ----

# client NAME CN SERIAL CA-CERT CA-KEY [TEMPLATE LINES...]: a certificate
# for TLS clients (extendedKeyUsage clientAuth), or for the purposes
# $purposes names (certtool's template words, blank-separated; none when
# empty).
client() {
    local name=$1 cn=$2 serial=$3 ca_cert=$4 ca_key=$5 p
    shift 5
    mkdir -p "$name"
    {
        echo "cn = \"$cn\""
        echo "organization = \"nbdcurld-test\""
        echo "serial = $serial"
        for p in ${purposes-tls_www_client}; do echo "$p"; done
        echo "signing_key"
        printf '%s\n' "$@"
    } > "$tpl/$name.info"
    grep -q '^expiration' "$tpl/$name.info" ||
        echo "expiration_days = 30" >> "$tpl/$name.info"
    ec_key "$name/client-key.pem"
    cert "$name/client-key.pem" "$tpl/$name.info" "$name/client-cert.pem" \
        "$ca_cert" "$ca_key"
    # The client trusts the test CA (the server's), whoever signed it.
    cp ca-cert.pem "$name/ca-cert.pem"
}
client client1 client1 20 ca-cert.pem ca-key.pem \
    'dns_name = "client1.nbdcurld.test"' 'email = "client1@nbdcurld.test"'
client client2 client2 21 ca-cert.pem ca-key.pem \
    'dns_name = "client2.nbdcurld.test"'
client wrongca client1 22 "$tpl/other-ca-cert.pem" "$tpl/other-ca-key.pem" \
    'dns_name = "client1.nbdcurld.test"' 'email = "client1@nbdcurld.test"'
client expired client3 23 ca-cert.pem ca-key.pem \
    'activation_date = "2019-01-01 00:00:00 UTC"' \
    'expiration_date = "2020-01-01 00:00:00 UTC"'
purposes=tls_www_server client serveronly client1 24 ca-cert.pem ca-key.pem \
    'dns_name = "client1.nbdcurld.test"' 'email = "client1@nbdcurld.test"'
purposes='' client nopurpose client4 25 ca-cert.pem ca-key.pem
purposes='tls_www_server tls_www_client' client bothpurposes client5 26 \
    ca-cert.pem ca-key.pem
mkdir -p noclient otherca
cp ca-cert.pem noclient/ca-cert.pem
cp "$tpl/other-ca-cert.pem" otherca/ca-cert.pem

# ---- the CRL: client2 revoked ----

cat > "$tpl/crl.info" <<EOF
crl_next_update = 30
crl_number = 1
EOF
certtool --generate-crl --load-ca-privkey ca-key.pem \
    --load-ca-certificate ca-cert.pem \
    --load-certificate client2/client-cert.pem \
    --template "$tpl/crl.info" --outfile ca-crl.pem 2>/dev/null

mkdir -p nocrl
cp ca-cert.pem server-cert.pem server-key.pem nocrl/

# ---- PSK ----

psk() {
    local file=$1 user
    shift
    mkdir -p "$(dirname "$file")"
    rm -f "$file"
    for user in "$@"; do
        psktool -u "$user" -p "$file" >/dev/null
    done
}
psk keys.psk alice bob
psk wrongpsk/keys.psk alice bob
psk unknownpsk/keys.psk carol

# Published whole, by a rename, or not at all: a test that made its own at
# the same time as another keeps its own, and no test copies a set half
# written.
if [ -n "$entry" ]; then
    mkdir -p "$cache"
    new=$(mktemp -d "$cache/.new.XXXXXX")
    cp -a . "$new/"
    mv -T "$new" "$entry" 2>/dev/null || rm -rf "$new"
fi
