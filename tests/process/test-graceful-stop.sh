#!/usr/bin/env bash
# A graceful stop: on SIGTERM or SIGINT nbdcurld stops
# accepting, lets the reads in flight finish (byte-exact) for at most its
# grace period (SHUTDOWN_GRACE_SECONDS, 5 s), then exits 0; a second signal
# stops it at once; SIGHUP does not stop it.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires_python_nbd

GRACE=5
serve_image 3M

# wait_exit SECONDS: wait for the nbdcurld started last to exit and set
# STATUS to its exit status, or fail after SECONDS.
wait_exit() {
    local i
    for i in $(seq $(($1 * 10))); do
        kill -0 "$NBDCURLD_PID" 2>/dev/null || break
        sleep 0.1
    done
    ! kill -0 "$NBDCURLD_PID" 2>/dev/null || fail "nbdcurld still runs after $1 s"
    STATUS=0
    wait "$NBDCURLD_PID" || STATUS=$?
}

# inflight.py SOCKET PID SIGNAL...: open the export, start a 64 KiB read
# at 1 MB, send each signal to PID 0.5 s apart once the read is in flight,
# check that a new connection is then refused, and print the read's
# outcome ("ok", or the error) and the seconds from the first signal to
# the read's end.
cat > inflight.py <<'PYEOF'
import os, signal, socket, sys, time
import nbd
sock, pid, sigs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
image = open("www/disk.img", "rb").read()
h = nbd.NBD()
h.connect_uri("nbd+unix:///?socket=" + sock)
buf = nbd.Buffer(65536)
cookie = h.aio_pread(buf, 1000000)
time.sleep(0.5)                       # the fetcher waits for the web server
t0 = time.monotonic()
for i, name in enumerate(sigs):
    if i:
        time.sleep(0.5)
    os.kill(pid, getattr(signal, "SIG" + name))
    time.sleep(0.2)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(sock)
        s.settimeout(2)
        greeting = s.recv(64)
        sys.exit("a new connection was accepted while stopping: %r" % greeting)
    except OSError:
        pass                          # refused, or closed without a greeting
    finally:
        s.close()
outcome = "ok"
try:
    while not h.aio_command_completed(cookie):
        h.poll(1)
    if buf.to_bytearray() != image[1000000:1000000 + 65536]:
        outcome = "wrong data"
except nbd.Error as e:
    outcome = "error"
print(outcome, round(time.monotonic() - t0, 2))
PYEOF

echo "== SIGTERM with a read in flight: the read completes, then the server exits"
start_nbdcurld -r --export "delay=$WEB_URL/delay/disk.img"
sock=$NBD_SOCK
$PY inflight.py "$sock" "$NBDCURLD_PID" TERM > term.out || fail "SIGTERM: $(cat term.out)"
cat term.out
read -r outcome secs < term.out
[ "$outcome" = ok ] || fail "SIGTERM: the read in flight: $outcome"
wait_exit $GRACE
[ "$STATUS" -eq 0 ] || fail "SIGTERM: exit status $STATUS"
grep -q "stopping on signal 15: no new connections" "$NBDCURLD_LOG" ||
    fail "SIGTERM: the log does not say it is stopping"
[ -z "$(leftover_processes)" ] || fail "SIGTERM: processes left: $(leftover_processes)"

echo "== a read that never ends: the server exits after the grace period"
start_nbdcurld -r --export "stall=$WEB_URL/stall/disk.img"
start=$(date +%s.%N)
$PY inflight.py "$NBD_SOCK" "$NBDCURLD_PID" TERM > grace.out || fail "grace: $(cat grace.out)"
cat grace.out
wait_exit $((GRACE + 5))
took=$(echo "$(date +%s.%N) - $start" | bc)
echo "exited after $took s"
[ "$STATUS" -eq 0 ] || fail "grace: exit status $STATUS"
grep -q "error" grace.out || fail "grace: the stalled read did not fail: $(cat grace.out)"
awk -v t="$took" -v g=$GRACE 'BEGIN { exit !(t >= g - 0.5 && t <= g + 3) }' ||
    fail "grace: exited after $took s, not after about $GRACE"
grep -q "requests still in flight after $GRACE seconds" "$NBDCURLD_LOG" ||
    fail "grace: the log does not say why it stopped"

echo "== a second signal stops at once"
start_nbdcurld -r --export "stall=$WEB_URL/stall/disk.img"
$PY inflight.py "$NBD_SOCK" "$NBDCURLD_PID" TERM INT > twice.out || fail "twice: $(cat twice.out)"
cat twice.out
read -r outcome secs < twice.out
wait_exit 2
[ "$STATUS" -eq 0 ] || fail "twice: exit status $STATUS"
awk -v t="$secs" 'BEGIN { exit !(t < 2.5) }' || fail "twice: the read ended after $secs s"
grep -q "again: stopping at once" "$NBDCURLD_LOG" || fail "twice: not said in the log"

echo "== SIGHUP does not stop the server; SIGINT on an idle server stops it at once"
start_nbdcurld -r --export "good=$WEB_URL/good/disk.img"
kill -HUP "$NBDCURLD_PID"
sleep 0.5
kill -0 "$NBDCURLD_PID" 2>/dev/null || fail "SIGHUP stopped the server"
read_ranges "$(nbd_uri good)" www/disk.img 0:4096 > hup.out || fail "SIGHUP: $(cat hup.out)"
grep -q "SIGHUP: .*nothing to reopen" "$NBDCURLD_LOG" || fail "SIGHUP: not said in the log"
kill -INT "$NBDCURLD_PID"
wait_exit 1
[ "$STATUS" -eq 0 ] || fail "SIGINT: exit status $STATUS"
sleep 0.2
[ -z "$(leftover_processes)" ] || fail "processes left: $(leftover_processes)"
