#!/usr/bin/env bash
# A server that trickles a body below the minimum rate (MIN_TRANSFER_RATE,
# 1 byte a second, over --stall-timeout) cannot hold a read: it fails with
# EIO within about two windows, direct reads and reads through libcurl
# alike.  A window of 3 s keeps the test short; a good server is not
# bothered by it.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires_python_nbd
requires nbdcopy

serve_image 2M
sum=$(md5_of www/disk.img)
# --retries 0: a stall is worth a retry (tests/web/test-retries.sh), and each
# would take another window; what is timed here is one attempt.
# http-version=1.0 keeps slowlc's reads with libcurl (the direct reads
# speak HTTP/1.1 only).
start_nbdcurld -r -v --retries 0 --stall-timeout 3 --export "slow=$WEB_URL/slow-body/disk.img" \
    --export "slowlc=$WEB_URL/slow-body/disk.img" http-version=1.0 \
    --export "good=$WEB_URL/good/disk.img"

# Direct reads (2 KiB: the data pipe takes it however small the kernel
# made it; over 256 KiB: into the data area) and one through libcurl.
# The one through libcurl runs meanwhile: each read waits for its window.
echo "== slow"
timeout 60 $PY "$srcdir/lib/read-ranges.py" "$(nbd_uri slowlc)" www/disk.img \
    1000000:300000 > slowlc.out &
slowlc_pid=$!
kill_on_exit "$slowlc_pid"
timeout 60 $PY "$srcdir/lib/read-ranges.py" "$(nbd_uri slow)" www/disk.img \
    0:2048 1000000:300000 > slow.out || fail "slow: $(cat slow.out)"
wait "$slowlc_pid" || fail "slow: $(cat slowlc.out)"
cat slowlc.out >> slow.out
cat slow.out
[ "$(grep -c ' EIO ' slow.out)" -eq 3 ] || fail "slow: a read did not fail"
awk '$4 > 12 { exit 1 }' slow.out || fail "slow: a read took more than 12 s"
eventually 10 grep -q 'export "slow".*bytes at offset 0 failed: stalled: .* less than 1 a second' \
    "$NBDCURLD_LOG" || fail "slow: the direct read's failure does not say why"
eventually 10 grep -q 'export "slow".*bytes at offset 1000000 failed: stalled: .* less than 1 a second' \
    "$NBDCURLD_LOG" || fail "slow: the large direct read's failure does not say why"
eventually 10 grep -q 'export "slowlc".*bytes at offset 1000000 failed: .*too slow' "$NBDCURLD_LOG" ||
    fail "slow: libcurl's failure does not say why"

echo "== good"
nbdcopy "$(nbd_uri good)" copy.img || fail "good: copy failed"
[ "$(md5_of copy.img)" = "$sum" ] || fail "good: the copy differs"
