#!/usr/bin/env bash
# CA files only root may read: started as root, nbdcurld reads --cainfo
# and --capath before it becomes --user (nobody), and its fetchers, which
# could not open them, get the certificates as bytes (a sealed memfd).
#
#   - a CA file of mode 0600 in a directory of mode 0700, both root's,
#     and a --capath directory of hashed names like it: byte-exact copies
#     of an https export (nginx) through libcurl's reads and the direct
#     https reads, with forked and with executed fetchers (--exec-fetchers),
#     and for a per-export cainfo= key;
#   - a file the supervisor cannot use stops the start, naming the file and
#     why: missing, not a regular file (a directory, a FIFO, which must not
#     keep the start waiting), no PEM certificate in it, too large; a
#     --capath without a certificate likewise;
#   - a certificate the CA did not sign: the log says what to give.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
    echo "$0: SKIP: needs root (nbdcurld started as root, its fetchers as nobody)" >&2
    exit 77
fi
requires nbdcopy openssl /usr/sbin/nginx
if ! /usr/sbin/nginx -V 2>&1 | grep -q -- --with-http_ssl_module; then
    echo "$0: SKIP: this nginx has no ssl module" >&2
    exit 77
fi

# ---- a private CA, root's alone, and a certificate it signs ----
mkdir -m 0700 secret secret/capath private www
chmod 0711 "$tmp"               # nobody may pass through $tmp, not into secret/
server_cert_ext private/ext.cnf
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=nbdcurld root-only CA" -keyout private/ca.key -out secret/ca.pem \
    2>openssl.err || fail "cannot make a CA: $(cat openssl.err)"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=localhost" \
    -keyout private/server.key -out private/server.csr 2>openssl.err ||
    fail "cannot make a request: $(cat openssl.err)"
openssl x509 -req -days 2 -in private/server.csr -CA secret/ca.pem -CAkey private/ca.key \
    -CAcreateserial -CAserial private/ca.srl -extfile private/ext.cnf \
    -out private/server.pem 2>openssl.err || fail "cannot sign: $(cat openssl.err)"
cp secret/ca.pem secret/capath/root-ca.pem
if ! openssl rehash secret/capath 2>/dev/null && ! c_rehash secret/capath >/dev/null 2>&1; then
    echo "$0: SKIP: neither 'openssl rehash' nor c_rehash works" >&2
    exit 77
fi
ls secret/capath/*.0 >/dev/null 2>&1 || fail "rehash made no hashed name"
chmod 0600 secret/ca.pem secret/capath/root-ca.pem
# nobody really cannot read it (else this test proves nothing).
if setpriv --reuid=65534 --regid=65534 --clear-groups cat secret/ca.pem >/dev/null 2>&1; then
    fail "nobody can read secret/ca.pem: the test's premise does not hold"
fi

make_image www/disk.img 3000017
sum=$(md5_of www/disk.img)
start_nginx "$tmp/www" ssl "ssl_certificate $tmp/private/server.pem;
        ssl_certificate_key $tmp/private/server.key;"
url=https://localhost:$NGINX_PORT/disk.img

# copy NAME PATH ARGS...: nbdcurld -v ARGS copies the export to NAME.img,
# byte-exact; PATH is "direct" or "libcurl", which of the fetcher's read
# paths its log must show.
copy() {
    local name=$1 path=$2
    shift 2
    echo "== $name"
    rm -f "$name.img"
    "$NBDCURLD" -r -v "$@" --run "nbdcopy \"\$uri\" $name.img" 2>"$name.log" ||
        fail "$name: nbdcurld $* failed: $(grep -v debug "$name.log" | tail -n 5)"
    [ "$(md5_of "$name.img")" = "$sum" ] || fail "$name: the copy differs"
    if [ "$path" = direct ]; then
        grep -q 'reads go direct over TLS' "$name.log" ||
            fail "$name: reads did not go direct: $(grep 'reads go' "$name.log")"
    else
        grep -q 'reads go through libcurl (' "$name.log" ||
            fail "$name: reads did not stay with libcurl: $(grep 'reads go' "$name.log")"
    fi
}

# http-version=1.0 keeps every read with libcurl (fetcher-direct.c).
for fetchers in forked exec; do
    extra=()
    [ "$fetchers" = exec ] && extra=(--exec-fetchers)
    copy "cainfo-direct-$fetchers" direct "${extra[@]}" --cainfo "$tmp/secret/ca.pem" "$url"
    copy "cainfo-libcurl-$fetchers" libcurl "${extra[@]}" --cainfo "$tmp/secret/ca.pem" \
        "$url" http-version=1.0
    copy "capath-direct-$fetchers" direct "${extra[@]}" --capath "$tmp/secret/capath" "$url"
    copy "capath-libcurl-$fetchers" libcurl "${extra[@]}" --capath "$tmp/secret/capath" \
        "$url" http-version=1.0
done
# The key of one export, relative to the directory nbdcurld started in.
copy cainfo-key direct --export "disk=$url" cainfo=secret/ca.pem
# With a script channel the certificates' descriptor comes after it.
printf '#!/bin/sh\necho "X-Test: 1"\n' > header.sh
chmod 0755 header.sh
copy cainfo-script direct --cainfo "$tmp/secret/ca.pem" "$url" "header-script=$tmp/header.sh"
grep -q 'header-script done' cainfo-script.log ||
    fail "cainfo-script: the script did not run"
# The forked runs had a launcher ready; the executed ones none.
grep -q 'the fetcher launcher is ready' cainfo-direct-forked.log ||
    fail "no fetcher launcher in the forked run"
! grep -q 'started the fetcher launcher' cainfo-direct-exec.log ||
    fail "a fetcher launcher with --exec-fetchers"

# ---- what a file the supervisor cannot use gets ----
# refused NAME WORDS ARGS...: nbdcurld ARGS stops at start (within 10 s,
# before any client) with a message that has WORDS.
refused() {
    local name=$1 words=$2
    shift 2
    echo "== refused: $name"
    expect_fail timeout 10 "$NBDCURLD" -r "$@" --run 'nbdinfo "$uri"' 2>"$name.log"
    cat "$name.log"
    grep -qF -- "$words" "$name.log" || fail "$name: no \"$words\": $(cat "$name.log")"
    ! grep -q 'error setting certificate' "$name.log" ||
        fail "$name: a fetcher's libcurl message instead of the supervisor's"
}
refused missing "--cainfo $tmp/secret/missing.pem: no such file" \
    --cainfo "$tmp/secret/missing.pem" "$url"
refused directory "--cainfo $tmp/secret/capath: not a regular file" \
    --cainfo "$tmp/secret/capath" "$url"
mkfifo secret/fifo
refused fifo "--cainfo $tmp/secret/fifo: not a regular file" --cainfo "$tmp/secret/fifo" "$url"
echo "not a certificate" > secret/text.pem
refused no-pem "--cainfo $tmp/secret/text.pem: holds no PEM certificate" \
    --cainfo "$tmp/secret/text.pem" "$url"
refused no-pem-key "cainfo=$tmp/secret/text.pem: holds no PEM certificate" \
    "$url" "cainfo=$tmp/secret/text.pem"
head -c $((4 * 1024 * 1024)) /dev/zero > secret/huge.pem
refused too-large "--cainfo $tmp/secret/huge.pem: larger than" \
    --cainfo "$tmp/secret/huge.pem" "$url"
mkdir -m 0700 secret/empty-capath
refused empty-capath "--capath $tmp/secret/empty-capath: holds no PEM certificate" \
    --capath "$tmp/secret/empty-capath" "$url"
refused missing-capath "--capath $tmp/secret/nowhere: no such directory" \
    --capath "$tmp/secret/nowhere" "$url"

# ---- a CA that did not sign the server's certificate ----
echo "== wrong CA"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=other CA" -keyout private/other.key -out secret/other.pem 2>/dev/null
chmod 0600 secret/other.pem
rm -f wrong.img
expect_fail "$NBDCURLD" -r --cainfo "$tmp/secret/other.pem" "$url" \
    --run 'nbdcopy "$uri" wrong.img' 2>wrong.log
cat wrong.log
[ ! -s wrong.img ] || fail "wrong CA: data was copied"
grep -qF "give that CA with --cainfo FILE or --capath DIR" \
    wrong.log || fail "wrong CA: the log does not say what to give: $(cat wrong.log)"

if grep -h 'killed by signal' ./*.log; then
    fail "a process was killed by a signal"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
echo "CA files only root may read: ok"
