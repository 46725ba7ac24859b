#!/usr/bin/env bash
# Reads that fail for a reason that may pass are tried again (retry_decide
# in src/fetcher/fetcher-transfer.c), and every retry's reply is checked like the
# first: faults of tests/lib/web-server.py's /flaky/ that pass after a few
# requests give byte-exact copies, on the direct (spliced) path and
# through libcurl; with retries=0 the same faults are errors.  Retry-After
# is honoured; an object that changed between attempts is an error at
# once; a server that always fails gets a bounded number of attempts in a
# bounded time (--timeout included); and a read waiting for its retry
# holds up neither the other reads of its client nor other clients.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy
requires_python_nbd

serve_image 4M
sum=$(md5_of www/disk.img)
# The same server over https: reads direct over libcurl's connections
# (src/fetcher/direct-tls.c), whatever their size.
have_tls=no
if command -v openssl >/dev/null &&
   openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
       -keyout tls.key -out tls.pem 2>openssl.err; then
    have_tls=yes
    : > tls.port
    $PY "$srcdir/lib/web-server.py" --log "$tmp/tls-server.log" --tls-cert tls.pem \
        --tls-key tls.key "$tmp/www" > tls.port &
    kill_on_exit $!
    for i in $(seq 100); do
        TLS_PORT=$(head -n1 tls.port)
        [ -n "$TLS_PORT" ] && break
        sleep 0.1
    done
    [ -n "$TLS_PORT" ] || fail "the https web server did not start"
else
    echo "no openssl: https is not tested"
fi
# One file per use, so that the web server's counts (per path) and log
# lines of one case are not another's.
for f in lc stall stalllc off changed always limit ra radate cap wait; do
    cp www/disk.img "www/$f.img"
done

# Each fault passes after COUNT requests for a range: 5 retries (the
# default) are enough.  libcurl itself tries a request again once when a
# kept-alive connection closes without a reply, so close-2 for it.
faults=(503-2 500-1 502-1 504-1 408-1 429-1 reset-1 short-1 close-2)
args=()
for k in "${faults[@]}"; do
    args+=(--export "d-$k=$WEB_URL/flaky/$k/disk.img"
           --export "c-$k=$WEB_URL/flaky/$k/lc.img")
done
# http-version=1.0 keeps every read of stalllc with libcurl (the direct
# reads speak HTTP/1.1 only).
args+=(--export "stall=$WEB_URL/flaky/stall-1/stall.img"
       --export "stalllc=$WEB_URL/flaky/stall-1/stalllc.img" http-version=1.0
       --export "off=$WEB_URL/flaky/503-1/off.img" retries=0
       --export "changed=$WEB_URL/flaky/503etag-1/changed.img"
       --export "always=$WEB_URL/flaky/503-always/always.img" retries=3 retry-delay=0.2
       --export "limit=$WEB_URL/flaky/503-always/limit.img" timeout=2 retry-delay=0.5
       --export "ra=$WEB_URL/flaky/429ra2-1/ra.img"
       --export "radate=$WEB_URL/flaky/503radate2-1/radate.img"
       --export "cap=$WEB_URL/flaky/503ra999-1/cap.img"
       --export "wait=$WEB_URL/flaky/429ra5-p1/wait.img")
tls_faults=(503-2 reset-1 short-1)
if [ "$have_tls" = yes ]; then
    for k in "${tls_faults[@]}"; do
        args+=(--export "s-$k=https://127.0.0.1:$TLS_PORT/flaky/$k/disk.img" sslverify=false)
    done
fi
# --stall-timeout 2: a stalled body (stall-1) fails in seconds.
start_nbdcurld -r -v --retry-delay 0.05 --stall-timeout 2 "${args[@]}"

# gets NAME: the web server's range GETs of NAME.img (under /flaky/).
gets() { grep -E "^GET /flaky/[^ /]+/$1\.img range=bytes=[0-9]" "$WEB_LOG" || true; }

for k in "${faults[@]}"; do
    for way in d c; do
        echo "== $k, $([ "$way" = d ] && echo direct || echo through libcurl)"
        rm -f out.img
        # 256 KiB requests fit the data pipe (direct); 2 MiB ones do not.
        size=262144
        [ "$way" = c ] && size=2097152
        nbdcopy --request-size=$size "$(nbd_uri "$way-$k")" out.img ||
            fail "$way-$k: copy failed: $(grep "export \"$way-$k\"" "$NBDCURLD_LOG" | tail -n3)"
        [ "$(md5_of out.img)" = "$sum" ] || fail "$way-$k: the copy differs"
        # (Sequential reads waiting together are fetched as one: 2 MiB
        # ones through libcurl may be a read of 4 MiB.)
        sizes='[0-9]+'
        [ "$way" = c ] && sizes='(2097152|4194304)'
        grep -qE "export \"$way-$k\" .*read of $sizes bytes at offset .*; retry 1 of 5 in " \
            "$NBDCURLD_LOG" || fail "$way-$k: no retry of a read logged"
    done
    # The faults reached the server (status, or 0 for reset and close).
    case $k in
        reset*|close*) status=0 ;;
        short*) status=206 ;;
        *) status=${k%%-*} ;;
    esac
    for file in disk lc; do
        gets "$file" | grep -q "^GET /flaky/$k/.* status=$status " ||
            fail "$k: no fault in the web server's log for $file.img"
    done
done
if [ "$have_tls" = yes ]; then
    for k in "${tls_faults[@]}"; do
        echo "== $k, https (direct over TLS)"
        rm -f out.img
        nbdcopy "$(nbd_uri "s-$k")" out.img ||
            fail "s-$k: copy failed: $(grep "export \"s-$k\"" "$NBDCURLD_LOG" | tail -n3)"
        [ "$(md5_of out.img)" = "$sum" ] || fail "s-$k: the copy differs"
        grep -q "export \"s-$k\" .*; retry 1 of 5 in " "$NBDCURLD_LOG" ||
            fail "s-$k: no retry logged"
        case $k in
            reset*) status=0 ;;
            short*) status=206 ;;
            *) status=${k%%-*} ;;
        esac
        grep -q "^GET /flaky/$k/disk.img range=bytes=.* status=$status " \
            "$tmp/tls-server.log" || fail "s-$k: no fault in the https server's log"
    done
fi
# A direct read that failed with bytes of a part already in the data pipe
# (short: half the body, then the end): those bytes were announced as
# discarded, the part came again whole, and the copy above is exact.
grep -q 'export "d-short-1" .*: short body: [1-9][0-9]* of [0-9]* bytes (the server closed the connection); retry 1' \
    "$NBDCURLD_LOG" || fail "d-short-1: no direct read failed part way through its body"
# The direct reads were direct: the data pipe was used.
grep -q 'export "d-503-2": reads of up to .* go direct' "$NBDCURLD_LOG" ||
    fail "d-503-2: the reads did not go direct"

# A stalled body: a few reads only, since the direct reads' bodies go
# into the data pipe one after the other, so their stalls add up.
# The export through libcurl is read meanwhile: each stall is a wait for
# the server.
echo "== a stalled body (the minimum rate over --stall-timeout 2), direct and through libcurl"
$PY "$srcdir/lib/read-ranges.py" "$(nbd_uri stalllc)" www/stalllc.img 1048576:1048576 \
    > stalllc.out &
stalllc_pid=$!
kill_on_exit "$stalllc_pid"
read_ranges "$(nbd_uri stall)" www/stall.img 0:4096 1048576:1048576 > stall.out ||
    fail "stall: $(cat stall.out)"
wait "$stalllc_pid" || fail "stall: $(cat stalllc.out)"
cat stalllc.out >> stall.out
cat stall.out
[ "$(grep -c ' ok ' stall.out)" -eq 3 ] || fail "stall: a read failed"
# The server logs a stalled reply only when its sleep ends.  (The read of
# 1 MiB goes direct too, into the data area.)
grep -q 'export "stall" .*read of 4096 bytes at offset 0: stalled: .*; retry 1 of 5' \
    "$NBDCURLD_LOG" || fail "stall: the direct read's stall was not retried"
grep -q 'export "stall" .*read of 1048576 bytes at offset 1048576: stalled: .*; retry 1 of 5' \
    "$NBDCURLD_LOG" || fail "stall: the large direct read's stall was not retried"
grep -qE 'export "stalllc" .*read of 1048576 bytes at offset 1048576: .*(too slow|timed out|Timeout).*; retry 1 of 5' \
    "$NBDCURLD_LOG" || fail "stall: libcurl's stall was not retried"

# failing_read NAME RANGE: RANGE of export NAME (www/NAME.img) must fail
# with EIO, never give data.
failing_read() {
    read_ranges "$(nbd_uri "$1")" "www/$1.img" "$2" > "$1.out" || fail "$1: $(cat "$1.out")"
    cat "$1.out"
    grep -q ' EIO ' "$1.out" || fail "$1: the read did not fail"
}

echo "== retries=0: the same fault is an error"
failing_read off 0:4096
grep -q 'export "off".*failed: HTTP status 503 instead of 206$' "$NBDCURLD_LOG" ||
    fail "off: the failure was not logged as it was"
! grep -q 'export "off".*retry 1' "$NBDCURLD_LOG" || fail "off: a read was retried"

echo "== the object changed between attempts: EIO at once, never its bytes"
failing_read changed 0:4096
grep -q 'export "changed".*failed: the object changed: ETag "replaced".*(after 1 retry)' \
    "$NBDCURLD_LOG" || fail "changed: not logged as a changed object"
[ "$(gets changed | grep -c 'range=bytes=0-4095 ')" -eq 2 ] ||
    fail "changed: not exactly two requests: $(gets changed)"

echo "== a server that always fails: 1 + 3 attempts, then EIO"
failing_read always 0:4096
n=$(gets always | grep -c 'range=bytes=0-4095 .*status=503 ' || true)
[ "$n" -eq 4 ] || fail "always: $n attempts, not 4"
# Waits of 0.1-0.2, 0.2-0.4 and 0.4-0.8 s: 0.7 to 1.4 s in all.
awk '{ exit !($4 >= 0.6 && $4 <= 5) }' always.out || fail "always: took $(cat always.out)"
grep -q 'export "always".*failed: HTTP status 503 instead of 206 (after 3 retries)' \
    "$NBDCURLD_LOG" || fail "always: the last failure does not say how many retries"

echo "== --timeout (timeout=2) bounds a read with its retries"
failing_read limit 0:4096
awk '{ exit !($4 <= 3) }' limit.out || fail "limit: took longer than its --timeout"

echo "== 429 with Retry-After: 2 (and a 503 with an HTTP-date 2 s on), both at once"
$PY "$srcdir/lib/read-ranges.py" "$(nbd_uri radate)" www/radate.img 0:4096 > radate.out &
radate_pid=$!
kill_on_exit "$radate_pid"
read_ranges "$(nbd_uri ra)" www/ra.img 0:4096 > ra.out || fail "ra: $(cat ra.out)"
wait "$radate_pid" || fail "radate: $(cat radate.out)"
cat radate.out >> ra.out
cat ra.out
[ "$(grep -c ' ok ' ra.out)" -eq 2 ] || fail "ra: a read failed"
# The gap between the failed request and its retry, from the log's time=.
gap() {
    gets "$1" | grep 'range=bytes=0-4095 ' |
        sed -n 's/.* time=\([0-9.]*\)$/\1/p' | awk 'NR == 1 { a = $1 } NR == 2 { print $1 - a }'
}
g=$(gap ra)
echo "Retry-After: 2: the retry came after $g s"
awk -v g="$g" 'BEGIN { exit !(g >= 1.9 && g < 5) }' || fail "ra: retried after $g s"
g=$(gap radate)
echo "Retry-After: (a date 2 s on): the retry came after $g s"
# An HTTP-date has whole seconds: between 1 and 2 s on.
awk -v g="$g" 'BEGIN { exit !(g >= 0.9 && g < 5) }' || fail "radate: retried after $g s"

echo "== Retry-After: 999 waits RETRY_AFTER_MAX_MS (60 s) at most"
# The client itself in the background (not a shell around it), so that
# killing it below closes its connection.
$PY "$srcdir/lib/read-ranges.py" "$(nbd_uri cap)" www/cap.img 0:4096 > cap.out &
cap_pid=$!
kill_on_exit "$cap_pid"
for i in $(seq 50); do
    grep -q 'export "cap" .*; retry 1 of 5 in ' "$NBDCURLD_LOG" && break
    sleep 0.1
done
grep -q 'export "cap" .*: HTTP status 503 instead of 206; retry 1 of 5 in 60\.000 s' \
    "$NBDCURLD_LOG" || fail "cap: $(grep 'export "cap"' "$NBDCURLD_LOG")"
# The client goes away meanwhile: its fetcher ends, waiting or not.
kill "$cap_pid"
wait "$cap_pid" 2>/dev/null || true

echo "== a read waiting for its retry holds up no other read"
cat > wait.py <<'PYEOF'
import sys
import time

import nbd

uri, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
h = nbd.NBD()
h.connect_uri(uri)
# The first range GET of the path gets 429 with Retry-After: 5.
start = time.monotonic()
a = nbd.Buffer(4096)
ca = h.aio_pread(a, 0)
time.sleep(0.3)
b = nbd.Buffer(4096)
cb = h.aio_pread(b, 1 << 20)
while not h.aio_command_completed(cb):
    h.poll(1)
took_b = time.monotonic() - start
# Another client of the same export meanwhile.
h2 = nbd.NBD()
h2.connect_uri(uri)
got = h2.pread(4096, 2 << 20)
took_other = time.monotonic() - start
if got != data[2 << 20:(2 << 20) + 4096]:
    sys.exit("the other client got wrong data")
h2.shutdown()
while not h.aio_command_completed(ca):
    h.poll(1)
took_a = time.monotonic() - start
if a.to_bytearray() != data[0:4096] or b.to_bytearray() != data[1 << 20:(1 << 20) + 4096]:
    sys.exit("wrong data")
print("second read %.1f s, other client %.1f s, first read %.1f s" % (took_b, took_other, took_a))
if took_b > 2 or took_other > 3:
    sys.exit("a read waited for another's retry")
if took_a < 4.5:
    sys.exit("the first read did not wait for Retry-After")
PYEOF
$PY wait.py "$(nbd_uri wait)" www/wait.img || fail "wait: see above"

kill -0 "$NBDCURLD_PID" || fail "nbdcurld died"
stop_nbdcurld
sleep 0.5
# Each fetcher that retried said so when it ended.
grep -q 'export "d-503-2" .*: retried reads: [0-9]*, retries: [0-9]*, retried reads that failed all the same: 0$' \
    "$NBDCURLD_LOG" || fail "no summary of the retries"
grep -q 'export "always" .*: retried reads: 1, retries: 3, retried reads that failed all the same: 1$' \
    "$NBDCURLD_LOG" || fail "no summary of the failed retries"
if grep -E 'killed by signal|Sanitizer|runtime error' "$NBDCURLD_LOG"; then
    fail "a process crashed"
fi
