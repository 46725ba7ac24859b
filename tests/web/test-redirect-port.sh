#!/usr/bin/env bash
# A redirect to a port outside the allowed set is refused, with a message
# that names the option that would allow it; --allow-port allows it.
#
# The allowed set (fetcher-connect.c): the URL's port, 80 and 443, and
# --allow-port.  Web server A answers /redirect-to/PORT/FILE with a 302 to
# http://127.0.0.1:PORT/good/FILE on web server B, which is up and serves
# the file.  Opening that export must fail: an error for the client, a log
# line naming the target and --allow-port PORT, no request ever reaching B,
# and no fetcher killed by a signal.  Meanwhile exports on A (directly, and
# redirected within A's port) and an export whose URL is on B itself work.
# Started again with --allow-port B's port, the redirect is followed.
# Where Landlock has its TCP layer (ABI >= 4, Linux 6.7) the fetcher's
# sandbox holds the same set of ports: the debug line says so.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy nbdinfo

www_image 4M
# (start_web_server reads web.port as soon as the server is started: make
# sure it exists, or a fast "head" fails and set -e ends the test.)
: > "$tmp/web.port"
start_web_server "$tmp/www"           # A: $WEB_URL, log $WEB_LOG

# B: a second web-server.py on another port, with its own log.
B_LOG=$tmp/web-b.log
: > "$B_LOG"
: > web-b.port
$PY "$srcdir/lib/web-server.py" --log "$B_LOG" "$tmp/www" > web-b.port &
b_pid=$!
kill_on_exit "$b_pid"
B_PORT=
for i in $(seq 100); do
    B_PORT=$(head -n1 web-b.port)
    [ -n "$B_PORT" ] && break
    kill -0 "$b_pid" 2>/dev/null || fail "web server B did not start"
    sleep 0.1
done
[ -n "$B_PORT" ] || fail "web server B did not print its port"
[ "$B_PORT" != "$WEB_PORT" ] || fail "both web servers on port $B_PORT?"

# The fetcher's Landlock rules hold the same ports, where the kernel can.
"$NBDCURLD" -v -r "$WEB_URL/good/disk.img" --run 'nbdinfo --size "$uri"' \
    > probe.out 2> probe.log || fail "probe failed: $(cat probe.log)"
abi=$(sed -nE 's/.*fetcher: debug: sandbox: Landlock ABI ([0-9]+).*/\1/p' probe.log |
      head -n1)
if [ -n "$abi" ] && [ "$abi" -ge 4 ]; then
    grep -q 'fetcher: debug: sandbox: Landlock ABI.*connect to the listed ports only' probe.log ||
        fail "Landlock ABI $abi, but the fetcher's TCP connects are not limited: $(cat probe.log)"
fi
echo "fetcher: Landlock ABI ${abi:-none}"

start_nbdcurld \
    --export "direct=$WEB_URL/good/disk.img" \
    --export "same-port=$WEB_URL/redirect/disk.img" \
    --export "other-port=$WEB_URL/redirect-to/$B_PORT/disk.img" \
    --export "on-b=http://127.0.0.1:$B_PORT/good/disk.img"

# The refused redirect (twice: a second client does no better, and the
# reason is logged once, not once per client).
for attempt in 1 2; do
    echo "== other-port ($attempt)"
    rm -f other.img
    expect_fail timeout 60 nbdcopy "$(nbd_uri other-port)" other.img
    [ ! -s other.img ] || fail "other-port: data was copied"
    kill -0 "$NBDCURLD_PID" || fail "other-port: nbdcurld died"
done
sleep 0.2                       # let the front-end's warning reach the log
cat "$NBDCURLD_LOG"
lines=$(grep -F "a redirect to http://127.0.0.1:$B_PORT/good/disk.img was refused" \
            "$NBDCURLD_LOG" | grep -F -- "add --allow-port $B_PORT" | grep -c 'export "other-port"' || true)
[ "$lines" -eq 1 ] ||
    fail "other-port: $lines log lines name the target and --allow-port $B_PORT, not 1"
# A redirected, B never saw a request: the connect was refused locally.
grep -q " /redirect-to/$B_PORT/disk.img .*status=302" "$WEB_LOG" ||
    fail "web server A never answered the redirect: $(cat "$WEB_LOG")"
[ ! -s "$B_LOG" ] || fail "web server B got requests: $(cat "$B_LOG")"

# Meanwhile, the other exports work.
for name in direct same-port on-b; do
    echo "== $name (must work)"
    rm -f "$name.img"
    nbdcopy "$(nbd_uri "$name")" "$name.img" || fail "$name: copy failed"
    [ "$(md5_of "$name.img")" = "$sum" ] || fail "$name: copy differs"
done
grep -q ' /good/disk.img ' "$B_LOG" || fail "on-b: B logged no request"
stop_nbdcurld

# --allow-port: the same redirect is followed (and the list form works).
: > "$B_LOG"
start_nbdcurld --allow-port "1,$B_PORT" \
    --export "other-port=$WEB_URL/redirect-to/$B_PORT/disk.img"
rm -f other.img
nbdcopy "$(nbd_uri other-port)" other.img || fail "other-port with --allow-port: copy failed"
[ "$(md5_of other.img)" = "$sum" ] || fail "other-port with --allow-port: copy differs"
grep -q ' /good/disk.img ' "$B_LOG" || fail "--allow-port: B logged no request"
stop_nbdcurld
if grep -h 'killed by signal' probe.log "$NBDCURLD_LOG"; then
    fail "a process was killed by a signal"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
