#!/usr/bin/env bash
# nbdkit's curl plugin parameters as key=value after the URL:
# `nbdcurld [OPTIONS] URL key=value...` and `nbdcurld [OPTIONS] url=URL
# key=value...`.  Each key nbdcurld implements is accepted, applied, and
# seen by the web server: tests/lib/web-server.py logs every request's
# User-Agent, Cookie, Authorization and the test headers X-Nbdcurld-Test
# and X-Nbdcurld-Test2, so a case checks the opening HEAD (or the GET probe
# when HEAD is refused), the direct range reads (/good/) and the libcurl
# ones (/chunked/).  After a redirect to another origin, Authorization and
# Cookie are not sent there, other headers are.  Malformed values, keys
# not implemented yet and misspelt keys are refused at start, with a
# message that names the key (or the nearest known one).
#
# Per-export keys: tests/web/test-curl-keys-export.sh; whole nbdkit command
# lines: tests/cli/test-nbdkit-command-lines.sh.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy nbdinfo

serve_image 1M
sum=$(md5_of www/disk.img)
version=$("$NBDCURLD" -V | awk '{ print $2; exit }')    # "nbdcurld 0.1.0"
[ -n "$version" ] || fail "nbdcurld -V printed no version"

# url NAME MODE [QUERY]: the URL of www/NAME.img (a link to disk.img) in
# web-server.py's MODE.  Each case reads its own name, so the web server's
# log lines for that name are that case's requests.
url() {
    [ -e "www/$1.img" ] || ln -s disk.img "www/$1.img"
    echo "$WEB_URL/$2/$1.img${3:+?$3}"
}

# copy NAME ARGS...: nbdcurld -v -r ARGS (a URL and keys) serves the export
# while nbdcopy $COPY_OPTS copies it to NAME.img, byte-exact; nbdcurld's
# stderr goes to NAME.log.
COPY_OPTS=
copy() {
    local name=$1
    shift
    echo "== $name"
    rm -f "$name.img"
    "$NBDCURLD" -v -r --run "nbdcopy $COPY_OPTS \"\$uri\" $name.img" "$@" \
        2>"$name.log" </dev/null ||
        fail "$name: nbdcurld $* failed: $(tail -n 5 "$name.log")"
    [ "$(md5_of "$name.img")" = "$sum" ] || fail "$name: the copy differs"
    # The web server writes a line once its reply has been sent.
    sleep 0.1
}

# none NAME STRING: no request for NAME.img contains STRING.
none() {
    local bad
    bad=$(web_requests "$1" | grep -F -- "$2" || true)
    [ -z "$bad" ] || fail "$1: requests with '$2': $(head -n 3 <<<"$bad")"
}

# has_head NAME: the opening HEAD for NAME.img was logged.
has_head() {
    web_requests "$1" | grep -q '^HEAD ' || fail "$1: no HEAD reached the web server"
}

# not_in_log NAME SECRET: nbdcurld's stderr for case NAME never shows SECRET.
not_in_log() {
    ! grep -qF -- "$2" "$1.log" ||
        fail "$1: nbdcurld logged a secret: $(grep -F -- "$2" "$1.log" | head -n 2)"
}

# refused NAME PATTERN ARGS...: nbdcurld ARGS exits at start (the --run
# command never runs) with an error matching PATTERN (grep -iE), no
# request for NAME.img reaches the web server, and nothing crashes.
refused() {
    local name=$1 pattern=$2 rc=0
    shift 2
    echo "== refused: $name"
    rm -f "ran-$name"
    "$NBDCURLD" -r --run "touch '$tmp/ran-$name'" "$@" </dev/null \
        >"$name.log" 2>&1 || rc=$?
    [ "$rc" -ne 0 ] || fail "$name: accepted: nbdcurld $*"
    [ "$rc" -lt 128 ] || fail "$name: killed by signal $((rc - 128)): nbdcurld $*"
    [ ! -e "ran-$name" ] || fail "$name: refused only after the export was served"
    grep -qiE -- "$pattern" "$name.log" ||
        fail "$name: the message does not match /$pattern/: $(cat "$name.log")"
    [ -z "$(web_requests "$name")" ] ||
        fail "$name: requests reached the web server: $(web_requests "$name" | head -n 2)"
}

# not_read NAME PATTERN ARGS...: nbdcurld ARGS serves nothing a copy can
# read, and its log says why (PATTERN).
not_read() {
    local name=$1 pattern=$2
    shift 2
    echo "== $name (must fail)"
    rm -f "$name.img"
    expect_fail "$NBDCURLD" -r --run "nbdcopy \"\$uri\" $name.img" "$@" \
        </dev/null 2>"$name.log"
    [ ! -s "$name.img" ] || fail "$name: data was copied"
    grep -iqE "$pattern" "$name.log" ||
        fail "$name: the log does not say why: $(cat "$name.log")"
}

# ---- the default User-Agent, and no header of the tests ----
copy default "$(url default good)"
has_head default
web_every default " ua=\"nbdcurld/$version\" " " cookie=- " " xtest=- " " xtest2=- " " authz=- "

# ---- header, cookie and user-agent, on every kind of request ----
# /good/: HEAD, then direct reads; /chunked/: reads through libcurl;
# /head-405/: the GET probe that replaces a refused HEAD.  Values with '='
# and spaces in them: only the first '=' ends the key.
ua='Mozilla/5.0 (X11; Linux x86_64) image-import/2.1'
cookie='session=c00k1e-S3cret; theme=dark'
for mode in good chunked head-405; do
    copy "keys-$mode" "$(url "keys-$mode" "$mode")" \
        'header=X-Nbdcurld-Test: first=1; value' \
        'header=X-Nbdcurld-Test2: second' \
        "cookie=$cookie" "user-agent=$ua"
    web_every "keys-$mode" ' xtest="first=1; value" ' ' xtest2="second" ' \
        " cookie=\"$cookie\" " " ua=\"$ua\" "
    none "keys-$mode" 'nbdcurld/'
    not_in_log "keys-$mode" 'c00k1e-S3cret'
done
has_head keys-good
web_requests keys-head-405 | grep -q '^HEAD .* status=405 ' ||
    fail "keys-head-405: no HEAD refused with 405 before the GET probe"
grep -q 'reads go through libcurl' keys-chunked.log ||
    fail "keys-chunked: the reads did not go through libcurl: $(tail -n 5 keys-chunked.log)"

# The header key twice with the same name: both sent; the default
# User-Agent stays when only headers are given.
copy header-twice "$(url header-twice good)" \
    'header=X-Nbdcurld-Test: one' 'header=X-Nbdcurld-Test: two'
web_every header-twice ' xtest="one | two" ' ' xtest2=- ' " ua=\"nbdcurld/$version\" "

# Malformed headers are refused at start.
refused header-no-colon 'header' "$(url header-no-colon good)" 'header=X-Nbdcurld-Test only'
refused header-bad-name 'header' "$(url header-bad-name good)" 'header=X Nbdcurld Test: 1'
refused header-empty-name 'header' "$(url header-empty-name good)" 'header=: no name'
refused header-crlf 'header' "$(url header-crlf good)" \
    $'header=X-Nbdcurld-Test: a\r\nX-Injected: 1'
refused header-lf 'header' "$(url header-lf good)" $'header=X-Nbdcurld-Test: a\nX-Injected: 1'
refused header-cr 'header' "$(url header-cr good)" $'header=X-Nbdcurld-Test: a\rX-Injected: 1'

# ---- cookie from a file and from a descriptor (like password) ----
# A VMware-style cookie, with double quotes in it.
printf 'vmware_soap_session="5d7e0c21-fa0b-4c44-9c1f-0e43c1f2b6a7"\n' > cookie.txt
copy cookie-file "$(url cookie-file good)" "cookie=+$tmp/cookie.txt"
web_every cookie-file ' cookie="vmware_soap_session=\"5d7e0c21-fa0b-4c44-9c1f-0e43c1f2b6a7\"" '
not_in_log cookie-file '5d7e0c21-fa0b'
copy cookie-fd "$(url cookie-fd chunked)" cookie=-7 7<cookie.txt
web_every cookie-fd ' cookie="vmware_soap_session=\"5d7e0c21-fa0b-4c44-9c1f-0e43c1f2b6a7\"" '
not_in_log cookie-fd '5d7e0c21-fa0b'
refused cookie-nofile 'no such file|cookie' "$(url cookie-nofile good)" "cookie=+$tmp/none.txt"

# ---- user and password (from a file, a descriptor), as --auth-* ----
password='pw-K3y-9f2e'
printf '%s\n' "$password" > pw.txt
basic="Basic $(printf 'alice:%s' "$password" | base64)"
copy auth-options --auth-user alice --auth-password "+$tmp/pw.txt" "$(url auth-options good)"
web_every auth-options " authz=\"$basic\" " ' auth=yes '
copy auth-keys "$(url auth-keys good)" user=alice "password=+$tmp/pw.txt"
web_every auth-keys " authz=\"$basic\" " ' auth=yes '
not_in_log auth-keys "$password"
copy auth-fd "$(url auth-fd chunked)" user=alice password=-7 7<pw.txt
web_every auth-fd " authz=\"$basic\" "
not_in_log auth-fd "$password"
# A literal password: refused, saying how to pass it, without echoing it.
refused auth-literal '\+FILE|-FD|file|descriptor' \
    "$(url auth-literal good)" user=alice "password=$password"
grep -qi 'password' auth-literal.log || fail "auth-literal: the message does not name password"
not_in_log auth-literal "$password"

# ---- connections: at most N open to the web server ----
# /trickle/ makes each read last about a second, so that reads overlap:
# nbdcopy keeps 4 reads of 256 KiB in flight on one NBD connection.
COPY_OPTS='--connections=1 --requests=16'
max_conns() {
    web_requests "$1" | sed -nE 's/.* conns=([0-9]+)( .*)?$/\1/p' | sort -n | tail -n 1
}
copy conns-8 "$(url conns-8 trickle)" connections=8
copy conns-2 "$(url conns-2 trickle)" connections=2
COPY_OPTS=
echo "most connections open: connections=8: $(max_conns conns-8), connections=2: $(max_conns conns-2)"
# The HEAD's connection may still be open: one more than N.
[ "$(max_conns conns-2)" -le 3 ] ||
    fail "connections=2: $(max_conns conns-2) connections to the web server at once"
[ "$(max_conns conns-8)" -ge 3 ] ||
    fail "connections=8: the reads never overlapped (at most $(max_conns conns-8) connections); the check above proves nothing"
refused conns-abc 'connections' "$(url conns-abc good)" connections=abc
refused conns-zero 'connections' "$(url conns-zero good)" connections=0

# ---- timeout ----
copy timeout-60 "$(url timeout-60 good)" timeout=60
# /delay/ holds every GET for 2 s: a 1 s limit fails the read.
echo "== timeout-1"
rm -f timeout-1.img
expect_fail "$NBDCURLD" -v -r --run 'nbdcopy "$uri" timeout-1.img' \
    "$(url timeout-1 delay)" timeout=1 </dev/null 2>timeout-1.log
grep -qi 'timed out' timeout-1.log ||
    fail "timeout=1: no read timed out: $(tail -n 5 timeout-1.log)"
refused timeout-abc 'timeout' "$(url timeout-abc good)" timeout=abc

# ---- followlocation (followed by default: same-origin below) ----
copy follow-true "$(url follow-true redirect)" followlocation=true
copy follow-false-direct "$(url follow-false-direct good)" followlocation=false
echo "== follow-false"
rc=0
"$NBDCURLD" -r --run 'nbdinfo --size "$uri"' "$(url follow-false redirect)" \
    followlocation=false </dev/null >follow-false.log 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "followlocation=false: a redirecting URL was served"
grep -q 'followlocation' follow-false.log ||
    fail "followlocation=false: the error does not name followlocation: $(cat follow-false.log)"
web_requests follow-false | grep -q ' /redirect/follow-false.img .*status=302' ||
    fail "followlocation=false: the redirect was never asked for: $(web_requests follow-false)"
! web_requests follow-false | grep -q ' /good/' || fail "followlocation=false: the redirect was followed"
refused follow-maybe 'followlocation' "$(url follow-maybe good)" followlocation=maybe

# ---- redirects: Authorization and Cookie stay with the origin ----
# Within the origin (/redirect/ -> /good/ on the same server): all sent.
copy same-origin "$(url same-origin redirect)" 'header=X-Nbdcurld-Test: kept' \
    cookie=c=1 user=alice "password=+$tmp/pw.txt"
web_every same-origin ' xtest="kept" ' ' cookie="c=1" ' " authz=\"$basic\" "
web_requests same-origin | grep -q '^GET /good/same-origin.img range=bytes=' ||
    fail "same-origin: the reads did not follow the redirect"
# To another host: two web-server.py on one port (the fetcher's sandbox
# allows only the URL's port), on 127.0.0.1 and 127.0.0.2; the first
# redirects to the second.
start_two_origins "$tmp/www" first.log other.log
port=$TWO_ORIGINS_PORT
# cross-origin NAME ARGS...: a copy through the redirect; ARGS are keys.
cross_origin() {
    local name=$1 lines
    shift
    copy "$name" "http://127.0.0.1:$port/redirect-to/127.0.0.2:$port/disk.img" "$@"
    grep -q '^HEAD /redirect-to/.* status=302 .* xtest="kept" ' first.log ||
        fail "$name: the first server got no request with the headers: $(cat first.log)"
    lines=$(cat other.log)
    grep -q '^GET /good/disk.img range=bytes=' <<<"$lines" ||
        fail "$name: no reads reached the host the redirect led to"
    ! grep -v ' xtest="kept" ' <<<"$lines" | grep -q . ||
        fail "$name: a custom header was not sent after the redirect: $(grep -v ' xtest="kept" ' <<<"$lines" | head -n 2)"
    ! grep -E ' auth=yes | cookie="| authz="' <<<"$lines" | grep -q . ||
        fail "$name: credentials went to another host: $(grep -E ' auth=yes | cookie="| authz="' <<<"$lines" | head -n 2)"
}
# Authorization as a header, and the cookie key.
cross_origin cross-header 'header=X-Nbdcurld-Test: kept' \
    'header=Authorization: Bearer tok-7Q2x' 'cookie=sid=cr0ss-S3cret'
grep -q ' authz="Bearer tok-7Q2x" ' first.log || fail "cross-header: the first server got no Authorization"
grep -q ' cookie="sid=cr0ss-S3cret" ' first.log || fail "cross-header: the first server got no cookie"
not_in_log cross-header 'cr0ss-S3cret'
: > first.log
: > other.log
# user and password, and a Cookie given as a header (any case of its name).
cross_origin cross-user 'header=X-Nbdcurld-Test: kept' 'header=cookie: hdr=h3ader' \
    user=alice "password=+$tmp/pw.txt"
grep -q " authz=\"$basic\" " first.log || fail "cross-user: the first server got no Authorization"
grep -q ' cookie="hdr=h3ader" ' first.log || fail "cross-user: the first server got no Cookie header"

# ---- url=, and URLs with '=' in their query ----
copy url-key "url=$(url url-key good)" 'header=X-Nbdcurld-Test: url='
web_every url-key ' xtest="url=" '
# A presigned URL: its query has '=', it is still the URL.
query='X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature=ab12=='
copy presigned "$(url presigned good "$query")" user-agent=presigned/1
web_every presigned " ua=\"presigned/1\" " "/presigned.img?$query "
copy presigned-url-key "url=$(url presigned-url-key good "$query")"
web_every presigned-url-key "/presigned-url-key.img?$query "

# ---- https: sslverify, cainfo, capath (with nginx, as test-https.sh) ----
if ! command -v openssl >/dev/null || [ ! -x /usr/sbin/nginx ] ||
   ! /usr/sbin/nginx -V 2>&1 | grep -q -- --with-http_ssl_module; then
    echo "SKIP (part): https cases need openssl and nginx with ssl"
else
    mkdir private ca capath
    chmod 700 private
    # Started as root, nbdcurld's fetchers run as nobody: let them reach ca/.
    chmod 711 "$tmp"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=nbdcurld keys CA" \
        -keyout private/ca.key -out ca/ca.pem 2>openssl.err ||
        fail "cannot make a CA: $(cat openssl.err)"
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
        -keyout private/server.key -out private/server.csr 2>openssl.err ||
        fail "cannot make a certificate request: $(cat openssl.err)"
    printf 'basicConstraints = CA:FALSE\nextendedKeyUsage = serverAuth\nsubjectAltName = DNS:localhost, IP:127.0.0.1\n' \
        > private/ext.cnf
    openssl x509 -req -days 2 -in private/server.csr -CA ca/ca.pem \
        -CAkey private/ca.key -CAcreateserial -CAserial private/ca.srl \
        -extfile private/ext.cnf -out private/server.pem 2>openssl.err ||
        fail "cannot sign the certificate: $(cat openssl.err)"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=other CA" \
        -keyout private/other.key -out ca/other.pem 2>openssl.err ||
        fail "cannot make the other CA: $(cat openssl.err)"
    cp ca/ca.pem capath/
    openssl rehash capath 2>/dev/null || c_rehash capath >/dev/null 2>&1 ||
        fail "cannot rehash capath/"
    chmod 755 ca capath
    chmod 644 ca/*.pem capath/*
    # TLS 1.3 too (nginx 1.22 offers up to 1.2 unless told): tls13-ciphers=.
    start_nginx "$tmp/www" ssl "ssl_certificate $tmp/private/server.pem;
        ssl_certificate_key $tmp/private/server.key;
        ssl_protocols TLSv1.2 TLSv1.3;"
    https=https://localhost:$NGINX_PORT/disk.img

    not_read https-default 'certificate|ssl|tls|cipher' "$https"
    for v in false no 0 off; do
        copy "sslverify-$v" "$https" "sslverify=$v"
    done
    for v in true yes 1 on; do
        not_read "sslverify-$v" 'certificate|ssl|tls|cipher' "$https" "sslverify=$v"
    done
    refused sslverify-maybe 'sslverify' "$https" sslverify=maybe
    copy cainfo "$https" "cainfo=$tmp/ca/ca.pem"
    copy capath "$https" "capath=$tmp/capath"
    not_read cainfo-other 'certificate|ssl|tls|cipher' "$https" "cainfo=$tmp/ca/other.pem"
    # The long options are defaults that a key overrides.
    not_read insecure-sslverify-true 'certificate|ssl|tls|cipher' --insecure "$https" sslverify=true
    copy cainfo-over-option --cainfo "$tmp/ca/other.pem" "$https" "cainfo=$tmp/ca/ca.pem"
    # ssl-version=, ssl-cipher-list=, tls13-ciphers= reach OpenSSL: a
    # TLS 1.3 suite nginx does not offer, or a cipher list OpenSSL does
    # not know, serves nothing.
    ca=cainfo=$tmp/ca/ca.pem
    copy tls13-aes128 "$https" "$ca" ssl-version=tlsv1.3 tls13-ciphers=TLS_AES_128_GCM_SHA256
    copy tls12-high "$https" "$ca" ssl-version=tlsv1.2 'ssl-cipher-list=HIGH:!aNULL'
    not_read tls13-ccm8 'certificate|ssl|tls|cipher' "$https" "$ca" ssl-version=tlsv1.3 tls13-ciphers=TLS_AES_128_CCM_8_SHA256
    not_read cipher-list-unknown 'certificate|ssl|tls|cipher' "$https" "$ca" ssl-cipher-list=NO-SUCH-CIPHER
fi
refused ssl-version-sslv3 'SSL 2 and 3 are broken' "$(url sslv good)" ssl-version=sslv3
refused ssl-version-bad 'ssl-version= takes' "$(url sslv good)" ssl-version=tls2
refused cipher-list-space "without spaces" "$(url sslv good)" 'ssl-cipher-list=HIGH MEDIUM'

# ---- resolve= and ipresolve= ----
# A name that never resolves (.invalid, RFC 2606) served through a pin;
# without the pin the same URL fails.  The pin is for that host and port
# only, and the reads (direct and libcurl) follow the open's address.
pinned=http://images.invalid:$WEB_PORT/good/pinned.img
ln -s disk.img www/pinned.img
copy pinned "$pinned" "resolve=images.invalid:$WEB_PORT:127.0.0.1"
web_every pinned
not_read unpinned 'resolve|host' "$pinned"
not_read pinned-other-port 'resolve|host' "$pinned" "resolve=images.invalid:1:127.0.0.1"
refused resolve-malformed 'resolve=.*HOST:PORT:ADDRESS' "$pinned" resolve=images.invalid:127.0.0.1
refused resolve-port 'resolve=.*HOST:PORT:ADDRESS' "$pinned" resolve=images.invalid:99999:127.0.0.1
# ipresolve: a name with only an IPv4 address (pinned), asked for over IPv6,
# cannot be served; over IPv4 it is.
copy ipresolve-v4 "$pinned" "resolve=images.invalid:$WEB_PORT:127.0.0.1" ipresolve=v4
not_read ipresolve-v6 'resolve|host|connect' "$pinned" "resolve=images.invalid:$WEB_PORT:127.0.0.1" ipresolve=v6
refused ipresolve-bad 'ipresolve=.*any, v4 or v6' "$pinned" ipresolve=v5

# ---- tcp-keepalive= and tcp-nodelay= ----
# keepalive_timers NAME ARGS...: with one client reading, the number of
# the server's connections (to the web server) that run a keep-alive timer.
keepalive_timers() {
    local name=$1
    shift
    "$NBDCURLD" -r "$@" --run "$PY -c '
import nbd, os, sys
h = nbd.NBD()
h.connect_uri(os.environ[\"uri\"])
h.pread(65536, 0)
os.system(\"ss -tno state established dport = :$WEB_PORT > $name.ss\")
h.shutdown()
'" </dev/null 2>"$name.log" || fail "$name: $(tail -n 3 "$name.log")"
    grep -c 'timer:(keepalive' "$name.ss" || true
}
if command -v ss >/dev/null; then
    [ "$(keepalive_timers keepalive-default "$(url keepalive good)")" -ge 1 ] ||
        fail "keep-alive is not on by default: $(cat keepalive-default.ss)"
    [ "$(keepalive_timers keepalive-false "$(url keepalive good)" tcp-keepalive=false)" -eq 0 ] ||
        fail "tcp-keepalive=false left keep-alive on: $(cat keepalive-false.ss)"
fi
copy nodelay-false "$(url nodelay good)" tcp-nodelay=false tcp-keepalive=false
refused keepalive-bad 'tcp-keepalive=.*true or false' "$(url keepalive-bad good)" tcp-keepalive=maybe

# ---- protocols= ----
copy protocols-http "$(url protocols good)" protocols=http,https
refused protocols-not-url 'protocols= does not allow' "$(url protocols good)" protocols=https,ftps
refused protocols-unknown 'gopher is none of http, https, ftp and ftps' \
    "$(url protocols good)" protocols=http,gopher

# ---- misspelt keys ----
# sslverfy -> sslverify, heder -> header, useragent -> user-agent,
# cokie -> cookie, conections -> connections.
declare -A misspelt=(
    [sslverfy]=sslverify [heder]=header [useragent]=user-agent
    [cokie]=cookie [conections]=connections
)
for key in "${!misspelt[@]}"; do
    refused "misspelt-$key" "${misspelt[$key]}" "$(url "misspelt-$key" good)" "$key=x"
done

# No fetcher died by a signal (seccomp's SIGSYS) along the way.
if grep -h 'killed by signal' ./*.log; then
    fail "a process was killed by a signal"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
