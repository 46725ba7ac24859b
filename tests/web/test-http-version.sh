#!/usr/bin/env bash
# http-version= (nbdkit's values) against nginx, whose access log
# ("combined": the request line) says which HTTP version each request
# came in:
#   - over https, HTTP/2 by default (libcurl's 2TLS, when it has nghttp2)
#     and with 2.0 or 2TLS, the reads through libcurl; HTTP/1.1 with
#     http-version=1.1, the reads direct (src/fetcher/direct-tls.c);
#   - over plain http, 2-prior-knowledge speaks HTTP/2 at once, and 1.0
#     HTTP/1.0; both keep the reads off the direct path (HTTP/1.1 only),
#     which 1.1 keeps;
#   - each copy is byte-exact;
#   - -D curl.verbose=1 over HTTP/2 masks the request headers libcurl
#     names in its own text as it masks HTTP/1.x header lines;
#   - a version this libcurl lacks (HTTP/3 in Debian 12's), and a value
#     that is none, are refused at start.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy certtool /usr/sbin/nginx curl
if ! /usr/sbin/nginx -V 2>&1 | grep -q -- --with-http_v2_module ||
        ! /usr/sbin/nginx -V 2>&1 | grep -q -- --with-http_ssl_module; then
    echo "$0: SKIP: this nginx has no http_v2 or ssl module" >&2
    exit 77
fi
if ! curl -V | grep -q '^Features:.* HTTP2'; then
    echo "$0: SKIP: libcurl has no HTTP/2" >&2
    exit 77
fi

www_image 4M
# Children run as nobody when started as root: the CA must be reachable.
chmod 711 "$tmp"
"$srcdir/lib/make-tls-keys.sh" keys >/dev/null 2>&1 || fail "make-tls-keys.sh failed"
chmod 755 keys
chmod 644 keys/ca-cert.pem

# One server: https with HTTP/2 on NGINX_PORT, plain HTTP/2 (prior
# knowledge only) on h2c_port, plain HTTP/1.x on plain_port.
h2c_port=$(free_port)
plain_port=$(free_port)
start_nginx "$tmp/www" "ssl http2" "ssl_certificate $tmp/keys/server-cert.pem;
        ssl_certificate_key $tmp/keys/server-key.pem;
        listen 127.0.0.1:$h2c_port http2;
        listen 127.0.0.1:$plain_port;
        access_log $tmp/access.log;"
tls_url=https://localhost:$NGINX_PORT

# copy NAME URL ARGS...: a byte-exact copy of NAME.img (a link to disk.img)
# at URL/NAME.img; nbdcurld's stderr in NAME.log.
copy() {
    local name=$1 url=$2
    shift 2
    echo "== $name"
    [ -e "www/$name.img" ] || ln -s disk.img "www/$name.img"
    rm -f "$name.img"
    "$NBDCURLD" -v -r --cainfo "$tmp/keys/ca-cert.pem" \
        --run "nbdcopy \"\$uri\" $name.img" "$url/$name.img" "$@" 2>"$name.log" </dev/null ||
        fail "$name: nbdcurld $* failed: $(tail -n 5 "$name.log")"
    [ "$(md5_of "$name.img")" = "$sum" ] || fail "$name: the copy differs"
    sleep 0.2           # nginx logs a request once its reply is out
}

# version NAME PROTOCOL: every request for NAME.img came as PROTOCOL (a
# range read among them).
version() {
    local lines bad
    lines=$(grep -F "/$1.img " access.log || true)
    grep -q '"GET ' <<<"$lines" || fail "$1: no GET in the access log: $(tail -n 3 access.log)"
    bad=$(grep -vF "/$1.img $2\"" <<<"$lines" || true)
    [ -z "$bad" ] || fail "$1: requests not in $2: $(head -n 3 <<<"$bad")"
}

# reads_go NAME PATTERN WHAT: NAME's log says where its reads go, as
# PATTERN; else fail with WHAT and what it said.
reads_go() {
    grep -q -- "$2" "$1.log" || fail "$1: $3: $(grep 'reads go' "$1.log")"
}

copy default "$tls_url"
version default HTTP/2.0
reads_go default 'reads go through libcurl (the server speaks HTTP/2' 'reads over HTTP/2 did not stay with libcurl'
copy v11 "$tls_url" http-version=1.1
version v11 HTTP/1.1
reads_go v11 'reads go direct over TLS' 'reads over https and HTTP/1.1 did not go direct'
copy v20 "$tls_url" http-version=2.0
version v20 HTTP/2.0
copy v2tls "$tls_url" http-version=2TLS
version v2tls HTTP/2.0
copy none "$tls_url" http-version=none
version none HTTP/2.0

# Plain http: the direct path speaks HTTP/1.1 only.
copy prior "http://127.0.0.1:$h2c_port" http-version=2-prior-knowledge
version prior HTTP/2.0
reads_go prior 'reads go through libcurl (http-version=' 'the direct path was not turned off'
# libcurl names each HTTP/2 request header in its own text ("h2h3 [name:
# value]", later "[HTTP/2] [1] [name: value]"): -D curl.verbose=1 masks
# them as it masks the header lines of HTTP/1.x.
printf 'SECRETH2PASSWORD\n' > h2pw.txt
copy prior-trace "http://127.0.0.1:$h2c_port" http-version=2-prior-knowledge -D curl.verbose=1 \
    user=alice password=+h2pw.txt 'header=X-Nbdcurld-Test: SECRETH2TOKEN'
version prior-trace HTTP/2.0
if grep -n -e 'SECRET' -e "$(printf 'alice:SECRETH2PASSWORD' | base64)" prior-trace.log; then
    fail "prior-trace: a secret reached the trace"
fi
grep -qiE 'trace: export "": \* (h2h3 |\[HTTP/2\] \[[0-9]+\] )\[authorization: <masked>' \
    prior-trace.log || fail "prior-trace: no masked HTTP/2 header: $(grep -i 'authorization' prior-trace.log)"
copy v10 "http://127.0.0.1:$plain_port" http-version=1.0
version v10 HTTP/1.0
reads_go v10 'reads go through libcurl (http-version=' 'the direct path was not turned off'
copy plain11 "http://127.0.0.1:$plain_port" http-version=1.1
version plain11 HTTP/1.1
reads_go plain11 'reads of up to .* go direct' 'the direct path is off'

# ---- refused at start ----
refused_at_start bad 'http-version= takes none, 1.0, 1.1, 2.0, 2TLS, 2-prior-knowledge, 3 or 3only' \
    "$tls_url/disk.img" http-version=2
if ! curl -V | grep -q '^Features:.* HTTP3'; then
    refused_at_start v3 'HTTP/3, which this libcurl .* was built without' "$tls_url/disk.img" http-version=3
    refused_at_start v3only 'HTTP/3, which this libcurl .* was built without' "$tls_url/disk.img" \
        http-version=3only
fi

if grep -h 'killed by signal' ./*.log; then
    fail "a process was killed by a signal"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
