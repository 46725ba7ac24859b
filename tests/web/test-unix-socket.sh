#!/usr/bin/env bash
# unix-socket-path=: the web server listens on a Unix socket
# (tests/lib/web-server.py --unix), and nbdcurld connects there whatever the
# URL's host, which goes into the Host header (a name that resolves
# nowhere: no DNS is asked):
#   - copies are byte-exact on the direct (spliced) path and through
#     libcurl (/chunked/);
#   - the fetcher's Landlock rules allow no TCP port at all;
#   - a socket the fetcher may not write to, or none at all, is an error
#     that says so, never data;
#   - FTP URLs, proxies and over-long paths are refused at start.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy

www_image 4M
# Children run as nobody when started as root: the socket must be
# reachable and writable for them.
chmod 711 "$tmp"
sock=$tmp/web.sock
WEB_LOG=$tmp/web-server.log
$PY "$srcdir/lib/web-server.py" --unix "$sock" --log "$WEB_LOG" www > web.port &
kill_on_exit $!
port_from web.port "web-server.py on $sock" >/dev/null
chmod 666 "$sock"

url() {
    [ -e "www/$1.img" ] || ln -s disk.img "www/$1.img"
    echo "http://disk.nbdcurld.invalid/$2/$1.img"
}

copy_checked direct "$(url direct good)" unix-socket-path="$sock"
web_every direct 'host="disk.nbdcurld.invalid"'
grep -q 'reads of up to .* go direct' direct.log ||
    fail "direct: reads did not go direct: $(grep 'reads go' direct.log)"
landlock=$(grep 'fetcher: debug: sandbox: Landlock ABI [4-9]' direct.log || true)
if [ -n "$landlock" ]; then
    ! grep -v 'TCP: bind and connect refused' <<<"$landlock" ||
        fail "direct: a fetcher may connect to TCP ports"
fi
copy_checked chunked "$(url chunked chunked)" unix-socket-path="$sock"
web_every chunked 'host="disk.nbdcurld.invalid"'
# A relative path is relative to where nbdcurld was started.
copy_checked relative "$(url relative good)" unix-socket-path=web.sock
web_every relative 'host="disk.nbdcurld.invalid"'

# The fetcher's user (nobody, when started as root) may not connect; and
# a socket that is not there.
if [ "$(id -u)" -eq 0 ]; then
    chmod 600 "$sock"
    echo "== not-writable"
    expect_fail "$NBDCURLD" -r --run 'nbdcopy "$uri" not-writable.img' \
        "$(url not-writable good)" unix-socket-path="$sock" 2>not-writable.log </dev/null
    grep -q "may not write to the socket file" not-writable.log ||
        fail "not-writable: the log does not say why: $(cat not-writable.log)"
    chmod 666 "$sock"
fi
echo "== missing"
expect_fail "$NBDCURLD" -r --run 'nbdcopy "$uri" missing.img' \
    "$(url missing good)" unix-socket-path="$tmp/none.sock" 2>missing.log </dev/null
grep -qi "couldn't connect" missing.log || fail "missing: the log does not say why: $(cat missing.log)"
[ ! -s missing.img ] || fail "missing: data was copied"

refused_at_start ftp 'unix-socket-path= serves http and https URLs only' \
    ftp://127.0.0.1/disk.img unix-socket-path="$sock"
refused_at_start long 'unix-socket-path= takes a path of 1 to 107 bytes' \
    "$(url long good)" unix-socket-path="/$(printf 'x%.0s' $(seq 120))"
refused_at_start proxy 'cannot be combined' "$(url proxy good)" unix-socket-path="$sock" \
    proxy=http://127.0.0.1:3128

if grep -h 'killed by signal' ./*.log; then
    fail "a process was killed by a signal"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
