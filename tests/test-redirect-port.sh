#!/usr/bin/env bash
# A redirect to another port is refused by the fetcher's sandbox.
#
# Each fetcher may open TCP connections only to its URL's port (and 53 for
# DNS over TCP): that is Landlock's TCP layer (LANDLOCK_ACCESS_NET_CONNECT_TCP,
# Landlock ABI >= 4, Linux 6.7).  Web server A answers
# /redirect-to/PORT/FILE with a 302 to http://127.0.0.1:PORT/good/FILE on
# web server B, which is up and serves the file.  Opening that export must
# fail: an error for the client, a log line saying the connection failed,
# no request ever reaching B, and no fetcher killed by a signal.
# Meanwhile exports on A (directly, and redirected within A's port) and an
# export whose URL is on B itself work.  Without Landlock TCP rules (ABI < 4)
# the redirect would be followed, so the test is skipped there.
source "$(dirname "$0")/functions.sh"
set -euo pipefail
requires nbdcopy nbdinfo

mkdir www
make_image www/disk.img 4M
sum=$(md5_of www/disk.img)
# (start_web_server reads web.port as soon as the server is started: make
# sure it exists, or a fast "head" fails and set -e ends the test.)
: > "$tmp/web.port"
start_web_server "$tmp/www"           # A: $WEB_URL, log $WEB_LOG

# B: a second web-server.py on another port, with its own log.
B_LOG=$tmp/web-b.log
: > "$B_LOG"
: > web-b.port
$PY "$srcdir/web-server.py" --log "$B_LOG" "$tmp/www" > web-b.port &
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

# Skip unless the fetcher's Landlock restricts TCP (ABI >= 4).
"$NBDCURLD" -v -r "$WEB_URL/good/disk.img" --run 'nbdinfo --size "$uri"' \
    > probe.out 2> probe.log || fail "probe failed: $(cat probe.log)"
abi=$(sed -nE 's/.*fetcher\]: debug: sandbox: Landlock ABI ([0-9]+).*/\1/p' probe.log |
      head -n1)
if [ -z "$abi" ]; then
    echo "$0: SKIP: the fetcher does not use Landlock here" >&2
    exit 77
fi
if [ "$abi" -lt 4 ]; then
    echo "$0: SKIP: Landlock ABI $abi < 4 cannot restrict TCP ports" >&2
    exit 77
fi
grep -q 'fetcher\]: debug: sandbox: Landlock ABI.*connect to the listed ports only' probe.log ||
    fail "Landlock ABI $abi, but the fetcher's TCP connects are not limited: $(cat probe.log)"
echo "fetcher: Landlock ABI $abi"

start_nbdcurld \
    --export "direct=$WEB_URL/good/disk.img" \
    --export "same-port=$WEB_URL/redirect/disk.img" \
    --export "other-port=$WEB_URL/redirect-to/$B_PORT/disk.img" \
    --export "on-b=http://127.0.0.1:$B_PORT/good/disk.img"

# The refused redirect (twice: a second client does no better).
for attempt in 1 2; do
    echo "== other-port ($attempt)"
    log_before=$(wc -c < "$NBDCURLD_LOG")
    rm -f other.img
    expect_fail timeout 60 nbdcopy "$(nbd_uri other-port)" other.img
    [ ! -s other.img ] || fail "other-port: data was copied"
    sleep 0.2                   # let the fetcher's warning reach the log
    tail -c +"$((log_before + 1))" "$NBDCURLD_LOG" > other.log
    cat other.log
    grep -iE 'connect|denied|refused|permission' other.log | grep -q "$B_PORT" ||
        fail "other-port: the log does not say the connection to port $B_PORT failed"
    kill -0 "$NBDCURLD_PID" || fail "other-port: nbdcurld died"
done
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
if grep -h 'killed by signal' probe.log "$NBDCURLD_LOG"; then
    fail "a process was killed by a signal"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
