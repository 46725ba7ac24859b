#!/usr/bin/env bash
# --log=syslog, and syslog as the default in the background: every role's
# lines reach the system logger's socket as "<PRI>nbdcurld[PID]: ROLE:
# LEVEL: text" (facility daemon, the level's priority, no newline), none
# reaches standard error once serving; an export that cannot be opened at
# start is <27> "error:"; after the logger restarted, lines are lost (and
# counted), not fatal, and SIGHUP connects to the new one.
#
# The logger is tests/lib/syslog-server.py at /dev/log itself, in a mount
# namespace of the test's own with a /dev of its own: nbdcurld has no way
# to log anywhere else, so that nobody can point it elsewhere.
if [ "${NBDCURLD_TEST_MOUNT_NS:-}" != 1 ]; then
    if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
        echo "$0: SKIP: needs root and unshare -m (for a /dev/log of its own)" >&2
        exit 77
    fi
    NBDCURLD_TEST_MOUNT_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdinfo

# /dev as it is, without log: a tmpfs holding the same entries (bound to
# the real ones), moved over /dev.  The cleanup unmounts it first should
# the move not happen, so that removing $tmp never reaches the real /dev.
private_dev() {
    local new=$tmp/newdev e n
    mkdir "$new"
    cleanup_fn "umount -R -l '$new' 2>/dev/null"
    mount -t tmpfs -o mode=0755 nbdcurld-test-dev "$new"
    for e in /dev/* /dev/.[!.]*; do
        [ -e "$e" ] || [ -L "$e" ] || continue
        n=${e##*/}
        [ "$n" != log ] || continue
        if [ -L "$e" ]; then
            cp -P "$e" "$new/$n"
        elif [ -d "$e" ]; then
            mkdir "$new/$n"
            mount --rbind "$e" "$new/$n"
        else
            : > "$new/$n"
            mount --bind "$e" "$new/$n"
        fi
    done
    mount --move "$new" /dev
}

# start_logger: syslog-server.py at /dev/log, appending to received.log.
start_logger() {
    $PY "$srcdir/lib/syslog-server.py" /dev/log "$tmp/received.log" &
    LOGGER_PID=$!
    kill_on_exit "$LOGGER_PID"
    eventually 10 test -S /dev/log || fail "the test logger did not start"
}

received() { grep -Eq -- "$1" received.log; }

private_dev
start_logger
serve_image 1M
: > received.log

echo "== the default in the background: syslog"
"$NBDCURLD" -v -r -U "$tmp/a.sock" -P "$tmp/a.pid" --export "disk=$WEB_URL/good/disk.img" \
    --export "gone=$WEB_URL/good/missing.img" 2> stderr.log
wait_started "$tmp/a.sock" "$tmp/a.pid" stderr.log
pid=$(cat a.pid)
kill_on_exit "$pid"
nbdinfo --size "nbd+unix:///disk?socket=$tmp/a.sock" >/dev/null
eventually 10 received "^<31>nbdcurld\[[0-9]+\]: front-end: debug: " ||
    fail "no front-end debug line at <31>: $(head -n3 received.log)"
received "^<31>nbdcurld\[[0-9]+\]: fetcher: debug: " || fail "no fetcher line"
eventually 10 received "^<31>nbdcurld\[$pid\]: debug: " ||
    fail "no supervisor line with its pid $pid: $(grep -v ': front-end\|: fetcher' received.log | head -n3)"
grep -q 'front-end\|fetcher' stderr.log && fail "a child's line on standard error: $(head -n3 stderr.log)"
# Each process's own pid: the front-end's, the launcher's and each
# fetcher's (forked by the launcher) differ from the supervisor's.
pids_of() { sed -nE "s/^<[0-9]+>nbdcurld\[([0-9]+)\]: $1: .*/\1/p" received.log | sort -u; }
fe=$(pids_of front-end); launcher=$(pids_of launcher); fetchers=$(pids_of fetcher)
[ -n "$fe" ] && [ "$fe" != "$pid" ] || fail "the front-end's lines carry pid '$fe'"
[ -n "$fetchers" ] || fail "no fetcher line"
for f in $fetchers; do
    [ "$f" != "$pid" ] && [ "$f" != "$fe" ] && [ "$f" != "$launcher" ] ||
        fail "a fetcher's lines carry another process's pid ($f)"
done
grep -q '\\n' received.log && fail "a datagram with a newline"
grep -Ev '^<(2[4-9]|3[01])>nbdcurld\[[0-9]+\]: ' received.log &&
    fail "a line not in the syslog form (above)"

echo "== a warning: <28>"
expect_fail nbdinfo --size "nbd+unix:///gone?socket=$tmp/a.sock" 2>/dev/null
eventually 10 received '^<28>nbdcurld\[[0-9]+\]: front-end: warning: export "gone" cannot be opened: not found \(HTTP 404\)' ||
    fail "no <28> warning for a 404: $(grep 404 received.log)"

echo "== the logger restarts: lines are lost and counted, SIGHUP reconnects"
stop_pid "$LOGGER_PID"
rm -f /dev/log
nbdinfo --size "nbd+unix:///disk?socket=$tmp/a.sock" >/dev/null    # its lines are lost
kill -0 "$pid" || fail "nbdcurld ended when its logger did"
start_logger
kill -HUP "$pid"
eventually 10 received "^<29>nbdcurld\[$pid\]: SIGHUP: logging to the system logger at /dev/log again" ||
    fail "no word of the new connection: $(tail -n3 received.log)"
nbdinfo --size "nbd+unix:///disk?socket=$tmp/a.sock" >/dev/null
eventually 10 received '^<28>nbdcurld\[[0-9]+\]: front-end: warning: [0-9]+ log lines lost: the system logger \(/dev/log\) did not take them' ||
    fail "the lost lines are not counted: $(grep -v debug received.log | tail -n3)"
stop_pid "$pid"

echo "== --log=syslog in the foreground: an export that cannot be opened is <27> error:"
: > received.log
rc=0
"$NBDCURLD" -r --log=syslog "$WEB_URL/good/missing.img" --run true 2> stderr2.log || rc=$?
[ "$rc" -eq 1 ] || fail "exit status $rc, not 1"
eventually 10 received '^<27>nbdcurld\[[0-9]+\]: error: export "" cannot be opened: not found \(HTTP 404\)' ||
    fail "no <27> error: $(cat received.log)"
grep -q 'cannot be opened' stderr2.log && fail "the error went to standard error too"

echo "== --run's command keeps the standard error nbdcurld was started with"
"$NBDCURLD" -r --log=syslog "$WEB_URL/good/disk.img" --run 'echo the command speaks >&2' 2> stderr3.log
grep -q 'the command speaks' stderr3.log || fail "--run's command lost its standard error"
received 'the command speaks' && fail "--run's command wrote into the log"
echo PASS
