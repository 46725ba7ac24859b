#!/usr/bin/env bash
# A fetcher taken over (tests/hooks/hostile-fetcher.c, in the test binary) and
# its script channel: a message of the wrong kind or with a payload ends
# that fetcher, and the server serves on; a flood of renewal requests
# runs the export's script at most once a second (SCRIPT_MIN_INTERVAL_MS).
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdinfo
requires_python_nbd
[ -x "${NBDCURLD_TEST:-}" ] || { echo "$0: SKIP: no test binary (NBDCURLD_TEST)" >&2; exit 77; }
NBDCURLD=$NBDCURLD_TEST

serve_token_image 1M 0 0
u=$WEB_URL/token/disk.img
token='printf "Authorization: Bearer %s\n" "$(cat '"$pub"'/token)"'
start_nbdcurld -r \
    --export "good=$u" "header-script=$token" \
    --export "wrong=$u#hostile=script-wrong" header-script='echo "X-A: b"' \
    --export "payload=$u#hostile=script-payload" header-script='echo "X-A: b"' \
    --export "flood=$u#hostile=script-flood" \
        header-script='echo "X-A: b"; echo run >> '"$pub"'/flood.runs'

nbdinfo --size "$(nbd_uri good)" > /dev/null || fail "good: does not open"
for m in wrong payload; do
    nbdinfo --size "$(nbd_uri "$m")" > /dev/null 2>&1 || true
done
# The supervisor says so in its own time, after the client has its answer.
eventually 10 grep -q 'fetcher [0-9]* of export "wrong": unexpected message type 64 on its script channel: ending it' \
    "$NBDCURLD_LOG" || fail "wrong: not ended: $(tail -n 3 "$NBDCURLD_LOG")"
eventually 10 grep -q 'fetcher [0-9]* of export "payload": a malformed message on its script channel: ending it' \
    "$NBDCURLD_LOG" || fail "payload: not ended: $(tail -n 3 "$NBDCURLD_LOG")"

# Holds a connection to the flooding fetcher for 3 s.
$PY - "$(nbd_uri flood)" <<'PY'
import sys, time, nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
time.sleep(3)
h.shutdown()
PY
runs=$(wc -l < "$pub/flood.runs")
echo "flood: the script ran $runs times in about 3 s"
[ "$runs" -ge 2 ] || fail "flood: the renewal requests ran nothing"
[ "$runs" -le 5 ] || fail "flood: the script ran $runs times"

kill -0 "$NBDCURLD_PID" || fail "the server stopped"
nbdinfo --size "$(nbd_uri good)" > /dev/null || fail "good: does not open after the others"
