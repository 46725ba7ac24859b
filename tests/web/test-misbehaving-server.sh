#!/usr/bin/env bash
# A web server that misbehaves gives its client an error and a log line,
# never wrong data, and does not disturb another client of the same
# nbdcurld.  Servers that are merely unusual (no Content-Length in HEAD,
# HEAD refused, an http redirect) still work.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy
requires_python_nbd

serve_image 16M
sum=$(md5_of www/disk.img)

# mode of tests/lib/web-server.py, and what nbdcurld's log should say about it
# (case-insensitive extended regexp: wording is free, the subject is not).
declare -A bad=(
    [ignore-range]='range|200|partial'
    [short-body]='short|partial|length|incomplete|bytes'
    [long-body]='long|length|more|range|bytes'
    [wrong-range]='range'
    [redirect-file]='redirect|protocol|scheme|file'
    [status-500]='500|status'
    [changing]='chang|etag|modified|412|precondition|size'
    [stall]='time|stall|progress'
    # Caught by the direct reads' header parser (src/fetcher/direct-head-parse.c).
    [garbage-status]='status line'
    [two-lengths]='Content-Length'
    [nul-header]='header name'
    # Caught in the libcurl header callback (check_line_end): served
    # leniently, it would be the right length of the wrong bytes.
    [mixed-line-ends]='mixes CRLF'
    # A Content-Range total of "*" with no validator pinned (web-reply.c).
    [unknown-total-unpinned]='size.*ETag'
)
good_modes=(good no-length head-403 head-405 redirect unknown-total)

args=()
for m in "${!bad[@]}" "${good_modes[@]}"; do
    args+=(--export "$m=$WEB_URL/$m/disk.img")
done
# --timeout: the stalled transfer must fail in seconds, not minutes.
start_nbdcurld --timeout 2 "${args[@]}"

# A client of a bad export: connecting may fail; if it works, each read
# must fail, and must never return wrong data.
cat > bad-client.py <<'PYEOF'
import sys
import nbd

uri, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
h = nbd.NBD()
try:
    h.connect_uri(uri)
except nbd.Error as e:
    print("connect failed: %s" % e)
    sys.exit(0)
size = len(data)
ok = 0
for offset, count in ((0, 4096), (size // 2 + 1, 1 << 20), (size - 4096, 4096)):
    try:
        got = h.pread(count, offset)
    except nbd.Error as e:
        print("read of %d at %d failed: %s" % (count, offset, e))
        if e.errno != "EIO":    # (a name) the server's trouble, not the request's
            sys.exit("%s: read failed with errno %s, not EIO" % (uri, e.errno))
        continue
    if got != data[offset:offset + count]:
        sys.exit("%s: WRONG DATA for %d bytes at %d" % (uri, count, offset))
    ok += 1
if ok:
    sys.exit("%s: %d reads succeeded from a misbehaving server" % (uri, ok))
PYEOF

for m in "${!bad[@]}"; do
    echo "== $m"
    # Meanwhile a well-behaved client copies the good export.
    rm -f good.img
    nbdcopy "$(nbd_uri good)" good.img &
    copy_pid=$!
    kill_on_exit "$copy_pid"

    log_before=$(wc -c < "$NBDCURLD_LOG")
    timeout 60 $PY bad-client.py "$(nbd_uri "$m")" www/disk.img ||
        fail "$m: client did not get a clean error"
    # Give the fetcher a moment to log.
    sleep 0.2
    tail -c +"$((log_before + 1))" "$NBDCURLD_LOG" > "$m.log"
    grep -iE "${bad[$m]}" "$m.log" > match.txt ||
        fail "$m: nbdcurld logged nothing matching /${bad[$m]}/: $(cat "$m.log")"
    head -n3 match.txt

    wait "$copy_pid" || fail "$m: the good client's copy failed meanwhile"
    [ "$(md5_of good.img)" = "$sum" ] || fail "$m: the good client got wrong data"
done

# Ranges ignored: the fetcher must hang up instead of taking whole bodies.
# (The server logs a response once it is over: wait for one.)
for i in $(seq 50); do
    grep -q '^GET /ignore-range/' "$WEB_LOG" && break
    sleep 0.1
done
grep -q '^GET /ignore-range/' "$WEB_LOG" ||
    fail "ignore-range: no GET finished (is the fetcher still reading it?)"
max_sent=$(awk '$2 == "/ignore-range/disk.img" {
                    sub("body_bytes_sent=", "", $5); v = $5 + 0; if (v > m) m = v }
                END { print m + 0 }' "$WEB_LOG")
echo "ignore-range: largest body sent $max_sent bytes"
[ "$max_sent" -lt $((1 << 20)) ] ||
    fail "ignore-range: a response sent $max_sent bytes of a 16 MiB body"

for m in "${good_modes[@]}"; do
    echo "== $m (must work)"
    rm -f out.img
    nbdcopy "$(nbd_uri "$m")" out.img || fail "$m: copy failed"
    [ "$(md5_of out.img)" = "$sum" ] || fail "$m: copy differs"
done

# The server survived all of it.
kill -0 "$NBDCURLD_PID" || fail "nbdcurld died"

# A folded first header line, on the one libcurl handle there is
# (--connections 1): it opened the export, so it has stored headers.
# libcurl 7.88 unfolds the line into the previous transfer's last header,
# freed by then (curl/curl#11101): renew_easy in
# src/fetcher/fetcher-http-setup.c gives every transfer a handle that has
# stored none, which refuses the line.
# The release build may not crash without it; the ASan build reports it.
echo "== folded-first (one connection)"
"$NBDCURLD" -r --connections 1 "$WEB_URL/folded-first/disk.img" \
    --run "$PY bad-client.py \"\$uri\" www/disk.img" > folded.out 2> folded.log ||
    fail "folded-first: $(cat folded.out folded.log)"
grep -iE 'header line|without colon' folded.log > match.txt ||
    fail "folded-first: nbdcurld logged no refused header: $(cat folded.log)"
head -n2 match.txt
if grep -E 'killed by signal|Sanitizer|runtime error' folded.log; then
    fail "folded-first: a process crashed: $(cat folded.log)"
fi
