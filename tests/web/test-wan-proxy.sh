#!/usr/bin/env bash
# tests/wan-proxy.c, the benchmark's distant link: the delay and the
# per-connection cap really apply, bytes pass unchanged, an end of file
# is passed on in each direction on its own (half-close), and many
# connections are served at once.
source "$(dirname "$0")/../lib/functions.sh"
set -euxo pipefail
requires curl

mkdir www
printf 'tiny\n' > www/small
make_image www/big.img 16M
start_nginx "$tmp/www"

# elapsed CURL_VARIABLE URL...: curl's timing for the last URL (all on one
# kept-alive connection).
timing() {
    local var=$1
    shift
    curl -sS -o /dev/null -w "%{$var}\n" "$@" | tail -n 1
}
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# Delay: 200 ms added to each round trip (100 ms each way), and one more
# round trip before a new connection's first request (the handshake).
start_wan_proxy delay "$NGINX_PORT" 200
url=http://127.0.0.1:$WAN_PORT/small
first=$(timing time_starttransfer "$url")
ge "$first" 0.4 || fail "first request answered after $first s, expected >= 0.4 (handshake + round trip)"
ge 1.5 "$first" || fail "first request answered after $first s, expected about 0.4"
# The second request on the same connection: one round trip.
again=$(curl -sS -o /dev/null -w '%{time_total} %{num_connects}\n' "$url" "$url" | tail -n 1)
ge "${again% *}" 0.2 || fail "a kept-alive request took ${again% *} s, expected >= 0.2"
ge 1.2 "${again% *}" || fail "a kept-alive request took ${again% *} s, expected about 0.2"
[ "${again#* }" = 0 ] || fail "the second request opened a new connection"
direct=$(timing time_total "$NGINX_URL/small")
ge 0.1 "$direct" || fail "nginx itself took $direct s: the machine is too busy to measure"

# Bytes pass unchanged, however they are read.
curl -sSf -o got.img "http://127.0.0.1:$WAN_PORT/big.img"
[ "$(md5_of got.img)" = "$(md5_of www/big.img)" ] || fail "the copy through the proxy differs"

# The cap: 10 MB/s per connection, no delay: 16 MiB take >= 1.6 s.
start_wan_proxy cap "$NGINX_PORT" 0 10
rate=$(timing speed_download "http://127.0.0.1:$WAN_PORT/big.img")
ge 11000000 "$rate" || fail "capped at 10 MB/s, one connection got $rate bytes/s"
ge "$rate" 5000000 || fail "capped at 10 MB/s, one connection got only $rate bytes/s"
# Per connection: two at once get about 10 MB/s each.
pids=()
for i in 1 2; do
    curl -sS -o /dev/null -w '%{speed_download}\n' "http://127.0.0.1:$WAN_PORT/big.img" > "rate$i" &
    pids+=($!)
done
wait "${pids[@]}"
for i in 1 2; do
    ge 11000000 "$(cat rate$i)" || fail "two connections: one got $(cat rate$i) bytes/s over the cap"
    ge "$(cat rate$i)" 5000000 || fail "two connections: one got only $(cat rate$i) bytes/s (cap shared?)"
done

# Half-close: the client ends its side, the target still answers, then
# ends its own; both ends of file arrive, in order, after the delay.
$PY - "$srcdir" <<'PYEOF'
import socket, subprocess, sys, os, time
srv = socket.socket()
srv.bind(('127.0.0.1', 0))
srv.listen(128)
port = srv.getsockname()[1]
proxy = os.environ.get('WAN_PROXY', sys.argv[1] + '/../build/tests/wan-proxy')
p = subprocess.Popen([proxy, '--listen', '127.0.0.1:0', '--target', '127.0.0.1:%d' % port,
                      '--delay-ms', '40'], stdout=subprocess.PIPE)
pport = int(p.stdout.readline())


def read_to_eof(sock):
    data = b''
    while True:
        b = sock.recv(100)
        if not b:
            return data
        data += b


try:
    c = socket.create_connection(('127.0.0.1', pport))
    c.sendall(b'hello')
    c.shutdown(socket.SHUT_WR)
    t0 = time.monotonic()
    s, _ = srv.accept()
    got = read_to_eof(s)
    assert got == b'hello', got
    # The end of file came after the bytes, passed on, not a close.
    s.sendall(b'-bye')
    s.shutdown(socket.SHUT_WR)
    back = read_to_eof(c)
    took = time.monotonic() - t0
    assert back == b'-bye', back
    assert took >= 0.04, 'half-close answered in %.3f s, expected >= 0.04 + handshake' % took
    # Many connections at once, each a round trip.
    cs = [socket.create_connection(('127.0.0.1', pport)) for i in range(100)]
    ss = [srv.accept()[0] for i in range(100)]
    for i, x in enumerate(cs):
        x.sendall(b'%03d' % i)
    for x in ss:
        n = x.recv(3)
        x.sendall(n)
    for i, x in enumerate(cs):
        assert x.recv(3) == b'%03d' % i
finally:
    p.terminate()
    p.wait()
PYEOF
[ $? -eq 0 ] || fail "half-close or many connections through the proxy"
