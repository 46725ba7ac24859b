#!/usr/bin/env bash
# -D curl.verbose=1: every web conversation in the log (libcurl's and the
# direct reads' alike), with nothing secret in it: request header values
# other than a few harmless ones, Set-Cookie values, query strings and the
# user information of URLs (also in libcurl's own lines) are masked.  Without it, no trace; other -D flags are refused.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy

serve_image 1M
sum=$(md5_of "$tmp/www/disk.img")
printf 'SECRETPASSWORD\n' > pw.txt
printf 'session=SECRETCOOKIE\n' > cookie.txt

run() {
    "$NBDCURLD" -r "$@" --run 'nbdcopy "$uri" out.img' 2> log.txt ||
        fail "copy failed: $(cat log.txt)"
    [ "$(md5_of out.img)" = "$sum" ] || fail "the copy differs"
}
no_secrets() {
    if grep -n 'SECRET' log.txt; then
        fail "$1: a secret reached the log"
    fi
}
has() {
    grep -qF -- "$2" log.txt || fail "$1: no trace line with '$2': $(grep trace: log.txt | head -20)"
}

echo "== libcurl (credentials)"
run -D curl.verbose=1 "$WEB_URL/good/disk.img?sig=SECRETSIGNATURE" user=alice password=+pw.txt \
    cookie=+cookie.txt 'header=X-Nbdcurld-Test: SECRETTOKEN'
no_secrets libcurl
has libcurl 'trace: export "": '
has libcurl '> HEAD /good/disk.img?... HTTP/1.1'
has libcurl '> GET /good/disk.img?... HTTP/1.1'
has libcurl '> Authorization: <masked>'
has libcurl '> Cookie: <masked>'
has libcurl '> X-Nbdcurld-Test: <masked>'
has libcurl '> Range: bytes='
has libcurl '< HTTP/1.1 206'
has libcurl '< Content-Range: bytes '
has libcurl '* Connected to 127.0.0.1'

echo "== a password in the URL, after a relative redirect"
# libcurl says "Issue another request to this URL: 'http://alice:...@'"
# after a redirect: the user information is masked there as everywhere.
host=${WEB_URL#http://}
run -D curl.verbose=1 "http://alice:SECRETURLPASSWORD@$host/redirect/disk.img"
no_secrets "URL password"
has "URL password" 'Issue another request to this URL'
has "URL password" 'http://<masked>@'

echo "== cookies the engine keeps"
# libcurl names each cookie it takes in from a server's Set-Cookie, value
# and all ("Added cookie srv="granted" for domain ..."): the value is
# masked, as the cookie file's values (SECRETFROMFILE) are in the request.
printf '127.0.0.1\tFALSE\t/\tFALSE\t0\tfile\tSECRETFROMFILE\n' > jar.txt
run -D curl.verbose=1 "${WEB_URL%/}/set-cookie/disk.img" cookiefile="$tmp/jar.txt"
no_secrets "cookie engine"
if grep -n 'granted' log.txt; then
    fail "cookie engine: the server's cookie value reached the log"
fi
has "cookie engine" 'cookie srv="<masked>" for domain 127.0.0.1'

echo "== a long line: the password past the line's cut"
# A trace line is cut at 512 bytes; a URL whose '@' lies beyond the cut
# is masked as a whole all the same (the line is masked, then cut).
long=$(printf 'a%.0s' $(seq 1 600))
run -D curl.verbose=1 "http://alice:SECRET$long@${WEB_URL#http://}/redirect/disk.img"
no_secrets "long line"
has "long line" 'Issue another request to this URL'

echo "== direct reads (no credentials)"
run -D curl.verbose=1 "$WEB_URL/good/disk.img" 'header=X-Nbdcurld-Test: SECRETTOKEN'
no_secrets direct
has direct '> GET /good/disk.img HTTP/1.1'
has direct '> X-Nbdcurld-Test: <masked>'
has direct '< HTTP/1.1 206'
# The direct reads went through the splice path (their trace has no libcurl
# text between requests): at least one GET was traced without a '*' line
# for its connection; enough to see that both paths trace.
[ "$(grep -c '> GET /good/disk.img' log.txt)" -ge 2 ] || fail "direct: fewer than two GETs traced"

echo "== no -D: no trace"
run "$WEB_URL/good/disk.img"
if grep -q 'trace: ' log.txt; then
    fail "a trace without -D curl.verbose=1"
fi
echo "== -D curl.verbose=0: no trace"
run -D curl.verbose=0 "$WEB_URL/good/disk.img"
if grep -q 'trace: ' log.txt; then
    fail "a trace with -D curl.verbose=0"
fi

echo "== other -D flags refused"
expect_fail "$NBDCURLD" -r -D nbdkit.backend.datapath=0 "$WEB_URL/good/disk.img" --run true 2> log.txt
grep -q 'only curl.verbose=1 applies' log.txt || fail "-D other: $(cat log.txt)"
