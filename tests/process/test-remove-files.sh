#!/usr/bin/env bash
# Files nbdcurld makes are removed at exit whatever user it runs as (issue
# 14): started as root with -U and -P in a directory only root may write,
# it runs as nobody, which may not remove them; the file remover (a child
# that keeps root's uid, without capabilities, allowed by Landlock to
# remove files there and nothing else) removes them when the supervisor
# ends, by a signal or killed.  A file replaced meanwhile is left alone.
# The remover is executed anew, given only the paths and their device and
# inode numbers: its memory holds none of the supervisor's secrets.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
    echo "$0: SKIP: needs root (nbdcurld started as root, running as nobody)" >&2
    exit 77
fi
requires_python_nbd

make_image disk.img 100000
chmod 0711 "$tmp"
chmod 0644 disk.img
mkdir -m 0755 run                     # like /run: root's, not nobody's
sock=$tmp/run/nbd.sock pid=$tmp/run/nbd.pid

# A password the supervisor reads from a file, for a second export (never
# opened: nbdcurld opens exports only when a client comes).
secret=remover-must-not-hold-$RANDOM$RANDOM$RANDOM
echo "$secret" > password
chmod 0600 password
start() {
    "$NBDCURLD" -f --user nobody -U "$sock" -P "$pid" -r --export "=file://$tmp/disk.img" \
        --export "web=http://127.0.0.1:9/disk.img" user=someone password=+"$tmp/password" \
        2>>nbdcurld.log &
    SERVER=$!
    kill_on_exit "$SERVER"
    wait_started "$sock" "$pid" nbdcurld.log
    # It names itself once it runs.
    for i in $(seq 50); do
        REMOVER=$(pgrep -P "$SERVER" -x nbdcurld-rm) && return 0
        sleep 0.1
    done
    fail "no file remover"
}

# memory_has PID STRING: STRING is in PID's readable memory, read a
# piece at a time (a sanitizer build maps terabytes of shadow, which are
# skipped: no string of ours lives there).
memory_has() {
    $PY - "$1" "$2" <<'PYEOF'
import re, sys
pid, wanted = sys.argv[1], sys.argv[2].encode()
PIECE, SKIP = 1 << 20, 1 << 32
with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb", 0) as mem:
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)
        if not m or "[vvar]" in line or "[vsyscall]" in line:
            continue
        start, end = int(m.group(1), 16), int(m.group(2), 16)
        if end - start > SKIP:
            continue
        tail = b""
        for at in range(start, end, PIECE):
            try:
                mem.seek(at)
                piece = tail + mem.read(min(PIECE, end - at))
            except OSError:
                break
            if wanted in piece:
                print("found in: " + line.strip())
                sys.exit(0)
            tail = piece[-len(wanted):]
sys.exit(1)
PYEOF
}

# gone_within SECONDS: the socket and the pid file disappear.
gone_within() {
    local i
    for i in $(seq $(($1 * 10))); do
        [ ! -e "$sock" ] && [ ! -e "$pid" ] && return 0
        sleep 0.1
    done
    fail "left behind: $(ls -l run)"
}

echo "== SIGTERM"
start
[ "$(stat -c %u /proc/"$SERVER")" = 65534 ] || fail "the supervisor is not nobody"
# The remover: root's uid, but nothing else.
status=/proc/$REMOVER/status
grep -q '^Uid:\s*0\s' "$status" || fail "remover: not root's uid"
for f in CapInh CapPrm CapEff CapBnd CapAmb; do
    grep -q "^$f:\s*0000000000000000$" "$status" || fail "remover: $(grep "^$f:" "$status")"
done
grep -q '^NoNewPrivs:\s*1$' "$status" || fail "remover: no_new_privs not set"
grep -q '^Seccomp:\s*2$' "$status" || fail "remover: no seccomp filter"
# Memory, read as root: the supervisor holds the password (it hands it to
# the fetchers), the remover does not.
memory_has "$SERVER" "$secret" || fail "the memory reader does not find the password"
! memory_has "$REMOVER" "$secret" || fail "remover: its memory holds the password"
tr '\0' ' ' < "/proc/$REMOVER/cmdline" | grep -q -- '--internal-role=file-remover' ||
    fail "remover: not executed in its role: $(tr '\0' ' ' < "/proc/$REMOVER/cmdline")"
$PY -c 'import nbd, sys
h = nbd.NBD(); h.connect_unix(sys.argv[1]); assert h.get_size() == 100000' "$sock" ||
    fail "cannot read through $sock"
kill -TERM "$SERVER"
wait "$SERVER" || fail "exit status $?"
gone_within 1
[ -z "$(leftover_processes)" ] || fail "processes left: $(leftover_processes)"

echo "== SIGKILL of the supervisor"
start
kill -KILL "$SERVER"
gone_within 3
# Orphans now: whoever adopts them may leave them as zombies a while.
sleep 0.3
left=$(pgrep -s 0 -r R,S,D,T -l '^nbdcurld' || true)
[ -z "$left" ] || fail "processes left: $left"

# replaced_file_stays WHAT REPLACED OTHER: replace the file at REPLACED
# while nbdcurld runs (made before the old one goes, so it cannot reuse
# its inode number); at the stop it must stay, OTHER go, and the log say
# why.
replaced_file_stays() {
    local what=$1 replaced=$2 other=$3 mark=$RANDOM
    echo "== a $what replaced meanwhile is not removed"
    start
    echo "$mark" > "$replaced.new"
    mv "$replaced.new" "$replaced"
    kill -TERM "$SERVER"
    wait "$SERVER" || true
    [ ! -e "$other" ] || fail "$other was left"
    [ "$(cat "$replaced")" = "$mark" ] || fail "the replaced $what was removed"
    grep -q "$replaced was replaced while nbdcurld ran: left as it is" nbdcurld.log ||
        fail "the log does not say why the $what stays"
    rm -f "$replaced"
}
replaced_file_stays "pid file" "$pid" "$sock"
replaced_file_stays socket "$sock" "$pid"
