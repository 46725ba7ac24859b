#!/usr/bin/env bash
# Interim (1xx) replies are counted per request, however they arrive: a
# few are fine, more than MAX_INTERIM_RESPONSES (4) fail the read with
# EIO at once, whether they come one segment at a time (which gave the
# direct reads a fresh count and a fresh deadline each time) or all
# together; through libcurl (reads larger than the data pipe takes) too.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires_python_nbd

serve_image 2M
start_nbdcurld -r -v --export "few=$WEB_URL/interim-segments/disk.img" \
    --export "flood=$WEB_URL/interim-flood/disk.img" \
    --export "burst=$WEB_URL/many-interim/disk.img"

# Direct reads (2 KiB: the data pipe takes them however small the kernel
# made it) and reads through libcurl (over 256 KiB).
ranges=(0:2048 1000000:300000 70000:2048)

echo "== few"
read_ranges "$(nbd_uri few)" www/disk.img "${ranges[@]}" > few.out ||
    fail "few: $(cat few.out)"
cat few.out
[ "$(grep -c ' ok ' few.out)" -eq 3 ] || fail "few: a read failed"

for m in flood burst; do
    echo "== $m"
    # The flood goes on for a minute: a read that waits for it is wrong.
    timeout 40 $PY "$srcdir/lib/read-ranges.py" "$(nbd_uri "$m")" www/disk.img \
        "${ranges[@]}" > "$m.out" || fail "$m: $(cat "$m.out")"
    cat "$m.out"
    [ "$(grep -c ' EIO ' "$m.out")" -eq 3 ] || fail "$m: a read did not fail"
    awk '$4 > 10 { exit 1 }' "$m.out" || fail "$m: a read took more than 10 s"
    [ "$(grep -c "export \"$m\".*failed: more than 4 interim" "$NBDCURLD_LOG")" -eq 3 ] ||
        fail "$m: nbdcurld did not say why every read failed"
done
