#!/usr/bin/env bash
# Proxies (proxy=, proxy-user=, proxy-password=, --proxy-from-env) through
# a real one, Debian's tinyproxy, run unprivileged on a free port with its
# configuration and log here.  Each case copies its own NAME.img, so the
# proxy's log ("GET http://.../NAME.img") and the web server's (via=, the
# Via header tinyproxy adds) tell which requests went through the proxy:
#   - proxy=: every request goes through it, byte-exact;
#   - proxy-user= and proxy-password=+FILE: a proxy that wants BasicAuth
#     takes them, and refuses the copy without them or with a wrong one;
#     the password is in no log line;
#   - http_proxy in the environment is not used without --proxy-from-env,
#     and is with it; no_proxy exempts the web server's address;
#   - https through the proxy (CONNECT), when nginx has ssl;
#   - bad values are refused at start, each with a message naming it.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy tinyproxy

serve_image 4M
sum=$(md5_of www/disk.img)
# Children run as nobody when started as root: the files they read must
# be reachable.
chmod 711 "$tmp"

url() {
    [ -e "www/$1.img" ] || ln -s disk.img "www/$1.img"
    echo "$WEB_URL/$2/$1.img"
}

# proxied NAME LOG: every request for NAME.img went through the proxy
# logging to LOG (the proxy logged them, and the web server saw its Via).
proxied() {
    grep -qE "GET http://127\.0\.0\.1:$WEB_PORT/[a-z-]+/$1\.img" "$2" ||
        fail "$1: the proxy's log has no request for it: $(tail -n 5 "$2")"
    web_every "$1" '(tinyproxy/'
}

# direct NAME LOG: no request for NAME.img went through the proxy.
direct() {
    ! grep -qF "/$1.img" "$2" || fail "$1: the proxy saw requests: $(grep -F "/$1.img" "$2")"
    web_every "$1" 'via=-'
}

start_tinyproxy open
open_log=$tmp/open-proxy.log
open_port=$PROXY_PORT
start_tinyproxy auth "BasicAuth alice Pr0xy-pw-7d2"
auth_log=$tmp/auth-proxy.log
auth_port=$PROXY_PORT

# ---- proxy= ----
copy_checked plain "$(url plain good)" proxy=http://127.0.0.1:$open_port
proxied plain "$open_log"
# Through a proxy, reads go through libcurl (not the direct path).
grep -q 'reads go through libcurl (through a proxy)' plain.log ||
    fail "plain: the direct path was not turned off: $(grep 'reads go' plain.log)"
# Reads that libcurl handles whatever the path (chunked replies) too.
copy_checked chunked "$(url chunked chunked)" proxy=http://127.0.0.1:$open_port
proxied chunked "$open_log"
# A proxy URL without a scheme is an http:// proxy (libcurl's reading).
copy_checked noscheme "$(url noscheme good)" proxy=127.0.0.1:$open_port
proxied noscheme "$open_log"

# ---- proxy-user= and proxy-password= ----
printf 'Pr0xy-pw-7d2\n' > proxy-pw.txt
chmod 644 proxy-pw.txt
copy_checked auth "$(url auth good)" proxy=http://127.0.0.1:$auth_port proxy-user=alice \
    proxy-password=+proxy-pw.txt
proxied auth "$auth_log"
# From a descriptor too.
copy_checked auth-fd "$(url auth-fd good)" proxy=http://127.0.0.1:$auth_port proxy-user=alice \
    proxy-password=-5 5<proxy-pw.txt
proxied auth-fd "$auth_log"
! grep -qF 'Pr0xy-pw-7d2' ./*.log || fail "the proxy password is in a log"
# Without them, or with a wrong one, the proxy refuses (407): no data.
for case in noauth wrongauth; do
    echo "== $case"
    args=()
    if [ "$case" = wrongauth ]; then
        printf 'wrong\n' > wrong-pw.txt
        chmod 644 wrong-pw.txt
        args=(proxy-user=alice proxy-password=+wrong-pw.txt)
    fi
    rm -f "$case.img"
    expect_fail "$NBDCURLD" -r --run "nbdcopy \"\$uri\" $case.img" \
        "$(url "$case" good)" proxy=http://127.0.0.1:$auth_port "${args[@]}" \
        2>"$case.log" </dev/null
    [ ! -s "$case.img" ] || fail "$case: data was copied"
    grep -qE '40[17]' "$case.log" || fail "$case: the log does not say why: $(cat "$case.log")"
    [ -z "$(web_requests "$case")" ] || fail "$case: requests reached the web server"
done

# ---- the environment: only with --proxy-from-env ----
export http_proxy=http://127.0.0.1:$open_port
copy_checked env-ignored "$(url env-ignored good)"
direct env-ignored "$open_log"
grep -q 'reads of up to .* go direct' env-ignored.log ||
    fail "env-ignored: the direct path is off without a proxy"
copy_checked env-used "$(url env-used good)" --proxy-from-env
proxied env-used "$open_log"
# proxy= wins over the environment.
copy_checked env-overridden "$(url env-overridden good)" --proxy-from-env \
    proxy=http://127.0.0.1:$auth_port proxy-user=alice proxy-password=+proxy-pw.txt
proxied env-overridden "$auth_log"
! grep -qF env-overridden.img "$open_log" || fail "env-overridden: the environment's proxy was used"
# no_proxy exempts the web server's address: connected to directly (its
# port is allowed too).
no_proxy=127.0.0.1 copy_checked env-noproxy "$(url env-noproxy good)" --proxy-from-env
direct env-noproxy "$open_log"
unset http_proxy

# ---- https through the proxy (CONNECT) ----
if command -v certtool >/dev/null && /usr/sbin/nginx -V 2>&1 | grep -q -- --with-http_ssl_module; then
    "$srcdir/lib/make-tls-keys.sh" keys >/dev/null 2>&1 || fail "make-tls-keys.sh failed"
    chmod 755 keys
    chmod 644 keys/ca-cert.pem
    start_nginx "$tmp/www" ssl "ssl_certificate $tmp/keys/server-cert.pem;
        ssl_certificate_key $tmp/keys/server-key.pem;"
    start_tinyproxy connect "ConnectPort $NGINX_PORT"
    copy_checked https "https://localhost:$NGINX_PORT/disk.img" proxy=http://127.0.0.1:$PROXY_PORT \
        cainfo="$tmp/keys/ca-cert.pem"
    grep -q "CONNECT localhost:$NGINX_PORT" connect-proxy.log ||
        fail "https: the proxy was not asked to CONNECT: $(tail -n 5 connect-proxy.log)"
else
    echo "SKIP (part): https through the proxy needs certtool and nginx with ssl"
fi

# ---- refused at start ----
u=$(url refused good)
refused_at_start socks 'socks5.*not supported.*http:// or https://' "$u" proxy=socks5://127.0.0.1:1080
refused_at_start path 'without a path' "$u" proxy=http://127.0.0.1:3128/x
refused_at_start url-password 'holds a password.*proxy-user= and proxy-password=' "$u" \
    proxy=http://alice:Pr0xy-pw-7d2@127.0.0.1:3128
! grep -qF 'Pr0xy-pw-7d2' refused-url-password.log || fail "url-password: the password was echoed"
refused_at_start literal 'proxy-password= takes -, -FD or \+FILE' "$u" proxy=http://127.0.0.1:3128 \
    proxy-user=alice proxy-password=Pr0xy-pw-7d2
! grep -qF 'Pr0xy-pw-7d2' refused-literal.log || fail "literal: the password was echoed"
refused_at_start no-user 'proxy-password= needs proxy-user=' "$u" proxy=http://127.0.0.1:3128 \
    proxy-password=+proxy-pw.txt
refused_at_start no-proxy 'proxy-user= is for a proxy' "$u" proxy-user=alice
refused_at_start ftp 'a proxy serves http and https URLs only' ftp://127.0.0.1/disk.img \
    proxy=http://127.0.0.1:3128
refused_at_start socket 'unix-socket-path= and proxy= cannot be combined' "$u" \
    proxy=http://127.0.0.1:3128 unix-socket-path=/tmp/none.sock
refused_at_start empty 'proxy= takes a URL' "$u" proxy=

if grep -h 'killed by signal' ./*.log; then
    fail "a process was killed by a signal"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
