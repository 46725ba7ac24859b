#!/usr/bin/env bash
# https through nginx with a private CA: --cainfo and --capath make the
# server's certificate trusted, without them the export cannot be opened
# (an error, never data), --insecure skips the check.  A --capath of links
# into another directory works too.
#
# The CA lives in $tmp/ca, a directory no rule of the fetcher's sandbox
# covers: the supervisor reads --cainfo and --capath and hands the
# fetchers the certificates as bytes, so their Landlock rules name no CA
# path.  (tests/web/test-ca-files-root.sh: files only root may read.)
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy nbdinfo openssl /usr/sbin/nginx
if ! /usr/sbin/nginx -V 2>&1 | grep -q -- --with-http_ssl_module; then
    echo "$0: SKIP: this nginx has no ssl module" >&2
    exit 77
fi

# ---- a private CA and a certificate for localhost and 127.0.0.1 ----
mkdir private ca capath www
chmod 700 private
# nobody must reach $tmp/ca and $tmp/capath (the key stays in private/).
chmod 711 "$tmp"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=nbdcurld test CA" \
    -keyout private/ca.key -out ca/test-ca.pem 2>openssl.err ||
    fail "cannot make a CA: $(cat openssl.err)"
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
    -keyout private/server.key -out private/server.csr 2>openssl.err ||
    fail "cannot make a certificate request: $(cat openssl.err)"
server_cert_ext private/ext.cnf
openssl x509 -req -days 2 -in private/server.csr -CA ca/test-ca.pem \
    -CAkey private/ca.key -CAcreateserial -CAserial private/ca.srl \
    -extfile private/ext.cnf -out private/server.pem 2>openssl.err ||
    fail "cannot sign the certificate: $(cat openssl.err)"
openssl verify -CAfile ca/test-ca.pem private/server.pem >/dev/null ||
    fail "the test certificate does not verify"

# --capath: a directory of hashed names (openssl rehash, or c_rehash).
cp ca/test-ca.pem capath/
if ! openssl rehash capath 2>/dev/null && ! c_rehash capath >/dev/null 2>&1; then
    echo "$0: SKIP: neither 'openssl rehash' nor c_rehash works" >&2
    exit 77
fi
ls capath/*.0 >/dev/null 2>&1 || fail "rehash made no hashed name in capath/"
# A --capath whose links lead elsewhere, as Debian's /etc/ssl/certs does:
# the certificate itself is in $tmp/elsewhere, which only the link leads to.
mkdir elsewhere capath-links
cp ca/test-ca.pem elsewhere/
ln -s "$tmp/elsewhere/test-ca.pem" capath-links/test-ca.pem
openssl rehash capath-links 2>/dev/null || c_rehash capath-links >/dev/null 2>&1 ||
    fail "cannot rehash capath-links/"
chmod 755 ca capath elsewhere capath-links
chmod 644 ca/test-ca.pem capath/* elsewhere/test-ca.pem

make_image www/disk.img 8M
sum=$(md5_of www/disk.img)

# ---- nginx with ssl ----
start_nginx "$tmp/www" ssl "ssl_certificate $tmp/private/server.pem;
        ssl_certificate_key $tmp/private/server.key;"
TLS_PORT=$NGINX_PORT
url=https://localhost:$TLS_PORT/disk.img

# copy NAME ARGS...: nbdcurld ARGS copies the export to NAME.img, byte-exact.
copy() {
    local name=$1
    shift
    echo "== $name"
    rm -f "$name.img"
    "$NBDCURLD" -r "$@" --run "nbdcopy \"\$uri\" $name.img" 2>>"$name.log" ||
        fail "$name: nbdcurld $* failed: $(cat "$name.log")"
    [ "$(md5_of "$name.img")" = "$sum" ] || fail "$name: copy differs"
}

# --cainfo from $tmp/ca (the verbose log shows no Landlock rule for it).
copy cainfo -v --cainfo "$tmp/ca/test-ca.pem" "$url"
grep -q 'fetcher: debug: sandbox: Landlock' cainfo.log ||
    fail "cainfo: the fetcher's sandbox did not say what it allows"
! grep -F "allowed read $tmp" cainfo.log ||
    fail "cainfo: the fetcher's Landlock rules name a CA path"
# The certificate names 127.0.0.1 too.
copy cainfo-ip --cainfo "$tmp/ca/test-ca.pem" "https://127.0.0.1:$TLS_PORT/disk.img"
copy capath --capath "$tmp/capath" "$url"
# Links into another directory: followed by the supervisor.
copy capath-links -v --capath "$tmp/capath-links" "$url"
! grep -F "allowed read $tmp" capath-links.log ||
    fail "capath-links: the fetcher's Landlock rules name a CA path"
# Relative paths are relative to the directory nbdcurld was started in.
copy cainfo-relative --cainfo ca/test-ca.pem "$url"
copy insecure --insecure "$url"

# In the background too: nbdcurld goes to / then, and a relative
# --cainfo must still name the file in the directory it was started in.
echo "== background, relative --cainfo"
"$NBDCURLD" -r -U "$tmp/bg.sock" -P "$tmp/bg.pid" --cainfo ca/test-ca.pem \
    "$url" 2>>bg.log || fail "background: nbdcurld failed to start: $(cat bg.log)"
# The daemon writes its pid file after the command has returned: wait for
# it (and the socket), and stop the daemon at exit whatever happens next.
bg_pid=
for i in $(seq 100); do
    [ -s bg.pid ] && [ -S bg.sock ] && break
    sleep 0.1
done
bg_pid=$(cat bg.pid 2>/dev/null || true)
[ -n "$bg_pid" ] || fail "background: no pid file: $(cat bg.log)"
kill_on_exit "$bg_pid"
[ -S bg.sock ] || fail "background: no socket: $(cat bg.log)"
nbdcopy "nbd+unix:///?socket=$tmp/bg.sock" bg.img ||
    fail "background: copy failed: $(cat bg.log)"
[ "$(md5_of bg.img)" = "$sum" ] || fail "background: copy differs"
stop_pid "$bg_pid"

# Without the CA: the export cannot be opened; no data, a reason in the log.
echo "== no CA"
rm -f noca.img
expect_fail "$NBDCURLD" -r "$url" --run 'nbdcopy "$uri" noca.img' 2>noca.log
cat noca.log
[ ! -s noca.img ] || fail "no CA: data was copied"
grep -iqE 'certificate|ssl|tls' noca.log ||
    fail "no CA: the log does not say why: $(cat noca.log)"

# A CA file that does not sign the server's certificate: the same.
echo "== wrong CA"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=other CA" \
    -keyout private/other.key -out ca/other-ca.pem 2>/dev/null
chmod 644 ca/other-ca.pem
rm -f wrongca.img
expect_fail "$NBDCURLD" -r --cainfo "$tmp/ca/other-ca.pem" "$url" \
    --run 'nbdcopy "$uri" wrongca.img' 2>wrongca.log
[ ! -s wrongca.img ] || fail "wrong CA: data was copied"
grep -iqE 'certificate|ssl|tls' wrongca.log ||
    fail "wrong CA: the log does not say why: $(cat wrongca.log)"

# No fetcher died by a signal (seccomp's SIGSYS) along the way.
if grep -h 'killed by signal' ./*.log; then
    fail "a process was killed by a signal"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
