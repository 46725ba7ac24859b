#!/usr/bin/env bash
# Long reads split over the web connections on a distant server
# (src/fetcher/fetcher-http.c's split_long_read, src/fetcher/read-split.c):
#  - qemu-img convert -f raw (reads of 2 MiB, eight at once) through
#    tests/wan-proxy adding 20 ms to each round trip and holding each
#    connection to 2 MB/s: each read goes out as pieces on several
#    connections, so it takes well under the one connection's second it
#    would take whole, and the copy is byte-exact;
#  - a read one of whose pieces fails (HTTP 404 for the first range GET)
#    gets one reply, EIO, though its other pieces arrived, and the
#    connection goes on: the same read then returns exact bytes.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires qemu-img
requires_python_nbd

CAP_MBPS=2
SIZE_MIB=24

mkdir www
make_image www/disk.img "${SIZE_MIB}M"
start_nginx "$tmp/www"
# Without meson's MALLOC_PERTURB_: the proxy would fill each new
# connection's queues byte by byte.
MALLOC_PERTURB_=0 start_wan_proxy capped "$NGINX_PORT" 20 "$CAP_MBPS"

timeout 90 "$NBDCURLD" -r -v "http://127.0.0.1:$WAN_PORT/disk.img" \
    --run 'qemu-img convert -f raw -O raw "$uri" out.img' 2> nbdcurld.log ||
    fail "the convert failed or took over 90 s: $(grep -v debug: nbdcurld.log | tail -n 5)"
[ "$(md5_of out.img)" = "$(md5_of www/disk.img)" ] || fail "the converted disk differs"
summary=$(grep 'client unix#1 closed' nbdcurld.log) || fail "no summary of the client in the log"
echo "$summary"
reads=$(sed -n 's/.* (\([0-9]*\) reads, .*/\1/p' <<< "$summary")
requests=$(sed -n 's/.* fetched in \([0-9]*\) web requests.*/\1/p' <<< "$summary")
p50=$(sed -n 's/.* p50 \([0-9.]*\) ms.*/\1/p' <<< "$summary")
[ -n "$reads" ] && [ -n "$requests" ] && [ -n "$p50" ] || fail "cannot read the summary"
# Each read whole on one connection: 2 MiB at 2 MB/s, over a second.
[ "$requests" -gt "$reads" ] || fail "$requests web requests for $reads reads: no read was split"
awk -v p="$p50" 'BEGIN { exit !(p < 900) }' ||
    fail "reads took $p50 ms (median): not split over connections (one takes over 1000 ms)"

# One piece fails, the others arrive: the read fails once, with EIO, and
# the next reads go on.  Through the test web server, whose first range
# GET of the path gets 404 (not retried), 10 ms away.
mkdir web
make_image web/flaky.img 8M
start_web_server "$tmp/web"
start_wan_proxy flaky "$WEB_PORT" 10
cat > reader.py <<'PYEOF'
import sys
import nbd

h = nbd.NBD()
h.connect_uri(sys.argv[1])
data = open(sys.argv[2], "rb").read()
for offset in (0, 0, 2 << 20):
    try:
        got = h.pread(2 << 20, offset)
        print(offset, "ok" if got == data[offset:offset + (2 << 20)] else "WRONG")
    except nbd.Error as e:
        print(offset, e.errno)
PYEOF
got=$("$NBDCURLD" -v -r "http://127.0.0.1:$WAN_PORT/flaky/404-p1/flaky.img" \
    --run "$PY reader.py \"\$uri\" web/flaky.img" 2> flaky.log | tr '\n' ' ')
echo "reads: $got"
[ "$got" = "0 EIO 0 ok 2097152 ok " ] ||
    fail "reads gave '$got', expected EIO, then exact bytes twice: $(grep -v debug: flaky.log | tail -n 5)"
gets=$(grep '^GET /flaky/404-p1/flaky.img range=bytes=' "$WEB_LOG" || true)
[ "$(grep -c 'status=404' <<< "$gets")" = 1 ] || fail "not one 404: $gets"
pieces=$(grep -c 'status=206' <<< "$gets" || true)
[ "$pieces" -ge 6 ] || fail "$pieces range replies for three reads of 2 MiB: not split"
