#!/usr/bin/env bash
# Messages that say what to do next: a certificate nbdcurld cannot
# verify names --cainfo/--capath and, last, --insecure; a missing CA
# file says so; an HTTP error at open names the URL (never its
# credentials or query) and the status; a port below 1024 without root
# says how to get one; --insecure and sslverify=false are warned about;
# and an http export, read-only by nature, starts without a word about it.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdinfo

serve_image 1M

# says NAME PATTERN: NAME.log matches PATTERN (grep -E).
says() {
    grep -qE -- "$2" "$1.log" || fail "$1: no /$2/ in: $(cat "$1.log")"
}

# ---- HTTP errors at open ----
host=${WEB_URL#http://}
refused_at_start 404 'not found' "http://me:pw-Msg-4c1@$host/good/missing.img?sig=s3cr3t"
grep -qF "cannot be opened: http://$host/good/missing.img?...: not found (HTTP 404): check the URL" \
    refused-404.log || fail "404: the URL and the next step are missing: $(cat refused-404.log)"
if grep -qE 'pw-Msg|s3cr3t' refused-404.log; then
    fail "404: credentials or the query reached the log: $(cat refused-404.log)"
fi
refused_at_start 500 'HTTP 500' "$WEB_URL/status-500/disk.img"
grep -qF "cannot be opened: $WEB_URL/status-500/disk.img: the server answered HTTP 500" \
    refused-500.log || fail "500: the URL is missing: $(cat refused-500.log)"

# A daemon logs the URL too; the client is told why, but not the URL.
start_nbdcurld -r --export "gone=$WEB_URL/good/missing.img"
if LIBNBD_DEBUG=1 nbdinfo --size "$(nbd_uri gone)" > /dev/null 2> client.txt; then
    fail "daemon: the missing export was served"
fi
grep -q 'server error message: .*not found (HTTP 404)' client.txt ||
    fail "daemon: the client was not told why: $(grep -i error client.txt)"
if grep -q "good/missing.img" client.txt; then
    fail "daemon: the client was told the URL: $(grep -i error client.txt)"
fi
eventually 5 grep -qF "export \"gone\" cannot be opened: $WEB_URL/good/missing.img: not found (HTTP 404)" \
    "$NBDCURLD_LOG" || fail "daemon: the URL is not logged: $(cat "$NBDCURLD_LOG")"
stop_nbdcurld

# ---- read-only by nature: nothing to say ----
echo "== no read-only notice"
"$NBDCURLD" "$WEB_URL/good/disk.img" --run 'nbdinfo --size "$uri"' >plain.out 2>plain.log ||
    fail "plain: $(cat plain.log)"
[ ! -s plain.log ] || fail "plain: a start without -r is not silent: $(cat plain.log)"

# ---- CA files ----
refused_at_start cainfo-missing '--cainfo .*/no-such-ca\.pem: no such file' \
    --cainfo "$tmp/no-such-ca.pem" "$WEB_URL/good/disk.img"
refused_at_start cainfo-key-missing 'cainfo=.*/no-such-ca\.pem: no such file' \
    "$WEB_URL/good/disk.img" cainfo="$tmp/no-such-ca.pem"
refused_at_start capath-missing '--capath .*/no-such-dir.*(no such|not a) ' \
    --capath "$tmp/no-such-dir" "$WEB_URL/good/disk.img"

# ---- --insecure and sslverify=false, warned about ----
echo "== insecure"
"$NBDCURLD" -r --insecure "$WEB_URL/good/disk.img" --run 'nbdinfo --size "$uri"' \
    >insecure.out 2>insecure.log || fail "insecure: $(cat insecure.log)"
says insecure "warning.*export \"\": $WEB_URL/good/disk.img: TLS certificate verification is off \(--insecure\).*--cainfo"
"$NBDCURLD" -r "$WEB_URL/good/disk.img" sslverify=false --run 'nbdinfo --size "$uri"' \
    >sslverify.out 2>sslverify.log || fail "sslverify: $(cat sslverify.log)"
says sslverify "verification is off \(sslverify=false\)"

# ---- certificates nbdcurld cannot verify (nginx with TLS) ----
if command -v openssl >/dev/null && [ -x /usr/sbin/nginx ] &&
   /usr/sbin/nginx -V 2>&1 | grep -q -- --with-http_ssl_module; then
    start_nginx_self_signed "$tmp/www" "DNS:localhost"
fi
if [ -n "${NGINX_PORT:-}" ]; then
    # An unknown issuer: the CA to give, then the last resort.
    refused_at_start unknown-ca \
        'signed by a CA not trusted here: give that CA with --cainfo FILE or --capath DIR.*--insecure' \
        "https://localhost:$NGINX_PORT/disk.img"
    # The CA given, but the wrong host name in the URL.
    refused_at_start wrong-host \
        'cannot be verified: check the URL.s host name.*--insecure' \
        --cainfo "$tmp/private/cert.pem" "https://127.0.0.1:$NGINX_PORT/disk.img"
    # And with the CA, it is served.
    size=$("$NBDCURLD" -r --cainfo "$tmp/private/cert.pem" \
        "https://localhost:$NGINX_PORT/disk.img" --run 'nbdinfo --size "$uri"')
    [ "$size" -eq 1048576 ] || fail "with --cainfo: size $size"
else
    echo "SKIP (part): certificates need openssl and nginx with ssl"
fi

# ---- a privileged port ----
echo "== privileged port"
low=$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start 2>/dev/null || echo 1024)
if [ "$low" -le 1 ]; then
    echo "SKIP (part): every port is unprivileged here"
else
    run_unprivileged=()
    if [ "$(id -u)" -eq 0 ]; then
        requires setpriv
        run_unprivileged=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
    fi
    rc=0
    "${run_unprivileged[@]}" "$NBDCURLD" -r -p 1 "$WEB_URL/good/disk.img" \
        --run true >port.out 2>port.log || rc=$?
    [ "$rc" -eq 1 ] || fail "port 1: exit status $rc: $(cat port.log)"
    says port 'cannot listen on port 1: Permission denied \(a port below 1024 needs root.*-p.*socket activation'
fi

left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
