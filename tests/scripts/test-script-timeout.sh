#!/usr/bin/env bash
# A script that does not end is killed after SCRIPT_TIMEOUT, with what it
# started (its process group); the export does not open, and the
# supervisor served on meanwhile: another export opens while it hangs.
# The build with test hooks (nbdcurld-test) waits 6 s where the installed
# one waits 60: the same code.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdinfo

[ -x "${NBDCURLD_TEST:-}" ] || { echo "$0: SKIP: no test binary (NBDCURLD_TEST)" >&2; exit 77; }
NBDCURLD=$NBDCURLD_TEST
serve_token_image 1M 0 0
u=$WEB_URL/token/disk.img
start_nbdcurld -r \
    --export "hangs=$u" header-script="sleep 1000 & sleep 1001" \
    --export "fine=$u" header-script='printf "Authorization: Bearer %s\n" "$(cat '"$pub"'/token)"'

start=$SECONDS
nbdinfo --size "$(nbd_uri hangs)" > /dev/null 2>&1 &
hanging=$!
sleep 1
# The supervisor does not wait for the script: the other export opens.
nbdinfo --size "$(nbd_uri fine)" > size.txt || fail "fine: did not open while the other script hangs"
[ "$(cat size.txt)" = 1048576 ] || fail "fine: size $(cat size.txt)"
kill -0 "$hanging" 2>/dev/null || fail "fine: waited for the hanging script"
if wait "$hanging"; then
    fail "hangs: the export opened"
fi
took=$((SECONDS - start))
echo "hangs: refused after $took s"
[ "$took" -ge 5 ] && [ "$took" -le 30 ] || fail "hangs: refused after $took s, not about 6"
eventually 10 grep -q 'export "hangs": header-script failed: still running after 6 seconds: killed' \
    "$NBDCURLD_LOG" || fail "no log line: $(tail -n 3 "$NBDCURLD_LOG")"
# Killed with its process group: what it started in the background too.
for i in $(seq 30); do
    pgrep -f '^sleep 100[01]$' > /dev/null || break
    sleep 0.1
done
! pgrep -f '^sleep 100[01]$' > /dev/null ||
    fail "what the script started lives on: $(pgrep -a -f '^sleep 100[01]$')"
