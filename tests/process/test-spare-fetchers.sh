#!/usr/bin/env bash
# Spare fetchers (--spare-fetchers, src/supervisor/limits-spares.h): started
# ahead of need, shared out among the exports, sandboxed and silent until
# a client takes one (no request reaches the web server before), replaced
# when taken, forgotten when they die (a client never gets a dead one),
# let go at a stop; none by default.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdinfo nbdcopy

serve_image 3M
size=$(stat -c %s www/disk.img)
cp www/disk.img www/other.img

# fetchers: the supervisor's fetcher children (spares and in use).
fetchers() { pgrep -P "$NBDCURLD_PID" -x nbdcurld-fetch | sort -n || true; }
count_fetchers() { fetchers | wc -l; }
# wait_fetchers N: until N fetchers run (10 s at most).
wait_fetchers() {
    local i
    for i in $(seq 100); do
        [ "$(count_fetchers)" -eq "$1" ] && return 0
        sleep 0.1
    done
    fail "$(count_fetchers) fetchers run, expected $1: $(tail -n 5 "$NBDCURLD_LOG")"
}
requests() { wc -l < "$WEB_LOG"; }

# Three spares over two exports: a, b, a.
start_nbdcurld -r -v --spare-fetchers 3 --export "a=$WEB_URL/good/disk.img" \
    --export "b=$WEB_URL/good/other.img"
wait_fetchers 3
grep -q "3 spare fetchers started" "$NBDCURLD_LOG" || fail "no spares logged"
sleep 1
[ "$(requests)" -eq 0 ] || fail "spares went to the web server: $(cat "$WEB_LOG")"
# Each is sandboxed already: no capability, and its own user namespace
# or the unprivileged user (SECURITY.md).
for p in $(fetchers); do
    grep -q '^CapEff:[[:space:]]*0*$' "/proc/$p/status" || fail "spare $p has capabilities"
    grep -q '^Seccomp:[[:space:]]*2' "/proc/$p/status" || fail "spare $p has no seccomp filter"
done

# A client of a takes a spare: it is served, and a new spare replaces it.
before=$(fetchers)
[ "$(nbdinfo --size "$(nbd_uri a)")" = "$size" ] || fail "a: wrong size"
wait_fetchers 3
after=$(fetchers)
[ "$before" != "$after" ] || fail "no spare was taken"
grep -E '^HEAD /good/disk\.img' "$WEB_LOG" > /dev/null || fail "a was not opened"
! grep -q other.img "$WEB_LOG" || fail "b's spare opened without a client"

# copy_exact URI IMAGE [NBDCOPY OPTIONS]: nbdcopy (4 connections at once where multi-conn
# is offered, as it is here), byte-exact.
copy_exact() {
    rm -f copy.img
    nbdcopy "${@:3}" "$1" copy.img || fail "nbdcopy $1 failed: $(tail -n 5 "$NBDCURLD_LOG")"
    cmp -s copy.img "$2" || fail "the copy of $1 differs"
}
copy_exact "$(nbd_uri a)" www/disk.img
copy_exact "$(nbd_uri b)" www/other.img
wait_fetchers 3

# A spare that dies is forgotten, and its export's clients are served.
victim=$(fetchers | head -n 1)
kill -KILL "$victim"
for i in $(seq 50); do
    grep -q "spare fetcher $victim .* ended before it was needed" "$NBDCURLD_LOG" && break
    sleep 0.1
done
grep -q "spare fetcher $victim .* ended before it was needed" "$NBDCURLD_LOG" ||
    fail "the dead spare was not noticed: $(tail -n 3 "$NBDCURLD_LOG")"
for e in a b a b; do
    [ "$(nbdinfo --size "$(nbd_uri $e)")" = "$size" ] || fail "$e after a spare died"
done

# A graceful stop lets the spares go: nothing is left.
kill -TERM "$NBDCURLD_PID"
for i in $(seq 100); do
    kill -0 "$NBDCURLD_PID" 2>/dev/null || break
    sleep 0.1
done
! kill -0 "$NBDCURLD_PID" 2>/dev/null || fail "nbdcurld did not stop with spares waiting"
sleep 0.3
[ -z "$(leftover_processes)" ] || fail "left behind: $(leftover_processes)"

# By default there are none: a fetcher starts only for a client.
: > "$WEB_LOG"
start_nbdcurld -r "$WEB_URL/good/disk.img"
sleep 1
[ "$(count_fetchers)" -eq 0 ] || fail "fetchers run without --spare-fetchers"
[ "$(nbdinfo --size "$NBD_URI")" = "$size" ] || fail "wrong size without spares"
wait_fetchers 0
stop_nbdcurld

# file: exports have none (their fetcher checks the image before its
# sandbox), and neither have exports with scripts; the http export beside
# them gets every place.
start_nbdcurld -r --spare-fetchers 2 --export "f=file://$tmp/www/disk.img" \
    --export "s=$WEB_URL/good/disk.img" 'header-script=echo "X-A: b"' \
    --export "h=$WEB_URL/good/disk.img"
wait_fetchers 2
sleep 0.5
[ "$(count_fetchers)" -eq 2 ] || fail "$(count_fetchers) spares, expected 2 (for h)"
for e in f s h; do
    [ "$(nbdinfo --size "$(nbd_uri $e)")" = "$size" ] || fail "$e: wrong size"
done
stop_nbdcurld

# --max-clients bounds them.
start_nbdcurld -r --max-clients 1 --spare-fetchers 4 "$WEB_URL/good/disk.img"
sleep 1
[ "$(count_fetchers)" -eq 1 ] || fail "$(count_fetchers) spares with --max-clients 1"
copy_exact "$NBD_URI" www/disk.img --connections=1
stop_nbdcurld

# --run: asked for, they come too.  The command's parent is the
# supervisor.
count_in_run() {
    "$NBDCURLD" -r "$WEB_URL/good/disk.img" "$@" \
        --run 'sleep 1; pgrep -P $PPID -x nbdcurld-fetch | wc -l > run-count.txt'
    cat run-count.txt
}
[ "$(count_in_run --spare-fetchers 2)" -eq 2 ] || fail "no spares with --run --spare-fetchers 2"

# Out of range is refused by name.
expect_fail "$NBDCURLD" --spare-fetchers 33 -r "$WEB_URL/good/disk.img"
echo ok
