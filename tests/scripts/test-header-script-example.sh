#!/usr/bin/env bash
# nbdkit-curl-plugin(1)'s header-script examples, as the manual writes
# them, with only the servers' URLs changed: a login server that answers
# a POST with a JSON token (curl and jq in the script), and the Docker Hub
# one, whose script calls an executable auth.sh.  The supervisor's filter
# (which the script runs under) must let curl and jq work.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy
requires curl
requires jq

serve_token_image 4M 0 0
sum=$(md5_of www/disk.img)
cat > "$pub/auth.sh" <<AUTH
#!/bin/sh -
curl -s -X POST "$WEB_URL/login" |
     jq -r .token
AUTH
chmod 755 "$pub/auth.sh"

start_nbdcurld -r \
    --export "login=$WEB_URL/token/disk.img" \
        header-script='
          printf "Authorization: Bearer "
          curl -s -X POST '"$WEB_URL"'/login |
               jq -r .token
        ' \
        header-script-renew=50 \
    --export "docker=$WEB_URL/token/disk.img" \
        header-script=' printf "Authorization: Bearer "; '"$pub"'/auth.sh ' \
        header-script-renew=200

for name in login docker; do
    rm -f "$name.img"
    nbdcopy "$(nbd_uri "$name")" "$name.img" ||
        fail "$name: the copy failed: $(tail -n 5 "$NBDCURLD_LOG")"
    [ "$(md5_of "$name.img")" = "$sum" ] || fail "$name: the copy differs"
done
eventually 10 grep -q '^GET /token/disk.img .* authz="Bearer tok-' "$WEB_LOG" ||
    fail "no read carried the bearer token"
! grep -q ' status=401 ' "$WEB_LOG" || fail "a request went without the token"
