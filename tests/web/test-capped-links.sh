#!/usr/bin/env bash
# A distant server that caps every TCP connection: through
# tests/wan-proxy adding 20 ms to each round trip and holding each
# connection to 2 MB/s, one client's sequential copy must have several
# web connections bringing data at once, so that it beats three
# connections' caps together (each read on its own connection, or one
# large range at a time, stays near one cap), and it must be byte-exact.
# The cap is low so that a busy machine does not decide the outcome.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy

CAP_MBPS=2
SIZE_MIB=24

mkdir www
make_image www/disk.img "${SIZE_MIB}M"
start_nginx "$tmp/www"
# Without meson's MALLOC_PERTURB_: the proxy would fill each new
# connection's 16 MiB queues byte by byte (seconds for the 16 at once).
MALLOC_PERTURB_=0 start_wan_proxy capped "$NGINX_PORT" 20 "$CAP_MBPS"

# One NBD connection: one fetcher, its web connections (16 by default)
# are what is measured.  Only nbdcopy is timed (not the start of the
# server, slow under ASan).  Old code took about 10 s: the timeout keeps a
# failing run short.
timeout 60 "$NBDCURLD" -r -v "http://127.0.0.1:$WAN_PORT/disk.img" \
    --run 'date +%s.%N > start && nbdcopy --connections=1 "$uri" out.img &&
           date +%s.%N > end' 2> nbdcurld.log ||
    fail "the copy failed or took over 60 s: $(grep -v debug: nbdcurld.log | tail -n 5)"
start=$(cat start)
end=$(cat end)
[ "$(md5_of out.img)" = "$(md5_of www/disk.img)" ] || fail "the copy differs"

rate=$(awk -v s="$start" -v e="$end" -v n="$SIZE_MIB" 'BEGIN { printf "%d", n * 1048576 / (e - s) }')
echo "copied $SIZE_MIB MiB at $rate bytes/s through $CAP_MBPS MB/s per connection"
grep 'look-ahead' nbdcurld.log | tail -n 3 || true
want=$(( 3 * CAP_MBPS * 1000000 ))
[ "$rate" -ge "$want" ] ||
    fail "$rate bytes/s: not more than three connections' caps ($want): too few web connections brought data at once"
