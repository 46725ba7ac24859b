#!/usr/bin/env bash
# header-script= (nbdkit's meaning): the supervisor runs the script, and
# the lines it prints go with every request of the export's fetchers.
# The web server's bearer token changes every 2 s and a stale one gets
# 401; each GET waits 0.3 s and the copy reads 512 KiB two at a time, in
# a shuffled order, so it outlives several tokens.  With a
# renewal time far off, only the 401s renew the token (each refused read
# goes again once, with the new one); with header-script-renew=1 the timer
# renews it too.  Both copies must be byte-exact.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires_python_nbd

serve_token_image 16M 2 0.3
sum=$(md5_of www/disk.img)
# A smaller image for reads small enough to go direct (spliced, without
# libcurl: fetcher-direct.c), whose 401s take the same way back.
head -c 4M www/disk.img > www/small.img
small_sum=$(md5_of www/small.img)
# Each run appends its $iteration to a file of its own.
script() {
    printf 'printf "Authorization: Bearer %%s\\n" "$(cat %s/token)"; echo "$iteration" >> %s/%s.runs' \
        "$pub" "$pub" "$1"
}
start_nbdcurld -r -v \
    --export "long=$WEB_URL/token/disk.img" connections=2 \
        "header-script=$(script long)" header-script-renew=3600 \
    --export "short=$WEB_URL/token/disk.img" connections=2 \
        "header-script=$(script short)" header-script-renew=1 \
    --export "direct=$WEB_URL/token/small.img" connections=2 \
        "header-script=$(script direct)" header-script-renew=3600

# copy NAME [REQUEST_SIZE [SUM]]: the export into NAME.img, REQUEST_SIZE
# bytes a read, two at a time, in a shuffled order: many GETs, each held
# 0.3 s.  (In order they would be read ahead in large windows, a few GETs
# in all, and the copy would not outlive a token.)
copy() {
    local start=$SECONDS
    rm -f "$1.img"
    $PY - "$(nbd_uri "$1")" "$1.img" "${2:-524288}" <<'PYEOF' ||
import random, sys
import nbd
uri, out, step = sys.argv[1], sys.argv[2], int(sys.argv[3])
h = nbd.NBD()
h.connect_uri(uri)
size = h.get_size()
offsets = list(range(0, size, step))
random.Random(1).shuffle(offsets)
inflight = []
with open(out, "wb") as f:
    f.truncate(size)
    while offsets or inflight:
        while offsets and len(inflight) < 2:
            offset = offsets.pop()
            buf = nbd.Buffer(min(step, size - offset))
            inflight.append((h.aio_pread(buf, offset), buf, offset))
        h.poll(-1)
        for item in list(inflight):
            if h.aio_command_completed(item[0]):       # raises on an error
                inflight.remove(item)
                f.seek(item[2])
                f.write(item[1].to_bytearray())
h.shutdown()
PYEOF
        fail "$1: the copy failed: $(tail -n 5 "$NBDCURLD_LOG")"
    [ "$(md5_of "$1.img")" = "${3:-$sum}" ] || fail "$1: the copy differs"
    echo "$1: copied in $((SECONDS - start)) s, $(wc -l < "$pub/$1.runs") runs of the script"
}

copy long
refused=$(grep -c ' status=401 ' "$WEB_LOG" || true)
[ "$refused" -ge 1 ] || fail "long: no request was refused: the copy did not outlive a token"
grep -q 'HTTP 401 for a read: renewing' "$NBDCURLD_LOG" ||
    fail "long: no read was renewed after a 401"
[ "$(wc -l < "$pub/long.runs")" -ge 2 ] || fail "long: the script ran only once"
# Iterations count from 0, one more each run.
[ "$(head -n 2 "$pub/long.runs" | tr '\n' ' ')" = "0 1 " ] ||
    fail "long: \$iteration: $(tr '\n' ' ' < "$pub/long.runs")"
! grep -q 'Bearer tok-' "$NBDCURLD_LOG" || fail "a token is in the log"

copy short
[ "$(wc -l < "$pub/short.runs")" -ge 3 ] ||
    fail "short: header-script-renew=1 did not rerun the script"
echo "401 replies: $(grep -c ' status=401 ' "$WEB_LOG")"

# 128 KiB reads: spliced; a 401 there is renewed and retried the same way.
# Three at a time: fewer in flight, and so few bytes, would be read ahead
# through the fetcher's store (READAHEAD_MAX_CLIENT_BYTES), not spliced.
copy direct 131072 "$small_sum"
grep -q 'export "direct": reads of up to .* go direct' "$NBDCURLD_LOG" ||
    fail "direct: the reads did not go direct"
grep -q '^GET /token/small.img .* status=401 ' "$WEB_LOG" ||
    fail "direct: no read was refused"
