#!/usr/bin/env bash
# A client's large reads on a distant link are split into pieces, each
# its own range request on its own web connection (src/fetcher/
# read-split.c), and answered once every piece has arrived and passed
# its checks:
# - through tests/wan-proxy (20 ms, each connection capped), qemu-img
#   convert's 2 MiB reads reach the server as more, smaller ranges, and
#   the copy is byte-exact; on the LAN the reads go whole;
# - a piece refused by the server (404, never retried) fails its read
#   with EIO, and the reads before and after it are right;
# - pieces whose first attempt breaks off are retried on their own, and
#   the copy is byte-exact.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires qemu-img
requires_python_nbd

MIB=1048576
serve_image 40M
# Without meson's MALLOC_PERTURB_: the proxy would fill each new
# connection's queues byte by byte.
MALLOC_PERTURB_=0 start_wan_proxy far "$WEB_PORT" 20 40
FAR=http://127.0.0.1:$WAN_PORT

# range_lengths MODE: the lengths of the range GETs of /MODE/.../disk.img
# in the web server's log, one a line.
range_lengths() {
    grep -E "^GET /$1/([^ ]+/)?disk\.img " "$WEB_LOG" |
        sed -n 's/.* range=bytes=\([0-9]*\)-\([0-9]*\) .*/\1 \2/p' |
        awk '{ print $2 - $1 + 1 }'
}

# pieces: of the lengths on stdin, those of a piece of a 2 MiB read (one
# of n, n = 2 to 16, with the bytes left over on the first ones): other
# lengths are whole reads, reads coalesced, readahead windows.
pieces() {
    awk -v m=$((2 * MIB)) '{ for (n = 2; n <= 16; n++) {
        b = int(m / n); if ($1 == b || ($1 == b + 1 && m % n != 0)) { print; next } } }'
}

# copy URL: qemu-img convert of URL's export to out.img, byte-exact.
copy() {
    rm -f out.img
    timeout 120 "$NBDCURLD" -r -v "$1" \
        --run 'qemu-img convert -f raw -O raw "$uri" out.img' 2> nbdcurld.log ||
        fail "the copy of $1 failed: $(grep -v debug: nbdcurld.log | tail -n 5)"
    cmp out.img www/disk.img || fail "the copy of $1 differs"
}

# Far: qemu-img's 2 MiB reads go in pieces.  The first reads go out
# before the round trips of a few replies are measured, whole; the
# others are split.
copy "$FAR/good/disk.img"
whole=$(range_lengths good | awk -v m=$MIB '$1 >= 2 * m' | wc -l)
pieces=$(range_lengths good | pieces | wc -l)
echo "far: $whole ranges of 2 MiB or more, $pieces pieces"
[ "$pieces" -ge 24 ] ||
    fail "far: $pieces pieces of 2 MiB reads (and $whole whole): the reads were not split"
[ "$pieces" -gt $((2 * whole)) ] ||
    fail "far: only $pieces pieces of 2 MiB reads against $whole whole ones: few reads were split"

# Near: the same copy straight from nginx (quick to answer, as a server
# on a LAN: web-server.py takes a few milliseconds), no piece.  Its
# access log's body sizes are the ranges' lengths.
start_nginx "$tmp/www" "" "access_log $tmp/nginx-access.log;"
copy "$NGINX_URL/disk.img"
lengths=$(awk '$6 == "\"GET" && $9 == 206 { print $10 }' nginx-access.log)
[ -n "$lengths" ] || fail "near: no range GET in nginx's log: $(tail -n 3 nginx-access.log)"
small=$(pieces <<<"$lengths" | wc -l)
[ "$small" -eq 0 ] ||
    fail "near: $small pieces of 2 MiB reads: reads were split on a LAN: $(pieces <<<"$lengths" | head -n 3)"

# A piece refused (404, never retried) or damaged (the range shifted: a
# 206 with the wrong bytes, which only the checks catch): eight small
# reads (whole, backwards: nothing to read ahead) measure the round
# trip; the ninth read is split, and the tenth range GET of the path,
# one of its pieces, gets the fault; the read after it is unaffected.
small_reads=""
for i in 38 36 34 32 30 28 26 24; do small_reads+=" $((i * MIB)):4096"; done
for fault in 404 range; do
    : > "$WEB_LOG"
    reads=$("$NBDCURLD" -r "$FAR/flaky/$fault-n10/disk.img" \
        --run "$PY $srcdir/lib/read-ranges.py \"\$uri\" www/disk.img $small_reads \
               $((8 * MIB)):$((2 * MIB)) $((16 * MIB)):$((2 * MIB))" \
        2> nbdcurld.log) || fail "$fault: reads with a bad piece: $(tail -n 5 nbdcurld.log)"
    echo "$reads"
    ends=$(awk '{ print $3 }' <<<"$reads" | tr '\n' ' ')
    [ "$ends" = "ok ok ok ok ok ok ok ok EIO ok " ] ||
        fail "$fault: a bad piece: the reads ended $ends, expected 8 ok, EIO, ok"
    # Every piece of the failed read reached the server, and the one
    # that failed was a piece.
    n=$(range_lengths flaky | pieces | wc -l)
    [ "$n" -ge 4 ] || fail "$fault: only $n pieces reached the server"
    failed=$(sed -n 's/.*: read of \([0-9]*\) bytes at offset [0-9]* failed: .*/\1/p' nbdcurld.log)
    [ "$(pieces <<<"$failed" | wc -l)" -eq 1 ] && [ "$(wc -l <<<"$failed")" -eq 1 ] ||
        fail "$fault: failed reads of $failed bytes, expected one piece: $(grep failed nbdcurld.log)"
done

# Pieces whose first attempt breaks off half way are retried, each on
# its own; the copy is byte-exact.
: > "$WEB_LOG"
copy "$FAR/flaky/short-1/disk.img"
retried=$(grep -E "^GET /flaky/" "$WEB_LOG" | awk '{ print $3 }' | sort | uniq -d |
    sed -n 's/range=bytes=\([0-9]*\)-\([0-9]*\)/\1 \2/p' | awk '{ print $2 - $1 + 1 }' | pieces | wc -l)
[ "$retried" -ge 1 ] || fail "no piece was fetched twice: $(range_lengths flaky | head -n 5)"
grep -q "retry 1 of" nbdcurld.log || fail "no retry was logged"
