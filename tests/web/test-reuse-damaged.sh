#!/usr/bin/env bash
# Kept-alive connections that go bad: on each connection the web server's
# first reply is right and every later one is damaged (another content
# coding, other bytes of the right length), then it closes.  Each first
# GET's body comes in one-byte segments, so a direct read hands it to
# libcurl, whose connection from the open has served its HEAD already.
# A read answered by a damaged reply fails with EIO; the reads after it,
# on fresh connections, return the right bytes; none returns wrong ones.
# (The first read is not at offset 0, which would fetch the object's
# first MiB, all of this one, in the first, good, reply.)
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires_python_nbd

serve_image 1M
# One connection: one direct connection and one of libcurl's.
start_nbdcurld -r -v --connections 1 "$WEB_URL/reuse-damaged/disk.img"

read_ranges "$NBD_URI" www/disk.img 512:2048 8192:2048 16384:2048 24576:2048 \
    32768:2048 40960:2048 > reads.out || fail "$(cat reads.out)"
cat reads.out
grep -q ' EIO ' reads.out || fail "no read met a damaged reply"
awk '/ EIO / { failed = 1 } / ok / && failed { good = 1 } END { exit !good }' \
    reads.out || fail "no read after a failed one returned the right bytes"
grep -q 'failed: the server sent an encoded body (Content-Encoding: gzip)' \
    "$NBDCURLD_LOG" || fail "nbdcurld did not say why a read failed"
