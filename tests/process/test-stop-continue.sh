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
/usr/bin/python3 - "$NBD_URI" "$tmp/disk.img" > client.txt 2>&1 <<'PY' &
import sys, nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
image = open(sys.argv[2], 'rb').read()
assert h.pread(4096, 0) == image[:4096]
print('connected', flush=True)
open('go').read()                      # until the processes were resumed
assert h.pread(65536, 512 * 1024) == image[512 * 1024:512 * 1024 + 65536]
h.shutdown()
print('read after resume: ok', flush=True)
PY
client=$!
kill_on_exit "$client"
for i in $(seq 100); do
    grep -q connected client.txt 2>/dev/null && break
    sleep 0.1
done
grep -q connected client.txt || fail "the client did not connect: $(cat client.txt)"

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
grep -q 'read after resume: ok' client.txt || fail "no read after the pause"
# A new client is served too.
nbdinfo --size "$NBD_URI" > size.txt || fail "nbdinfo failed after the pause"
[ "$(cat size.txt)" = 1048576 ] || fail "size after the pause: $(cat size.txt)"
