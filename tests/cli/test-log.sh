#!/usr/bin/env bash
# --log and how lines look on standard error: a UTC time on each line when
# it is a plain file and none on a pipe; the journal's <N> priorities (and
# no program name) when it is the stream JOURNAL_STREAM names; --log=null
# writes nothing once nbdcurld serves; --log=stderr keeps logging to the
# starting standard error in the background; without it, and with no
# system logger, nbdcurld says so and logs there too.  Every role writes
# in one form: "nbdcurld: ROLE: LEVEL: text".  (Syslog itself:
# test-log-syslog.sh.)
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdinfo

mkdir www
make_image www/disk.img 1M
img=$tmp/www/disk.img
time_re='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z '

# run_once ARGS...: nbdcurld -v in the foreground, serving one nbdinfo
# through --run; standard error is wherever the caller put it.
run_once() { "$NBDCURLD" -v -r "$@" --run 'nbdinfo --size "$uri" >/dev/null'; }

echo "== a plain file: a time on every line, one form for every role"
run_once "file://$img" 2> file.log
grep -Evq "$time_re" file.log && fail "a line without a time: $(grep -Ev "$time_re" file.log | head -n3)"
grep -Eq "${time_re}nbdcurld: debug: " file.log || fail "no supervisor line: $(head -n3 file.log)"
for role in front-end fetcher url-check; do
    grep -Eq "${time_re}nbdcurld: $role: debug: " file.log || fail "no $role line in the one form"
done
grep -q 'nbdcurld\[' file.log && fail "a line in the old nbdcurld[ROLE] form"

echo "== a pipe: no time"
run_once "file://$img" 2>&1 >/dev/null | cat > pipe.log
grep -q '^nbdcurld: front-end: debug: ' pipe.log || fail "no plain line: $(head -n3 pipe.log)"
grep -Eq '^[0-9]{4}-' pipe.log && fail "a time on a pipe"

echo "== the journal's stream: <N> priorities, no program name"
: > journal.log
JOURNAL_STREAM=$(stat -c '%d:%i' journal.log) run_once "file://$img" 2>> journal.log
grep -q '^<7>debug: ' journal.log || fail "no <7> supervisor line: $(head -n3 journal.log)"
grep -q '^<7>fetcher: debug: ' journal.log || fail "no <7> fetcher line"
grep -vq '^<[0-7]>' journal.log && fail "a line without a priority: $(grep -v '^<[0-7]>' journal.log | head -n3)"
# An error and its priority: an export that cannot be opened at start.
: > journal-err.log
rc=0
JOURNAL_STREAM=$(stat -c '%d:%i' journal-err.log) \
    "$NBDCURLD" -r "file://$tmp/www/missing.img" --run true 2>> journal-err.log || rc=$?
[ "$rc" -eq 1 ] || fail "missing file: exit $rc"
grep -q '^<3>error: export "": cannot open ' journal-err.log ||
    fail "no <3>error: line: $(cat journal-err.log)"
# A JOURNAL_STREAM naming another file is not this standard error.
: > other.log
JOURNAL_STREAM=$(stat -c '%d:%i' journal.log) run_once "file://$img" 2> other.log
grep -q '^<' other.log && fail "journal priorities on a standard error that is not the journal's"
grep -Eq "${time_re}nbdcurld: " other.log || fail "no time in a plain file"

echo "== --log=null: nothing once serving"
run_once --log=null "file://$img" 2> null.log
grep -Eq 'front-end|fetcher' null.log && fail "--log=null: a child logged: $(head -n3 null.log)"
# The same run without it does log them: the check above can fail.
grep -q 'nbdcurld: front-end: ' file.log
# --run's command keeps the standard error nbdcurld was started with.
"$NBDCURLD" -r --log=null "file://$img" --run 'echo the command speaks >&2' 2> null-run.log
grep -q 'the command speaks' null-run.log || fail "--log=null silenced --run's command"

echo "== --log=stderr in the background: the lines still come"
"$NBDCURLD" -v -r --log=stderr -U "$tmp/a.sock" -P "$tmp/a.pid" "file://$img" 2> background.log
wait_started "$tmp/a.sock" "$tmp/a.pid" background.log
kill_on_exit "$(cat a.pid)"
nbdinfo --size "nbd+unix:///?socket=$tmp/a.sock" >/dev/null
eventually 10 grep -q 'nbdcurld: front-end: debug: ' background.log ||
    fail "no line from the front-end after going into the background: $(tail -n3 background.log)"
stop_pid "$(cat a.pid)"

echo "== the default in the background"
if [ -S /dev/log ]; then
    echo "(a system logger is listening at /dev/log: test-log-syslog.sh checks it)"
else
    "$NBDCURLD" -r -U "$tmp/b.sock" -P "$tmp/b.pid" "file://$img" 2> default.log
    wait_started "$tmp/b.sock" "$tmp/b.pid" default.log
    kill_on_exit "$(cat b.pid)"
    grep -q 'warning: no system logger at /dev/log: logging to standard error' default.log ||
        fail "no word that syslog is missing: $(cat default.log)"
    stop_pid "$(cat b.pid)"
fi

echo "== log = in a configuration file"
printf 'log = null\nurl = file://%s\n' "$img" > null.conf
run_once --config null.conf 2> conf-null.log
grep -Eq 'front-end|fetcher' conf-null.log && fail "log = null: a child logged: $(head -n3 conf-null.log)"
printf 'log = sylog\nurl = file://%s\n' "$img" > bad.conf
rc=0
"$NBDCURLD" --config bad.conf 2> conf-bad.log || rc=$?
[ "$rc" -eq 1 ] || fail "log = sylog: exit $rc"
grep -q 'error: bad.conf:1: --log=sylog: give stderr, syslog or null' conf-bad.log ||
    fail "log = sylog: $(cat conf-bad.log)"

echo "== --log=syslog with no system logger: refused at start"
if [ ! -S /dev/log ]; then
    rc=0
    "$NBDCURLD" -r --log=syslog -U "$tmp/c.sock" "file://$img" 2> syslog-missing.log || rc=$?
    [ "$rc" -eq 1 ] || fail "--log=syslog without /dev/log: exit $rc"
    grep -q 'error: --log=syslog: cannot reach the system logger at /dev/log.*--log=stderr' \
        syslog-missing.log || fail "no reason: $(cat syslog-missing.log)"
fi
echo PASS
