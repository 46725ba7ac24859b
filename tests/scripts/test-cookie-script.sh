#!/usr/bin/env bash
# cookie-script= (nbdkit's meaning): the one line the script prints goes as
# the Cookie header of every request.  The web server takes the token as
# the cookie token=TOKEN; it changes every 2 s, so 401s renew it.  Also:
# nbdkit's rule that cookie-script= and cookie= (header-script= and
# header=) do not go together, and the renewal keys without their script.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy

serve_token_image 8M 2 0.3
sum=$(md5_of www/disk.img)
start_nbdcurld -r -v "$WEB_URL/token/disk.img" connections=2 \
    cookie-script='printf "token=%s\n" "$(cat '"$pub"'/token)"' cookie-script-renew=600

nbdcopy --connections=1 --requests=2 --request-size=524288 "$NBD_URI" out.img || fail "the copy failed: $(tail -n 5 "$NBDCURLD_LOG")"
[ "$(md5_of out.img)" = "$sum" ] || fail "the copy differs"
eventually 10 grep -q '^GET /token/disk.img .* status=206 .* cookie="token=tok-' "$WEB_LOG" ||
    fail "no read carried the cookie: $(tail -n 3 "$WEB_LOG")"
grep -q 'authz=-' "$WEB_LOG" || fail "an Authorization header went"
echo "401 replies: $(grep -c ' status=401 ' "$WEB_LOG" || true)"
! grep -q 'token=tok-' "$NBDCURLD_LOG" || fail "the cookie is in the log"
stop_nbdcurld

# Refused at start, with what to do.
expect_usage() {
    local want=$1
    shift
    if "$NBDCURLD" -r "$WEB_URL/token/disk.img" "$@" --run true 2> err.txt; then
        fail "accepted: $*"
    fi
    grep -qF -- "$want" err.txt || fail "$*: $(cat err.txt)"
}
expect_usage 'cookie-script= and cookie= cannot be used together' \
    cookie-script='echo a=b' cookie=a=b
expect_usage 'header-script= and header= cannot be used together' \
    header-script='echo X-A: b' 'header=X-A: b'
expect_usage 'cookie-script-renew= needs cookie-script=' cookie-script-renew=5
expect_usage 'header-script-renew= must be a number from 1' header-script='true' header-script-renew=0
echo a > img
if "$NBDCURLD" -r "file://$tmp/img" header-script='true' --run true 2> err.txt; then
    fail "a file: export with a header-script was accepted"
fi
grep -q 'are for network URLs' err.txt || fail "file: export: $(cat err.txt)"
