#!/usr/bin/env bash
# Suspending and resuming every nbdcurld process (SIGSTOP, SIGCONT: a
# shell's job control, a cgroup freeze, a debugger attaching) must not kill
# any of them.  Each waits in poll; resumed, the kernel restarts that wait
# through restart_syscall, which every role's seccomp filter must allow.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires_python_nbd

make_image disk.img 1M
start_nbdcurld -r "file://$tmp/disk.img"

# A client that holds its connection (so a fetcher exists) and reads
# before and after the pause.
mkfifo go
/usr/bin/python3 "$srcdir/lib/held-client.py" "$NBD_URI" "$tmp/disk.img" go > client.txt 2>&1 &
client=$!
kill_on_exit "$client"
eventually 10 grep -q connected client.txt || fail "the client did not connect: $(cat client.txt)"

pids=$(pgrep -s 0 '^nbdcurld' | tr '\n' ' ')
[ "$(echo $pids | wc -w)" -ge 3 ] || fail "expected supervisor, front-end and fetcher: $pids"
for round in 1 2 3; do
    kill -STOP $pids
    sleep 0.2
    kill -CONT $pids
    sleep 0.2
done
for p in $pids; do
    kill -0 "$p" 2>/dev/null ||
        fail "process $p died after SIGSTOP/SIGCONT: $(tail -n 5 "$NBDCURLD_LOG")"
done
echo go > go
wait "$client" || fail "the client failed after the pause: $(cat client.txt)"
grep -q 'read after the wait: ok' client.txt || fail "no read after the pause"
# A new client is served too.
nbdinfo --size "$NBD_URI" > size.txt || fail "nbdinfo failed after the pause"
[ "$(cat size.txt)" = 1048576 ] || fail "size after the pause: $(cat size.txt)"
