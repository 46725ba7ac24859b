#!/usr/bin/env bash
# Direct reads (src/fetcher/fetcher-direct.c): plain-http range reads spliced into
# the data pipe.  They are taken for a well-behaved server (nginx and the
# test server); a server whose replies are correct but not the plain case
# (chunked, bare LF, huge headers, tiny segments) gets its reads through
# libcurl instead, with the right bytes; HTTP/1.0, interim replies and
# connections closed without notice are handled directly (replies that
# are wrong: tests/web/test-misbehaving-server.sh).  Clients on TCP and on
# Unix sockets, and a read-only file: export, which splices from the page
# cache.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy
requires_python_nbd

mkdir www
make_image www/disk.img 5000011        # odd size: the last read is short
sum=$(md5_of www/disk.img)
start_nginx "$tmp/www"
start_web_server "$tmp/www"

# mode of tests/lib/web-server.py, and what the fetcher's log says about it:
# "direct" (no fallback line) or the reason it went back to libcurl.
declare -A modes=(
    [good]='direct'
    [http10]='direct'
    [interim]='direct'
    [drop-idle]='direct'
    [chunked]='Transfer-Encoding'
    [bare-lf]='bare LF'
    [huge-headers]='headers are longer'
    [trickle]='pieces too small'
    [huge-length]='Content-Length is not a number'
)
# (More interim replies than nbdcurld takes fail the read whichever way
# it goes: tests/web/test-interim-limit.sh.)
args=(-v --export "nginx=$NGINX_URL/disk.img" --export-ro "file=file://$tmp/www/disk.img")
for m in "${!modes[@]}"; do
    args+=(--export "$m=$WEB_URL/$m/disk.img")
done
start_nbdcurld -r "${args[@]}"

# Sequential copies (reads of nbdcopy's 256 KiB, coalesced), then
# pipelined reads at odd offsets and lengths from 4 connections at once
# (tests/lib/pipelined-reads.py).  The trickle export's pipelined reads
# spend their time waiting for bytes a millisecond apart: they run in the
# background while the other exports are copied and read.
copy_whole() {
    echo "== $1"
    rm -f copy.img
    nbdcopy "$(nbd_uri "$1")" copy.img || fail "$1: copy failed"
    [ "$(md5_of copy.img)" = "$sum" ] || fail "$1: the copy differs"
}
copy_whole trickle
$PY "$srcdir/lib/pipelined-reads.py" "$(nbd_uri trickle)" www/disk.img 400 300000 \
    > trickle-reads.out 2>&1 &
trickle_reads=$!
kill_on_exit "$trickle_reads"
for export in nginx file "${!modes[@]}"; do
    [ "$export" != trickle ] || continue
    copy_whole "$export"
    $PY "$srcdir/lib/pipelined-reads.py" "$(nbd_uri "$export")" www/disk.img 400 300000 ||
        fail "$export: pipelined reads"
done
wait "$trickle_reads" || fail "trickle: pipelined reads: $(cat trickle-reads.out)"

# A TCP client too (the front-end splices into a TCP socket).
rm -f copy.img
"$NBDCURLD" -r -i 127.0.0.1 -p "$(free_port)" "$NGINX_URL/disk.img" \
    --run 'nbdcopy "$uri" copy.img && '"$PY $srcdir/lib/pipelined-reads.py"' "$uri" www/disk.img 400 300000' ||
    fail "reads over TCP"
[ "$(md5_of copy.img)" = "$sum" ] || fail "copy over TCP differs"

# What the log says.
grep -q 'export "nginx": reads of up to [0-9]* bytes go direct' "$NBDCURLD_LOG" ||
    fail "nginx's reads did not go direct"
# (A body in small pieces sends reads to libcurl one by one, and all of
# them only after MAX_PIPE_OVERFLOWS: either will do.)
check_direct_modes modes 'reads of up to' direct \
    '(reads go through libcurl from now on|a read goes through libcurl)'

stop_nbdcurld
echo "direct reads: ok"
