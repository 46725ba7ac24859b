#!/usr/bin/env bash
# No signal nbdcurld has no use for ends any of its processes.  SIGUSR1 to
# the supervisor logs the statistics and writes --stats-file, counting a
# client still connected; SIGUSR2 and the others are logged and ignored;
# sent to the front-end or a fetcher, all are ignored.  A client
# connected meanwhile, and a copy in progress, go on byte-exact.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy
requires_python_nbd

mkdir www
make_image www/disk.img 16M
# Slow enough that the copy below is still going when the signals come.
start_nginx "$tmp/www" "" "limit_rate 1m;"
chmod 755 "$tmp"
mkdir stats
chmod 1777 stats
start_nbdcurld -r --stats-file stats/s.txt "$NGINX_URL/disk.img"

# A client that holds its connection (so a fetcher exists), reading before
# and after the signals.
mkfifo go
/usr/bin/python3 "$srcdir/lib/held-client.py" "$NBD_URI" www/disk.img go > client.txt 2>&1 &
client=$!
kill_on_exit "$client"
eventually 10 grep -q connected client.txt || fail "the client did not connect: $(cat client.txt)"

# The copy runs while the signals come.
nbdcopy "$NBD_URI" copy.img &
copy=$!
kill_on_exit "$copy"
sleep 0.3
kill -0 "$copy" 2>/dev/null || fail "the copy ended before the signals: make it slower"

pids=$(pgrep -s 0 '^nbdcurld' | tr '\n' ' ')
[ "$(echo $pids | wc -w)" -ge 4 ] ||
    fail "expected supervisor, front-end and two fetchers: $pids"
for sig in USR1 USR2 ALRM VTALRM PROF IO PWR STKFLT RTMIN+3 RTMAX; do
    for p in $pids; do
        kill -s "$sig" "$p" 2>/dev/null || true
    done
    sleep 0.05
done
# The supervisor, front-end and launcher are all still there; a fetcher
# may have ended with its client (nbdcopy's first connection), but none
# was killed (the supervisor would say so).
for name in nbdcurld nbdcurld-fe nbdcurld-launch; do
    pgrep -s 0 -x "$name" >/dev/null ||
        fail "$name died of a signal: $(tail -n 5 "$NBDCURLD_LOG")"
done
! grep -q "killed by signal" "$NBDCURLD_LOG" ||
    fail "a process was killed: $(grep "killed by signal" "$NBDCURLD_LOG")"
kill -0 "$copy" 2>/dev/null || fail "the copy ended before the last signal: make it slower"

# SIGUSR1 (the supervisor's): a report in the log and in the file,
# counting the clients connected now.
eventually 10 grep -q "nbdcurld statistics:" "$NBDCURLD_LOG" ||
    fail "SIGUSR1 logged no statistics: $(tail -n 5 "$NBDCURLD_LOG")"
grep -q "  read: [1-9][0-9]* ops" "$NBDCURLD_LOG" ||
    fail "the report does not count the connected clients' reads: $(cat "$NBDCURLD_LOG")"
grep -q "signal 12 (User defined signal 2): nbdcurld has no use for it" "$NBDCURLD_LOG" ||
    fail "SIGUSR2 was not logged: $(tail -n 5 "$NBDCURLD_LOG")"
eventually 10 test -s stats/s.txt || fail "SIGUSR1 wrote no --stats-file"
grep -q '^export "": [1-9][0-9]* connections' stats/s.txt ||
    fail "the file does not count the connected clients: $(cat stats/s.txt)"

echo go > go
wait "$client" || fail "the client failed after the signals: $(cat client.txt)"
grep -q 'read after the wait: ok' client.txt || fail "no read after the signals"
wait "$copy" || fail "the copy failed"
cmp -s copy.img www/disk.img || fail "the copy differs"
