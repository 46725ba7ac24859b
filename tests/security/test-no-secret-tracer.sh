#!/usr/bin/env bash
# No secret is readable by another program of nbdcurld's user: started as
# root with --user nobody, a URL password (--auth-password +FILE) and a
# PSK file (--tls-psk), while tests/security/secret-tracer.py, running as
# nobody, goes round every nbdcurld process in a tight loop (PTRACE_SEIZE,
# process_vm_readv, /proc/PID/mem) from each one's exec on, the server
# starts and serves a PSK client several times, with the fetcher launcher
# and with --exec-fetchers; the tracer must read neither the password nor
# alice's key.  A role that a tracer seized in the moment after its exec
# stops with the tracer's pid named, unless the tracer held it stopped
# until it ended.  (What a /proc/PID/mem descriptor opened in the moment
# right after an exec reads later is the documented residual: counted,
# not failed.)  Started as nobody itself (the supervisor reads the
# password file then), the same.  And a supervisor traced from its exec
# by a program of its user stops before it reads anything.  Each round's
# tracer watches for at most 4 s and ends sooner once the server has
# exited and none of its processes is left; a seize round does not wait
# out a start its tracer stalled once the tracer has ended.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdinfo
[ "$(id -u)" -eq 0 ] || { echo "$0: needs root (--user)"; exit 77; }
make_tls_keys

password='pw-Tracer-5e1d0c'
printf '%s\n' "$password" > pw.txt
chmod 0644 pw.txt "$PKI/keys.psk"
serve_image 1M
alice_hex=$(sed -n 's/^alice://p' "$PKI/keys.psk")
[ -n "$alice_hex" ] || fail "no key for alice in $PKI/keys.psk"
secret_args=(--secret "$(printf '%s' "$password" | od -An -tx1 | tr -d ' \n')"
             --secret "$(printf '%s' "$alice_hex" | od -An -tx1 | tr -d ' \n')"
             --secret "$alice_hex")
nobody_uid=$(id -u nobody)
nobody_gid=$(id -g nobody)
ROUNDS=${ROUNDS:-3}
served=0
refused=0
seized=0
stalled=0
residual=0

# running PID: PID has not exited (a child not yet reaped is a zombie,
# which kill -0 still finds).
running() {
    local state
    state=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) && [ "$state" != Z ]
}

# tracer_ended: in round's seize mode, its tracer has ended (it wrote its
# summary line).  What a seize round checks is what the tracer reads:
# after its end (its 4 s), a start it stalled is not waited out.
tracer_ended() { [ "$mode" = seize ] && grep -q '^summary' "$out"; }

# round NAME MODE ARGS...: one start under the tracer, one client, one
# stop.  MODE seize: the tracer attaches where it can, and stops each
# process it holds at every system call (which may stall a start: a
# program of the same user may always stop nbdcurld's processes);
# read: it only reads, and the start must serve.
round() {
    local name=$1 mode=$2 out=$tmp/tracer-$1.out pid
    local ready=$tmp/tracer/ready-$1 ended=$tmp/tracer/ended-$1
    shift 2
    # At most 4 s; it ends sooner once told the server has exited and it
    # has seen none of its processes left.
    $PY "$srcdir/security/secret-tracer.py" --uid "$nobody_uid" --gid "$nobody_gid" \
        --seconds 4 --ready "$ready" --until "$ended" --out "$out" "${secret_args[@]}" \
        $([ "$mode" = seize ] || echo --no-seize) &
    pid=$!
    eventually 10 test -e "$ready" || fail "$name: the tracer did not start"
    "$@" -f --unix "$tmp/run/nbd.sock" -v --tls=require --tls-psk "$PKI/keys.psk" \
        --auth-user alice --auth-password "+$tmp/pw.txt" -r "$WEB_URL/good/disk.img" \
        2> "$tmp/nbdcurld-$name.log" &
    local srv=$!
    local i client status=0
    for i in $(seq 50); do
        [ -S "$tmp/run/nbd.sock" ] && break
        kill -0 "$srv" 2>/dev/null || break
        tracer_ended && break
        sleep 0.1
    done
    NBD_SOCK=$tmp/run/nbd.sock
    timeout 20 nbdinfo --size "$(psk_uri alice "$PKI/keys.psk")" > "$tmp/size-$name" 2>&1 &
    client=$!
    while running "$client" && ! tracer_ended; do
        sleep 0.05
    done
    ! running "$client" || kill "$client" 2>/dev/null || true
    wait "$client" || status=$?
    if [ "$status" -eq 0 ] && [ "$(cat "$tmp/size-$name")" = 1048576 ]; then
        served=$((served + 1))
    elif [ "$mode" = read ]; then
        fail "$name: not served: $(tail -n 5 "$tmp/nbdcurld-$name.log")"
    elif grep -q 'is traced by process' "$tmp/nbdcurld-$name.log"; then
        refused=$((refused + 1))
    else
        # A tracer may stop a process it holds (as any program of the
        # same user may stop it with SIGSTOP): a role held until its
        # peer gave up fails that start.  Not a leak.
        stalled=$((stalled + 1))
    fi
    kill "$srv" 2>/dev/null || true
    # A stop held up by a stalled start would wait out its grace; after
    # the tracer's end a second signal (which stops at once) changes
    # nothing that is checked.
    for i in $(seq 10); do
        running "$srv" && tracer_ended || break
        sleep 0.1
    done
    ! running "$srv" || ! tracer_ended || kill "$srv" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
    touch "$ended"
    wait "$pid" || fail "$name: the tracer failed"
    rm -f "$tmp/run/nbd.sock"
    grep -v '^found' "$out" | sed "s/^/$name: tracer: /" >&2
    if grep '^found' "$out"; then
        fail "$name: the tracer read a secret ($(grep -c '^found' "$out") times; see above)"
    fi
    # A seized role stops when it sees its tracer; one that the tracer
    # held stopped until the tracer's end sees none, and goes on.
    seized=$((seized + $(grep -c '^seized' "$out" || true)))
    residual=$((residual + $(grep -c '^residual' "$out" || true)))
}

mkdir run tracer
chown nobody: run tracer
chmod a+rx "$tmp"
for r in $(seq "$ROUNDS"); do
    for mode in seize read; do
        round "launcher-$mode-$r" $mode "$NBDCURLD" --user nobody
        round "exec-$mode-$r" $mode "$NBDCURLD" --user nobody --exec-fetchers
    done
done
# Started as nobody: the supervisor reads the password and the PSK file
# itself, as nobody.
for mode in seize read; do
    round "as-nobody-$mode" $mode setpriv --reuid="$nobody_uid" --regid="$nobody_gid" \
        --clear-groups "$NBDCURLD"
done
echo "served $served, refused $refused (a role saw its tracer), stalled $stalled;" \
    "$seized processes seized; $residual residual readings (a /proc/PID/mem" \
    "descriptor opened in the moment after an exec: SECURITY.md)" >&2

# Traced from its first instruction (PTRACE_TRACEME by a parent of the
# same user): the supervisor must refuse before it reads --auth-password.
$PY - "$nobody_uid" "$nobody_gid" "$NBDCURLD" "$tmp" > traceme.log 2>&1 <<'PYEOF' ||
import ctypes, os, sys
uid, gid, exe, tmp = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
libc = ctypes.CDLL(None, use_errno=True)
os.setgroups([]); os.setgid(gid); os.setuid(uid)
pid = os.fork()
if pid == 0:
    libc.ptrace(0, 0, None, None)           # PTRACE_TRACEME
    os.execv(exe, [exe, "-f", "--unix", tmp + "/run/traced.sock", "--auth-user", "alice",
                   "--auth-password", "+" + tmp + "/pw.txt", "-r", "http://127.0.0.1:1/x"])
while True:
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) or os.WIFSIGNALED(status):
        print("exit", os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status))
        break
    sig = os.WSTOPSIG(status)
    libc.ptrace(7, pid, None, ctypes.c_void_p(0 if sig == 5 else sig))   # PTRACE_CONT
PYEOF
    fail "the PTRACE_TRACEME run failed: $(cat traceme.log)"
grep -q '^exit 1$' traceme.log || fail "a traced supervisor did not stop: $(cat traceme.log)"
grep -q 'nbdcurld is traced by process' traceme.log ||
    fail "a traced supervisor did not name its tracer: $(cat traceme.log)"
! grep -q 'read a password' traceme.log || fail "a traced supervisor read the password"
[ "$served" -ge $((2 * ROUNDS + 1)) ] || fail "only $served starts served a client"
