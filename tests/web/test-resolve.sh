#!/usr/bin/env bash
# Host names are resolved inside the sandboxed fetcher (glibc's NSS reads
# /etc/nsswitch.conf and /etc/hosts, then asks DNS; Landlock allows those
# files, seccomp the calls).  http://localhost:PORT/ works; a name that
# does not resolve is a quick, clear error for its client, never a fetcher
# killed by seccomp (SIGSYS), and does not disturb other clients.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy nbdinfo getent

# localhost must be 127.0.0.1 here (nginx listens there only).
if ! getent ahostsv4 localhost | grep -q '^127\.0\.0\.1 '; then
    echo "$0: SKIP: localhost does not resolve to 127.0.0.1" >&2
    exit 77
fi

www_image 8M
start_nginx "$tmp/www"
local_url=http://localhost:$NGINX_PORT/disk.img

# 1. One export through a host name, with --run.
echo "== localhost, --run"
"$NBDCURLD" -r "$local_url" --run 'nbdcopy "$uri" run.img' 2>run.log ||
    fail "copy through $local_url failed: $(cat run.log)"
[ "$(md5_of run.img)" = "$sum" ] || fail "copy through $local_url differs"

# 2. A server with a resolvable and unresolvable names side by side.
#    (.invalid is reserved: it never resolves, RFC 2606.)
#    --connect-timeout bounds a resolver that waits for an absent DNS server.
start_nbdcurld --connect-timeout 10 \
    --export "local=$local_url" \
    --export "invalid=http://nonexistent.invalid/disk.img" \
    --export "invalid-port=http://nonexistent.invalid:$NGINX_PORT/disk.img" \
    --export "bad-label=http://no-such-host.nbdcurld-test.invalid./disk.img"

for name in invalid invalid-port bad-label; do
    echo "== $name"
    log_before=$(wc -c < "$NBDCURLD_LOG")
    rm -f "$name.img"
    start=$(date +%s)
    expect_fail timeout 60 nbdcopy "$(nbd_uri "$name")" "$name.img"
    took=$(( $(date +%s) - start ))
    [ "$took" -lt 30 ] || fail "$name: the error took $took s"
    [ ! -s "$name.img" ] || fail "$name: data was copied"
    sleep 0.2                   # let the fetcher's warning reach the log
    tail -c +"$((log_before + 1))" "$NBDCURLD_LOG" > "$name.log"
    cat "$name.log"
    grep -iqE 'resolve|host|name' "$name.log" ||
        fail "$name: the log does not say why: $(cat "$name.log")"
    kill -0 "$NBDCURLD_PID" || fail "$name: nbdcurld died"
done

# The resolvable export still works on the same server, twice at once.
echo "== local, next to the failures"
nbdcopy "$(nbd_uri local)" local1.img &
copy_pid=$!
kill_on_exit "$copy_pid"
nbdcopy "$(nbd_uri local)" local2.img || fail "local: copy failed"
wait "$copy_pid" || fail "local: the parallel copy failed"
[ "$(md5_of local1.img)" = "$sum" ] || fail "local: copy 1 differs"
[ "$(md5_of local2.img)" = "$sum" ] || fail "local: copy 2 differs"

stop_nbdcurld
if grep -h 'killed by signal' run.log "$NBDCURLD_LOG"; then
    fail "a process was killed by a signal (seccomp refusing a resolver call?)"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
