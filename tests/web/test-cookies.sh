#!/usr/bin/env bash
# cookiefile= and cookiejar= (nbdkit's curl plugin parameters).  With
# cookiefile=FILE the supervisor reads FILE at start and every fetcher
# loads its cookies into libcurl's cookie engine: each request (the open,
# and the range reads) carries those whose domain matches, and cookies the
# server sets (on the HEAD, on a redirect) go back with later requests.
# cookiefile= alone turns the engine on without cookies.  Without the
# key, server cookies are not kept.  A file too long, missing or not a
# regular file stops the start with the reason; the cookies never reach
# nbdcurld's log.  cookiejar= is refused with the reason (a fetcher's
# sandbox may write no file).  tests/lib/web-server.py logs each request's
# Cookie header; its /set-cookie/ and /cookie-required/ modes refuse
# (403) a request without the cookie they set.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy

serve_image 1M
sum=$(md5_of www/disk.img)

url() {
    [ -e "www/$1.img" ] || ln -s disk.img "www/$1.img"
    echo "$WEB_URL/$2/$1.img"
}

# every NAME STRING: requests for NAME.img were made, a range read among
# them, and each log line has STRING.
every() {
    local lines bad
    lines=$(web_requests "$1")
    grep -q '^GET .* range=bytes=[0-9]' <<<"$lines" ||
        fail "$1: no range read reached the web server: $lines"
    bad=$(grep -vF -- "$2" <<<"$lines" || true)
    [ -z "$bad" ] || fail "$1: requests without '$2': $(head -n 3 <<<"$bad")"
}

# none NAME STRING: no request for NAME.img has STRING.
none() {
    local bad
    bad=$(web_requests "$1" | grep -F -- "$2" || true)
    [ -z "$bad" ] || fail "$1: requests with '$2': $(head -n 3 <<<"$bad")"
}

# refused NAME PATTERN ARGS...: nbdcurld ARGS stops at start, before any
# request, with a message matching PATTERN.
refused() {
    refused_at_start "$@"
    [ -z "$(web_requests "$1")" ] || fail "$1: requests reached the web server"
}

# ---- cookiefile=FILE: the file's cookies on every request ----
# Netscape format (tab-separated: domain, subdomains, path, secure,
# expiry, name, value) and a Set-Cookie line; comments and blank lines;
# a cookie of another domain, which must not be sent here.
{
    printf '# Netscape HTTP Cookie File\n\n'
    printf '127.0.0.1\tFALSE\t/\tFALSE\t0\tfile\tS3cret-from-file\r\n'
    printf 'other.invalid\tFALSE\t/\tFALSE\t0\tother\tnot-for-this-host\n'
    printf 'Set-Cookie: lang=en; domain=127.0.0.1; path=/\n'
} > cookies.txt
copy_checked file "$(url file good)" cookiefile="$tmp/cookies.txt"
every file 'file=S3cret-from-file'
every file 'lang=en'
none file 'not-for-this-host'
web_requests file | grep -q '^HEAD ' || fail "file: no HEAD"
grep -q 'reads go through libcurl (cookiefile=' file.log ||
    fail "file: the reads did not go through libcurl: $(grep -i 'reads' file.log)"
! grep -q 'S3cret-from-file' file.log || fail "file: the cookie is in nbdcurld's log"
# /chunked/: every read through libcurl, on more than one handle.
copy_checked file-chunked "$(url file-chunked chunked)" cookiefile="$tmp/cookies.txt" connections=4
every file-chunked 'file=S3cret-from-file'

# In a --config file, cookiefile is a path relative to the file.
mkdir etc elsewhere
cp cookies.txt etc/session.txt
ln -s disk.img www/conf.img
printf '[export conf]\nurl = %s\ncookiefile = session.txt\n' "$WEB_URL/good/conf.img" \
    > etc/nbdcurld.conf
(cd elsewhere && copy_checked conf --config ../etc/nbdcurld.conf) || exit 1
every conf 'file=S3cret-from-file'

# A redirect to another origin (127.0.0.2): the cookie for 127.0.0.1 is
# not sent there, neither on the open nor on the reads.
start_two_origins "$tmp/www" first.log second.log
ln -s disk.img www/origin.img
copy_checked origin "http://127.0.0.1:$TWO_ORIGINS_PORT/redirect-to/127.0.0.2:$TWO_ORIGINS_PORT/origin.img" \
    cookiefile="$tmp/cookies.txt"
grep '^HEAD ' first.log | grep 'file=S3cret-from-file' | grep -q 'lang=en' ||
    fail "origin: the first origin did not get the cookies: $(cat first.log)"
grep -q '^GET /good/origin.img range=bytes=' second.log || fail "origin: no read of the other origin"
! grep -q 'S3cret\|lang=en' second.log ||
    fail "origin: the cookies went to the other origin: $(grep S3cret second.log | head -n 2)"

# ---- cookies the server sets go back only with the engine on ----
copy_checked engine "$(url engine set-cookie)" cookiefile=
web_requests engine | grep -q '^HEAD .* cookie=- ' ||
    fail "engine: the HEAD carried a cookie nobody set: $(web_requests engine | head -n 1)"
lines=$(web_requests engine | grep '^GET ')
bad=$(grep -vF 'cookie="srv=granted"' <<<"$lines" || true)
[ -n "$lines" ] && [ -z "$bad" ] || fail "engine: reads without the server's cookie: $bad"
# Engine off: the reads are refused (403), the copy fails.
echo "== no-engine (must fail)"
expect_fail "$NBDCURLD" -r --run "nbdcopy \"\$uri\" no-engine.img" "$(url no-engine set-cookie)" \
    </dev/null 2>no-engine.log
refused_without_cookie() {
    web_requests no-engine | grep -q '^GET .* status=403 .* cookie=- '
}
eventually 10 refused_without_cookie ||
    fail "no-engine: no read was refused for want of the cookie"
none no-engine 'srv=granted'

# A cookie set on a redirect goes with the request it leads to, and with
# the reads of the final URL.
copy_checked redirect "$(url redirect cookie-redirect)" cookiefile=
lines=$(web_requests redirect | grep ' /cookie-required/')
grep -q '^GET ' <<<"$lines" || fail "redirect: no read of the final URL"
bad=$(grep -vF 'cookie="srv=granted"' <<<"$lines" || true)
[ -z "$bad" ] || fail "redirect: requests without the server's cookie: $bad"
echo "== redirect without the engine (must fail)"
expect_fail "$NBDCURLD" -r --run "nbdcopy \"\$uri\" no-redirect.img" \
    "$(url no-redirect cookie-redirect)" </dev/null 2>no-redirect.log
none no-redirect 'srv=granted'

# ---- files refused at start ----
head -c 8193 /dev/zero | tr '\0' 'x' > big.txt
refused big 'cookiefile=.*big.txt.*longer than 8192 bytes' "$(url big good)" cookiefile="$tmp/big.txt"
refused missing 'cookiefile=.*missing.txt.*No such file' "$(url missing good)" \
    cookiefile="$tmp/missing.txt"
mkdir dir.txt
refused directory 'cookiefile=.*not a regular file' "$(url directory good)" cookiefile="$tmp/dir.txt"
printf 'x\001y\n' > control.txt
refused control 'cookiefile=.*line 1: a control character' "$(url control good)" \
    cookiefile="$tmp/control.txt"
! grep -q 'x.y' control.log || fail "control: the line is quoted in the message"

printf 'Set-Cookie: nodomain=1; path=/\n' > nodomain.txt
refused nodomain 'cookiefile=.*line 1: a Set-Cookie line without domain=' "$(url nodomain good)" \
    cookiefile="$tmp/nodomain.txt"

# With cookie= or a Cookie header= there would be two Cookie headers.
refused with-cookie 'cookiefile= cannot be combined with cookie=' "$(url with-cookie good)" \
    cookiefile= cookie=a=b
refused with-header 'cookiefile= cannot be combined' "$(url with-header good)" \
    cookiefile="$tmp/cookies.txt" 'header=Cookie: a=b'

# ---- cookiejar= ----
refused jar 'cookiejar=.*cannot save cookies.*sandbox.*cookiefile=' "$(url jar good)" \
    cookiefile= cookiejar="$tmp/jar.txt"
[ ! -e jar.txt ] || fail "jar: the jar was written"

# No fetcher died by a signal (seccomp's SIGSYS) along the way.
if grep -h 'killed by signal' ./*.log; then
    fail "a process was killed by a signal"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
echo "all cookie tests passed"
