#!/usr/bin/env bash
# --exit-with-parent: nbdcurld stops when the process that
# started it exits, both when it was started as root (it then becomes
# --user, and the kernel clears the parent-death signal with the change of
# user: nbdcurld must set it again) and when started as another user.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail

make_image disk.img 100000
# nobody must reach the image and a socket directory of its own.
chmod 0711 "$tmp"
chmod 0644 disk.img
mkdir -m 0777 sockets

# run_under_parent NAME [PREFIX...]: start a shell (the parent) that
# starts nbdcurld --exit-with-parent and waits; PREFIX (e.g. setpriv)
# runs the shell as another user.  Sets PARENT and SERVER (pids).
run_under_parent() {
    local name=$1
    shift
    local sock=$tmp/sockets/$name.sock
    "$@" bash -c '"$1" --exit-with-parent -U "$2" -r "file://$3" 2>>"$4" &
                  echo $! > "$5"; wait' parent \
        "$NBDCURLD" "$sock" "$tmp/disk.img" "$tmp/sockets/$name.log" "$tmp/sockets/$name.pid" &
    PARENT=$!
    kill_on_exit "$PARENT"
    wait_started "$sock" "sockets/$name.pid" "sockets/$name.log"
    SERVER=$(cat "sockets/$name.pid")
    kill_on_exit "$SERVER"
}

# check_exits NAME: kill the parent; the server and its children must go.
check_exits() {
    local name=$1 i
    kill -0 "$SERVER" 2>/dev/null || fail "$name: nbdcurld is not running"
    kill -KILL "$PARENT"
    for i in $(seq 50); do
        kill -0 "$SERVER" 2>/dev/null || break
        sleep 0.1
    done
    ! kill -0 "$SERVER" 2>/dev/null ||
        fail "$name: nbdcurld still runs 5 s after its parent died"
    sleep 0.3
    [ -z "$(leftover_processes)" ] || fail "$name: processes left: $(leftover_processes)"
}

if [ "$(id -u)" -eq 0 ]; then
    # Started as root: becomes nobody (the default --user).
    run_under_parent root
    [ "$(stat -c %u /proc/"$SERVER")" = 65534 ] ||
        fail "root: the supervisor did not become nobody"
    check_exits root
    # Started as a user from the start.
    requires setpriv
    run_under_parent user setpriv --reuid=65534 --regid=65534 --clear-groups
    [ "$(stat -c %u /proc/"$SERVER")" = 65534 ] || fail "user: not running as nobody"
    check_exits user
else
    run_under_parent user
    check_exits user
fi
