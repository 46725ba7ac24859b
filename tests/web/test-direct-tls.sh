#!/usr/bin/env bash
# Direct reads over https (src/fetcher/direct-tls.c): each connection
# is made by libcurl (CURLOPT_CONNECT_ONLY, the open's options), and the
# reads' requests and replies go over it without libcurl's transfer, each
# body decrypted into the data area.
#
#   - nginx and tests/lib/web-server.py over https: byte-exact copies and
#     pipelined reads at odd offsets and lengths, the direct path on;
#   - replies that are correct but not the plain case (chunked, bare LF,
#     huge headers, a 20-digit length) go back to libcurl, saying why;
#     HTTP/1.0, interim replies, connections dropped without notice and
#     bodies in tiny pieces are taken directly;
#   - wrong replies (a shifted range, a long or short body) are errors,
#     never data;
#   - NBD over TLS in front of them (nbdcopy with nbds+unix://);
#   - the certificate is checked on every direct connection as libcurl
#     checks it: a server whose certificate changes after the open to one
#     the CA did not sign gets no read answered with data;
#   (A server that offers HTTP/2 keeps reads with libcurl unless
#   http-version=1.1: tests/web/test-http-version.sh.)
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy openssl /usr/sbin/nginx
requires_python_nbd
if ! /usr/sbin/nginx -V 2>&1 | grep -q -- --with-http_ssl_module; then
    echo "$0: SKIP: this nginx has no ssl module" >&2
    exit 77
fi

# ---- two CAs, each signing a certificate for localhost and 127.0.0.1 ----
mkdir private ca www
chmod 700 private
chmod 711 "$tmp"                # the fetchers run as nobody when root
server_cert_ext private/ext.cnf
for n in good other; do
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -days 2 -subj "/CN=nbdcurld $n CA" -keyout "private/$n-ca.key" \
        -out "ca/$n-ca.pem" 2>openssl.err ||
        fail "cannot make the $n CA: $(cat openssl.err)"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -subj "/CN=localhost" -keyout "private/$n.key" -out "private/$n.csr" 2>openssl.err ||
        fail "cannot make a request: $(cat openssl.err)"
    openssl x509 -req -days 2 -in "private/$n.csr" -CA "ca/$n-ca.pem" \
        -CAkey "private/$n-ca.key" -CAcreateserial -CAserial "private/$n.srl" \
        -extfile private/ext.cnf -out "private/$n.pem" 2>openssl.err ||
        fail "cannot sign: $(cat openssl.err)"
done
chmod 755 ca
chmod 644 ca/*.pem
# What nginx serves: the good pair, swapped for the other one later.
cp private/good.pem private/server.pem
cp private/good.key private/server.key

make_image www/disk.img 5000011        # odd size: the last read is short
sum=$(md5_of www/disk.img)

start_nginx "$tmp/www" ssl "ssl_certificate $tmp/private/server.pem;
        ssl_certificate_key $tmp/private/server.key;"
nginx_url=https://localhost:$NGINX_PORT

# tests/lib/web-server.py over https, for its misbehaving modes.
: > web.port
$PY "$srcdir/lib/web-server.py" --log "$tmp/web.log" --tls-cert private/good.pem \
    --tls-key private/good.key "$tmp/www" > web.port &
kill_on_exit $!
for i in $(seq 100); do
    WEB_PORT=$(head -n1 web.port 2>/dev/null || true)
    [ -n "$WEB_PORT" ] && break
    sleep 0.1
done
[ -n "$WEB_PORT" ] || fail "the https web server did not start"
web_url=https://127.0.0.1:$WEB_PORT

# mode of tests/lib/web-server.py, and what the fetcher's log says about it:
# "direct" (no fallback line) or the reason it went back to libcurl.
declare -A modes=(
    [good]='direct'
    [http10]='direct'
    [interim]='direct'
    [drop-idle]='direct'
    [trickle]='direct'
    [chunked]='Transfer-Encoding'
    [bare-lf]='bare LF'
    [huge-headers]='headers are longer'
    [huge-length]='Content-Length is not a number'
)
args=(-v --cainfo "$tmp/ca/good-ca.pem" --retry-delay 0.05
      --export "nginx=$nginx_url/disk.img")
for m in "${!modes[@]}"; do
    args+=(--export "$m=$web_url/$m/disk.img")
done
for m in wrong-range long-body short-body; do
    args+=(--export "$m=$web_url/$m/disk.img")
done
start_nbdcurld -r "${args[@]}"

# Copies, then pipelined reads at odd offsets and lengths from 4
# connections at once (tests/lib/pipelined-reads.py), up to 1 MiB: over TLS
# every size goes direct.  The trickle export's pipelined reads spend
# their time waiting for bytes a millisecond apart: they run in the
# background while the other exports are copied and read.
copy_whole() {
    echo "== $1"
    rm -f copy.img
    nbdcopy "$(nbd_uri "$1")" copy.img || fail "$1: copy failed"
    [ "$(md5_of copy.img)" = "$sum" ] || fail "$1: the copy differs"
}
copy_whole trickle
$PY "$srcdir/lib/pipelined-reads.py" "$(nbd_uri trickle)" www/disk.img 300 $((1 << 20)) \
    > trickle-reads.out 2>&1 &
trickle_reads=$!
kill_on_exit "$trickle_reads"
for export in nginx "${!modes[@]}"; do
    [ "$export" != trickle ] || continue
    copy_whole "$export"
    $PY "$srcdir/lib/pipelined-reads.py" "$(nbd_uri "$export")" www/disk.img 300 $((1 << 20)) ||
        fail "$export: pipelined reads"
done
wait "$trickle_reads" || fail "trickle: pipelined reads: $(cat trickle-reads.out)"
grep -q 'export "nginx": reads go direct over TLS' "$NBDCURLD_LOG" ||
    fail "nginx's reads did not go direct: $(grep 'export "nginx": reads' "$NBDCURLD_LOG")"
check_direct_modes modes 'reads go direct over TLS' all \
    'reads go through libcurl from now on'

# Wrong replies: every read fails, none returns other bytes (read_ranges
# fails on wrong data).
for m in wrong-range long-body short-body; do
    echo "== $m"
    out=$(read_ranges "$(nbd_uri "$m")" www/disk.img 0:4096 1000000:300000 4096:1048576)
    echo "$out"
    [ "$(grep -c ' EIO ' <<<"$out")" = 3 ] || fail "$m: a read did not fail: $out"
done
stop_nbdcurld

# ---- NBD over TLS in front of direct https reads ----
# The front-end encrypts what the fetcher decrypted into the data area.
if command -v certtool >/dev/null && command -v psktool >/dev/null; then
    echo "== nbds:// copy of an https export"
    "$srcdir/lib/make-tls-keys.sh" "$tmp/nbdpki" >/dev/null 2>&1 ||
        fail "make-tls-keys.sh failed"
    rm -f nbds.img
    "$NBDCURLD" -r -v --tls=require --tls-certificates "$tmp/nbdpki" \
        --cainfo "$tmp/ca/good-ca.pem" "$nginx_url/disk.img" \
        --run "nbdcopy \"\$uri&tls-certificates=$tmp/nbdpki\" nbds.img" 2>nbds.log ||
        fail "nbds copy failed: $(tail -n 5 nbds.log)"
    [ "$(md5_of nbds.img)" = "$sum" ] || fail "the nbds copy differs"
    grep -q 'reads go direct over TLS' nbds.log ||
        fail "nbds: reads did not go direct: $(grep 'reads go' nbds.log)"
else
    echo "no certtool or psktool: NBD over TLS is not tried here"
fi

# ---- the certificate changes after the open ----
echo "== certificate changed after the open"
mv "$NBDCURLD_LOG" first.log
start_nbdcurld -r --cainfo "$tmp/ca/good-ca.pem" "$nginx_url/disk.img"
cat > swap.py <<'PYEOF'
import subprocess, sys, time
import nbd
uri, swap = sys.argv[1], sys.argv[2:]
h = nbd.NBD()
h.connect_uri(uri)              # the export is open: the good certificate
subprocess.run(swap, check=True)
time.sleep(1)                   # nginx's new workers take over
for offset in (0, 1 << 20, 3 << 20):
    try:
        h.pread(65536, offset)
    except nbd.Error as e:
        print("EIO at %d: %s" % (offset, e))
        continue
    sys.exit("a read at %d was answered with data after the certificate changed" % offset)
PYEOF
$PY swap.py "$NBD_URI" sh -c "cp '$tmp/private/other.pem' '$tmp/private/server.pem' &&
    cp '$tmp/private/other.key' '$tmp/private/server.key' && kill -HUP $NGINX_PID" ||
    fail "reads after the certificate changed"
cat "$NBDCURLD_LOG"
grep -iqE 'cannot connect to the web server: .*(certificate|SSL)' "$NBDCURLD_LOG" ||
    fail "the log does not say the certificate was refused: $(tail -n 5 "$NBDCURLD_LOG")"
! grep -q 'retry' "$NBDCURLD_LOG" ||
    fail "a refused certificate was retried: $(grep retry "$NBDCURLD_LOG" | head -2)"
stop_nbdcurld
echo "direct reads over TLS: ok"
