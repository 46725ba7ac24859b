#!/usr/bin/env bash
# Switching from nbdkit's curl plugin by changing one word:
# nbdkit command lines of the kinds its curl plugin manual shows and
# deployments use (a disk image over http, url=, bearer tokens, VMware
# session cookies, user and password from a file, presigned URLs,
# sslverify=false, connections and timeout), with only "nbdkit ... curl"
# replaced by "nbdcurld ..." (the server options before "curl" stay: -r,
# -U, -f, -e, --run).  Each is run with --run and nbdinfo or nbdcopy, and
# the test web server's log (tests/lib/web-server.py) is checked for what it
# received: user agent, headers, cookie, credentials.  Lines nbdcurld
# must refuse are refused with a message that helps: a password on the
# command line, a misspelt key, a key not supported yet.  A header-script
# line works.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy nbdinfo

mkdir www
make_image www/disk.img 1M
size=$(stat -c %s www/disk.img)
sum=$(md5_of www/disk.img)
start_web_server "$tmp/www"
printf 'pw-C0mpat-2b7d\n' > password.txt
printf 'vmware_soap_session="8f3c2a10-77d4-4e0b-b1a5-3c9e0d2f6b41"\n' > cookie.txt
basic="Basic $(printf 'me:pw-C0mpat-2b7d' | base64)"
version=$("$NBDCURLD" -V | awk '{ print $2; exit }')

# url_of NAME [MODE [QUERY]]: the test web server's URL of www/NAME.img (a
# link to disk.img), in MODE (good by default); each line reads its own.
url_of() {
    [ -e "www/$1.img" ] || ln -s disk.img "www/$1.img"
    echo "$WEB_URL/${2:-good}/$1.img${3:+?$3}"
}

# run_line NAME: read an nbdkit command line from stdin (shell words, with
# $url and $tmp expanded), drop its first word "curl" (the plugin; kept
# when $keep_plugin is set, as nbdcurld takes it too), run it
# with nbdcurld in place of nbdkit in directory NAME.d; its stdout in
# NAME.out, stderr in NAME.log, exit status in $rc.
run_line() {
    local name=$1 line w dropped=
    local -a words argv
    line=$(cat)
    echo "== $name"
    echo "   $line"
    eval "words=( $line )"
    [ "${words[0]}" = nbdkit ] || fail "$name: not an nbdkit command line: $line"
    argv=("$NBDCURLD")
    for w in "${words[@]:1}"; do
        if [ -z "$dropped" ] && [ "$w" = curl ]; then
            dropped=yes
            [ -n "${keep_plugin:-}" ] || continue
        fi
        argv+=("$w")
    done
    [ -n "$dropped" ] || fail "$name: no plugin name 'curl' in: $line"
    rm -rf "$name.d"
    mkdir "$name.d"
    rc=0
    (cd "$name.d" && exec "${argv[@]}") </dev/null >"$name.out" 2>"$name.log" || rc=$?
    sleep 0.1       # the web server logs a request once it has answered it
}

# ok NAME EXPECT...: the command line on stdin works: exit status 0, the
# size that nbdinfo printed or the copy that nbdcopy made (out.img) is
# right, and every request for NAME.img that the web server logged (one
# at least) contains each EXPECT.
ok() {
    local name=$1 lines e bad
    shift
    run_line "$name"
    [ "$rc" -eq 0 ] || fail "$name: exit status $rc: $(tail -n 5 "$name.log")"
    if [ -e "$name.d/out.img" ]; then
        [ "$(md5_of "$name.d/out.img")" = "$sum" ] || fail "$name: the copy differs"
    else
        grep -qx "$size" "$name.out" ||
            fail "$name: neither a copy nor the size ($size): $(cat "$name.out")"
    fi
    [ "$#" -gt 0 ] || return 0
    lines=$(web_requests "$name")
    [ -n "$lines" ] || fail "$name: no request reached the web server"
    for e in "$@"; do
        bad=$(grep -vF -- "$e" <<<"$lines" || true)
        [ -z "$bad" ] || fail "$name: requests without '$e': $(head -n 3 <<<"$bad")"
    done
}

# refused NAME PATTERN: the command line on stdin fails at start (the --run
# command never makes NAME.d/ran) with a message matching PATTERN (grep
# -iE), and no request for NAME.img reaches the web server.
refused() {
    local name=$1 pattern=$2
    run_line "$name"
    [ "$rc" -ne 0 ] || fail "$name: accepted"
    [ "$rc" -lt 128 ] || fail "$name: killed by signal $((rc - 128))"
    [ ! -e "$name.d/ran" ] || fail "$name: refused only after serving"
    grep -qiE -- "$pattern" "$name.log" ||
        fail "$name: the message does not match /$pattern/: $(cat "$name.log")"
    [ -z "$(web_requests "$name")" ] || fail "$name: requests reached the web server"
}

# ---- lines that must work ----

# The manual's synopsis and example, with nbdinfo as the client.
url=$(url_of plain)
ok plain " ua=\"nbdcurld/$version\" " <<'EOF'
nbdkit -r curl "$url" --run 'nbdinfo --size "$uri"'
EOF
url=$(url_of url-key)
ok url-key <<'EOF'
nbdkit -r curl url="$url" --run 'nbdcopy "$uri" out.img'
EOF
# Server options of nbdkit that nbdcurld shares: -U -, -f, -e.
url=$(url_of private-socket)
ok private-socket <<'EOF'
nbdkit -U - -r curl "$url" --run 'nbdcopy "$uri" out.img'
EOF
url=$(url_of export-name)
ok export-name ' xtest="e" ' <<'EOF'
nbdkit -f -r -U - -e disk curl "$url" header='X-Nbdcurld-Test: e' --run 'test "$exportname" = disk && nbdcopy "$uri" out.img'
EOF
url=$(url_of own-socket)
ok own-socket <<'EOF'
nbdkit -r -f -U "$tmp/own.sock" curl "$url" --run 'nbdcopy "nbd+unix:///?socket=$unixsocket" out.img'
EOF

# A bearer token and a user agent (a registry or an object store).
url=$(url_of bearer)
ok bearer ' authz="Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJpbWFnZXMifQ.c2ln" ' \
    ' ua="Mozilla/5.0 (compatible; image-sync/1.4)" ' ' xtest="layer" ' <<'EOF'
nbdkit -r curl "$url" header='Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJpbWFnZXMifQ.c2ln' header='X-Nbdcurld-Test: layer' user-agent='Mozilla/5.0 (compatible; image-sync/1.4)' --run 'nbdcopy "$uri" out.img'
EOF
# A VMware ESXi datastore: the session cookie, given literally and from a file.
url=$(url_of vmware)
ok vmware ' cookie="vmware_soap_session=\"52a01262-bf93-ccce-d379-8dabb3e55560\"" ' <<'EOF'
nbdkit -r curl "$url" cookie='vmware_soap_session="52a01262-bf93-ccce-d379-8dabb3e55560"' sslverify=false --run 'nbdcopy "$uri" out.img'
EOF
url=$(url_of cookie-file)
ok cookie-file ' cookie="vmware_soap_session=\"8f3c2a10-77d4-4e0b-b1a5-3c9e0d2f6b41\"" ' <<'EOF'
nbdkit -r curl "$url" cookie=+"$tmp/cookie.txt" --run 'nbdcopy "$uri" out.img'
EOF
! grep -q '8f3c2a10' cookie-file.log || fail "cookie-file: the cookie is in nbdcurld's log"
# Several cookies in one (the manual's form "name1=content1; name2=content2").
url=$(url_of cookies)
ok cookies ' cookie="name1=content1; name2=content2" ' <<'EOF'
nbdkit -r curl "$url" cookie='name1=content1; name2=content2' --run 'nbdinfo --size "$uri"'
EOF
# User and password from a file.
url=$(url_of user-password)
ok user-password " authz=\"$basic\" " ' auth=yes ' <<'EOF'
nbdkit -r curl "$url" user=me password=+"$tmp/password.txt" --run 'nbdcopy "$uri" out.img'
EOF
! grep -q 'pw-C0mpat' user-password.log || fail "user-password: the password is in nbdcurld's log"
# A presigned object-store URL: '=' in its query, still the URL.
url=$(url_of presigned good 'X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20250101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20250101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=0f1e2d3c')
ok presigned '&X-Amz-Signature=0f1e2d3c ' <<'EOF'
nbdkit -r curl "$url" --run 'nbdcopy "$uri" out.img'
EOF
# Tuning.
url=$(url_of tuning)
ok tuning <<'EOF'
nbdkit -r curl "$url" connections=8 timeout=60 --run 'nbdcopy "$uri" out.img'
EOF
# nbdkit's server options: threads (ignored), the multi-conn filter
# (built in), the log where nbdkit puts it.
url=$(url_of server-options)
ok server-options <<'EOF'
nbdkit -t 16 --filter=multi-conn --log=stderr -r curl "$url" --run 'nbdinfo --can multi-conn "$uri" && nbdcopy "$uri" out.img'
EOF
# The plugin's name left in: nbdcurld is the curl plugin.
keep_plugin=yes
url=$(url_of plugin-kept)
ok plugin-kept <<'EOF'
nbdkit -r curl "$url" --run 'nbdinfo --size "$uri"'
EOF
url=$(url_of plugin-kept-url-key)
ok plugin-kept-url-key <<'EOF'
nbdkit -r -f curl url="$url" --run 'nbdcopy "$uri" out.img'
EOF
# -n (--newstyle): the only protocol spoken here.
url=$(url_of newstyle)
ok newstyle <<'EOF'
nbdkit -n --newstyle -r curl "$url" --run 'nbdinfo --size "$uri"'
EOF
# The multi-conn filter's parameters: unsafe and emulate advertise
# multi-conn (every export is read-only here), disable does not, and
# track-dirty is moot (said so).
url=$(url_of multi-conn-unsafe)
ok multi-conn-unsafe <<'EOF'
nbdkit -r --filter=multi-conn curl "$url" multi-conn-mode=unsafe multi-conn-track-dirty=fast --run 'nbdinfo --can multi-conn "$uri" && nbdcopy "$uri" out.img'
EOF
grep -q 'multi-conn-track-dirty=fast has no effect' multi-conn-unsafe.log ||
    fail "multi-conn-unsafe: no notice that track-dirty is moot: $(cat multi-conn-unsafe.log)"
url=$(url_of multi-conn-emulate)
ok multi-conn-emulate <<'EOF'
nbdkit --filter=multi-conn -r curl "$url" multi-conn-mode=emulate multi-conn-track-dirty=conn multi-conn-exportname=false --run 'nbdinfo --can multi-conn "$uri" && nbdinfo --size "$uri"'
EOF
url=$(url_of multi-conn-disable)
ok multi-conn-disable <<'EOF'
nbdkit --filter=multi-conn -r curl "$url" multi-conn-mode=disable --run 'nbdinfo --can multi-conn "$uri"; test $? = 2 && nbdinfo --size "$uri"'
EOF
unset keep_plugin

# nbdkit's libcurl trace, with the token masked here.
url=$(url_of verbose)
ok verbose ' authz="Bearer tok-Verbose-91c" ' <<'EOF'
nbdkit -D curl.verbose=1 -r curl "$url" header='Authorization: Bearer tok-Verbose-91c' --run 'nbdcopy "$uri" out.img'
EOF
grep -q 'trace: .*> Authorization: <masked>' verbose.log || fail "verbose: no trace"
! grep -q 'tok-Verbose' verbose.log || fail "verbose: the token is in nbdcurld's log"
# HTTP/1.1 forced, IPv4, keep-alive off (an appliance that needs them).
url=$(url_of http11)
ok http11 <<'EOF'
nbdkit -r curl "$url" http-version=1.1 ipresolve=v4 tcp-keepalive=false --run 'nbdcopy "$uri" out.img'
EOF
# nbdkit's retry filters (built in here) with their parameters.
url=$(url_of retry-filter)
ok retry-filter <<'EOF'
nbdkit --filter=retry -r curl "$url" retries=3 retry-delay=1 retry-exponential=no retry-readonly=yes --run 'nbdcopy "$uri" out.img'
EOF
url=$(url_of retry-request-filter)
ok retry-request-filter <<'EOF'
nbdkit --filter=retry-request -r curl "$url" retry-request-retries=2 retry-request-delay=1 retry-request-open=false --run 'nbdcopy "$uri" out.img'
EOF
# The readahead filter, as nbdkit's manual pairs it with curl: built in.
url=$(url_of readahead-filter)
ok readahead-filter <<'EOF'
nbdkit -r --filter=readahead curl "$url" --run 'nbdcopy --requests=1 "$uri" out.img'
EOF
url=$(url_of no-redirects)
ok no-redirects <<'EOF'
nbdkit -r curl "$url" followlocation=false --run 'nbdinfo --size "$uri"'
EOF
# A redirect the URL's server makes: refused with followlocation=false.
url=$(url_of redirected redirect)
ok redirected <<'EOF'
nbdkit -r curl "$url" followlocation=true --run 'nbdinfo --size "$uri"'
EOF
url=$(url_of redirect-refused redirect)
run_line redirect-refused <<'EOF'
nbdkit -r curl "$url" followlocation=false --run 'nbdinfo --size "$uri"'
EOF
[ "$rc" -ne 0 ] || fail "redirect-refused: followlocation=false, yet a redirect was served"
grep -q followlocation redirect-refused.log ||
    fail "redirect-refused: the message does not name followlocation: $(cat redirect-refused.log)"

# sslverify=false with a self-signed certificate (nginx); without it, the
# same line fails.
if command -v openssl >/dev/null && [ -x /usr/sbin/nginx ] &&
   /usr/sbin/nginx -V 2>&1 | grep -q -- --with-http_ssl_module; then
    start_nginx_self_signed "$tmp/www" "DNS:localhost, IP:127.0.0.1"
    url=https://localhost:$NGINX_PORT/disk.img
    ok self-signed <<'EOF'
nbdkit -r curl "$url" sslverify=false --run 'nbdinfo --size "$uri"'
EOF
    run_line self-signed-verified <<'EOF'
nbdkit -r curl "$url" --run 'nbdinfo --size "$uri"'
EOF
    [ "$rc" -ne 0 ] || fail "self-signed-verified: a self-signed certificate was trusted"
else
    echo "SKIP (part): sslverify=false needs openssl and nginx with ssl"
fi

# A header-script (the supervisor runs it, as --user: the token must be
# readable by nobody when the test runs as root).
chmod 711 "$tmp"
mkdir -m 755 "$tmp/tokdir"
printf 'tok-Compat-9d2e\n' > "$tmp/tokdir/token"
token=$tmp/tokdir/token
url=$(url_of header-script)
ok header-script ' authz="Bearer tok-Compat-9d2e" ' <<'EOF'
nbdkit -r curl "$url" header-script='printf "Authorization: Bearer %s\n" "$(cat '"$token"')"' header-script-renew=600 --run 'nbdinfo --size "$uri"'
EOF

# A proxy that wants credentials (a corporate network), with Debian's
# tinyproxy: the web server sees its Via header.
if command -v tinyproxy >/dev/null; then
    chmod 711 "$tmp"            # tinyproxy runs as nobody when we are root
    start_tinyproxy cmdline 'BasicAuth me pw-C0mpat-2b7d'
    url=$(url_of proxied)
    ok proxied ' via="' <<'EOF'
nbdkit -r curl "$url" proxy="http://127.0.0.1:$PROXY_PORT" proxy-user=me proxy-password=+"$tmp/password.txt" --run 'nbdcopy "$uri" out.img'
EOF
    grep -q 'proxied.img' cmdline-proxy.log || fail "proxied: the proxy logged no request"
    ! grep -q 'pw-C0mpat' proxied.log || fail "proxied: the password is in nbdcurld's log"
else
    echo "SKIP (part): a proxy line needs tinyproxy"
fi

# ---- lines that must be refused, and how ----
url=$(url_of literal-password)
refused literal-password '\+FILE|-FD|file|descriptor' <<'EOF'
nbdkit -r curl "$url" user=me password=secret-Pw-6e1 --run 'touch ran'
EOF
! grep -q 'secret-Pw-6e1' literal-password.log literal-password.out ||
    fail "literal-password: the password was echoed"
url=$(url_of misspelt)
refused misspelt 'sslverify' <<'EOF'
nbdkit -r curl "$url" sslverfy=false --run 'touch ran'
EOF
url=$(url_of proxy)
refused proxy 'socks5.*not supported|http:// or https:// proxy' <<'EOF'
nbdkit -r curl "$url" proxy=socks5://proxy.example.com:1080 --run 'touch ran'
EOF

keep_plugin=yes
url=$(url_of oldstyle)
refused oldstyle 'newstyle protocol.*drop -o' <<'EOF'
nbdkit -o -r curl "$url" --run 'touch ran'
EOF
url=$(url_of multi-conn-bad)
refused multi-conn-bad 'multi-conn-mode= takes auto, emulate, plugin, unsafe or disable' <<'EOF'
nbdkit -r --filter=multi-conn curl "$url" multi-conn-mode=always --run 'touch ran'
EOF
url=$(url_of multi-conn-dirty-bad)
refused multi-conn-dirty-bad 'multi-conn-track-dirty= takes fast, connection or off' <<'EOF'
nbdkit -r --filter=multi-conn curl "$url" multi-conn-track-dirty=slow --run 'touch ran'
EOF
# multi-conn asked for on a writable export (a file: URL) cannot be
# honoured: refused, naming what to change.
url=file://$tmp/www/disk.img
refused multi-conn-writable 'writable.*read-only \(-r or --export-ro\)' <<'EOF'
nbdkit --filter=multi-conn curl "$url" multi-conn-mode=unsafe --run 'touch ran'
EOF
unset keep_plugin

if grep -h 'killed by signal' ./*.log; then
    fail "a process was killed by a signal"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
