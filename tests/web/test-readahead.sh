#!/usr/bin/env bash
# Readahead and NBD_CMD_CACHE (src/fetcher/fetcher-readahead.c), against the test
# web server, whose log shows every range request:
#  - a reader at queue depth 1 reading 4 KiB after 4 KiB gets exact data
#    from far fewer requests than reads;
#  - a reader at queue depth 1 reading 2 MiB after 2 MiB (reads longer
#    than the distance a run may step back) fetches no byte twice;
#  - a random reader's requests are not inflated: about one a read, and
#    hardly more bytes fetched than read;
#  - after NBD_CMD_CACHE of a range, reading it sends no request;
#  - a prefetch whose reply fails the checks (the object changed) is never
#    served: reads fail with EIO, never with other bytes;
#  - a slow forward reader that stops has no more fetched ahead of it than
#    its rate calls for;
#  - a client whose first read is at offset 0 and whose second jumps
#    forward inside the object's first MiB gets the rest of that MiB in
#    one request: an image opener's table reads after its header send one
#    request in all;
#  - what is read ahead of a forward reader at queue depth 1 is staged for
#    the front-end to answer from (limits-staging.h), exactly, also in
#    replies longer than the client's socket takes at once; a random
#    reader's reads are never staged.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires_python_nbd

mkdir www
make_image www/seq.img $((4 * 1024 * 1024))
cp www/seq.img www/rnd.img
cp www/seq.img www/cache.img
cp www/seq.img www/changing.img
make_image www/big.img $((24 * 1024 * 1024))
start_web_server "$tmp/www"

cat > reader.py <<'PYEOF'
import random, sys
import nbd

mode, uri, path = sys.argv[1], sys.argv[2], sys.argv[3]
data = open(path, "rb").read()
size = len(data)
h = nbd.NBD()
h.connect_uri(uri)

def check(offset, count):
    got = h.pread(count, offset)
    if got != data[offset:offset + count]:
        sys.exit("%s: wrong data for %d bytes at %d" % (mode, count, offset))

if mode == "seq":
    # One read at a time, as dd does.
    for offset in range(0, size, 4096):
        check(offset, 4096)
    print(size // 4096)
elif mode == "big":
    # One read of 2 MiB at a time: each starts further back than
    # FORWARD_MAX_DISTANCE before its own end.
    for offset in range(0, size, 2 << 20):
        check(offset, 2 << 20)
    print(size // (2 << 20))
elif mode in ("overlap", "gapped"):
    # One read at a time, each overlapping the last by 1 KiB or leaving a
    # 4 KiB gap after it, as qemu-img reads a compressed qcow2.
    count, step = (19456, 18432) if mode == "overlap" else (20480, 24576)
    n = 0
    for offset in range(0, size - count, step):
        check(offset, count)
        n += 1
    print(n)
elif mode == "wide":
    # One read at a time of 256 KiB, each starting 192 KiB after the last.
    count, step, n = 256 << 10, 192 << 10, 0
    for offset in range(0, size - count, step):
        check(offset, count)
        n += 1
    print(n)
elif mode == "depth3":
    # 16 KiB reads in order with three in flight, each sent when one
    # completes (a client such as qemu-img that overlaps a few reads).
    count, inflight, n = 16384, [], 0
    for offset in range(0, size, count):
        buf = nbd.Buffer(count)
        inflight.append((h.aio_pread(buf, offset), buf, offset))
        n += 1
        while len(inflight) >= 3 or (offset + count >= size and inflight):
            h.poll(-1)
            for item in list(inflight):
                if h.aio_command_completed(item[0]):
                    inflight.remove(item)
                    if item[1].to_bytearray() != data[item[2]:item[2] + count]:
                        sys.exit("depth3: wrong data at %d" % item[2])
    print(n)
elif mode == "slow":
    # A slow forward reader (a booting guest): 16 KiB every 5 ms for the
    # first 4 MiB, then it stops for a second (windows in flight arrive
    # and are logged) and goes.
    import time
    n = 0
    for offset in range(0, 4 << 20, 16384):
        check(offset, 16384)
        time.sleep(0.005)
        n += 1
    time.sleep(1)
    print(n)
elif mode == "head":
    # A qcow2 opener's first reads, one at a time: header, L1 table,
    # refcount table, extensions, first L2 table, all in the first MiB.
    probes = [(0, 0x70), (0x30000, 0x10), (0x10000, 0x10000), (0x70, 8),
              (0x1f8, 8), (0x40000, 0x10000)]
    for offset, count in probes:
        check(offset, count)
    print(len(probes))
elif mode == "random":
    rnd = random.Random(42)
    n = 200
    for _ in range(n):
        check(rnd.randrange(size // 4096) * 4096, 4096)
    print(n)
elif mode == "cache":
    # CACHE 1 MiB at 1 MiB, then read it in 64 KiB pieces.
    h.cache(1024 * 1024, 1024 * 1024)
    print("cached", flush=True)
    sys.stdin.readline()            # the test looks at the log meanwhile
    for offset in range(1024 * 1024, 2 * 1024 * 1024, 65536):
        check(offset, 65536)
    print(16)
elif mode == "mixed":
    # Sequential runs of several sizes, random reads, CACHEs, with up to
    # 8 requests in flight: every byte exact.
    rnd = random.Random(7)
    inflight = []
    def drain(limit):
        while len(inflight) > limit:
            h.poll(-1)
            for item in list(inflight):
                cookie, buf, offset, count = item
                if h.aio_command_completed(cookie):
                    inflight.remove(item)
                    if buf is not None and buf.to_bytearray() != data[offset:offset + count]:
                        sys.exit("mixed: wrong data for %d bytes at %d" % (count, offset))
    n = 0
    for _ in range(60):
        kind = rnd.choice(["seq", "seq", "random", "cache"])
        depth = rnd.choice([1, 1, 4, 8])
        if kind == "cache":
            offset = rnd.randrange(size)
            count = rnd.randint(1, min(size - offset, 3 << 20))
            inflight.append((h.aio_cache(count, offset), None, offset, count))
        elif kind == "random":
            for _ in range(20):
                count = rnd.randint(1, 200000)
                offset = rnd.randrange(size - count)
                buf = nbd.Buffer(count)
                inflight.append((h.aio_pread(buf, offset), buf, offset, count))
                n += 1
                drain(depth - 1)
        else:
            count = rnd.choice([512, 4096, 65536, 100000, 1 << 20])
            offset = rnd.randrange(size - count)
            for _ in range(rnd.randint(5, 60)):
                if offset + count > size:
                    break
                buf = nbd.Buffer(count)
                inflight.append((h.aio_pread(buf, offset), buf, offset, count))
                n += 1
                offset += count
                drain(depth - 1)
        drain(0)
    print(n)
elif mode == "changing":
    # The object changes on every request: no read may return data.
    errors = 0
    for offset in range(0, 64 * 4096, 4096):
        try:
            h.pread(4096, offset)
        except nbd.Error:
            errors += 1
        else:
            sys.exit("changing: a read of a changed object returned data")
    print(errors)
h.shutdown()
PYEOF

gets() { web_requests "$1" | grep -c '^GET .* range=bytes=[0-9]' || true; }
# in_cached NAME: range requests that start inside 0 .. 2 MiB - 1 (a
# reader of the cached MiB at 1 MiB may read ahead past it, but no range
# request may cover its bytes again).
in_cached() {
    web_requests "$1" | sed -n 's/^GET .* range=bytes=\([0-9]*\)-.*/\1/p' |
        awk '$1 < 2097152 { n++ } END { print n + 0 }'
}
sent() {
    web_requests "$1" | sed -n 's/.* body_bytes_sent=\([0-9]*\) .*/\1/p' |
        awk '{ s += $1 } END { print s + 0 }'
}

# Sequential, queue depth 1: 1024 reads of 4 KiB.
reads=$("$NBDCURLD" -r "$WEB_URL/good/seq.img" --run "$PY reader.py seq \"\$uri\" www/seq.img")
n=$(gets seq)
echo "sequential: $reads reads, $n range requests"
[ "$n" -ge 1 ] || fail "sequential: no range request was logged"
[ $((n * 20)) -le "$reads" ] ||
    fail "sequential: $n range requests for $reads reads (expected 20 times fewer)"

# Queue depth 1 again, but each read overlaps the last or leaves a gap,
# and a reader that keeps three reads in flight: still forward readers,
# read ahead.
for mode in overlap gapped depth3; do
    cp www/seq.img www/$mode.img
    reads=$("$NBDCURLD" -v -r "$WEB_URL/good/$mode.img" \
        --run "$PY reader.py $mode \"\$uri\" www/$mode.img" 2> $mode.log)
    n=$(gets $mode)
    staged=$(grep -c 'debug: staged [0-9]* bytes' $mode.log || true)
    echo "$mode: $reads reads, $n range requests, $(sent $mode) bytes sent, $staged spans staged"
    [ "$n" -ge 1 ] || fail "$mode: no range request was logged"
    [ $((n * 10)) -le "$reads" ] ||
        fail "$mode: $n range requests for $reads reads (expected 10 times fewer)"
    [ "$mode" = depth3 ] || [ "$staged" -ge 2 ] ||
        fail "$mode: $staged spans staged for a forward reader at queue depth 1"
done

# Queue depth 1, 256 KiB a read: replies answered from staged spans that
# are longer than what the client's Unix socket takes at once (its send
# buffer, net.core.wmem_default) are written in part and the rest
# queued: exact data all the same.
cp www/big.img www/wide.img
reads=$("$NBDCURLD" -v -r "$WEB_URL/good/wide.img" \
    --run "$PY reader.py wide \"\$uri\" www/wide.img" 2> wide.log)
staged=$(grep -c 'debug: staged [0-9]* bytes' wide.log || true)
echo "wide: $reads reads of 256 KiB, $(gets wide) range requests, $staged spans staged" \
    "(socket send buffer $(cat /proc/sys/net/core/wmem_default) bytes)"
[ "$staged" -ge 4 ] || fail "wide: $staged spans staged for a forward reader at queue depth 1"

# Queue depth 1, 2 MiB a read: read ahead, and every window's bytes
# served (a window freed before the read that needed its tail was
# answered had that tail fetched again).
reads=$("$NBDCURLD" -r "$WEB_URL/good/big.img" --run "$PY reader.py big \"\$uri\" www/big.img")
size=$(stat -c %s www/big.img)
bytes=$(sent big)
echo "big: $reads reads, $(gets big) range requests, $bytes bytes sent for $size"
[ "$bytes" -le $((size + size / 100)) ] ||
    fail "big: $bytes bytes sent for $size read once each (fetched twice?)"

# A slow forward reader that stops: read ahead (fewer requests than
# reads), but no further than its rate calls for: 4 MiB read, at most
# 2 MiB more fetched (its lead of 512 KiB, past what is staged, which is
# no more than the lead, and the windows coming: readahead-lead.c), where
# windows that double up to what the store holds fetch some 12 MiB more.
cp www/big.img www/slow.img
reads=$("$NBDCURLD" -r "$WEB_URL/good/slow.img" --run "$PY reader.py slow \"\$uri\" www/slow.img")
n=$(gets slow)
bytes=$(sent slow)
echo "slow: $reads reads of 16 KiB, $n range requests, $bytes bytes sent"
[ $((n * 4)) -le "$reads" ] || fail "slow: $n range requests for $reads reads (not read ahead?)"
[ "$bytes" -le $((6 * 1024 * 1024)) ] ||
    fail "slow: $bytes bytes sent for a reader that read 4 MiB and stopped"

# An image opener's probes in the first MiB: the header's read, then one
# request for all the others.
cp www/seq.img www/head.img
reads=$("$NBDCURLD" -r "$WEB_URL/good/head.img" --run "$PY reader.py head \"\$uri\" www/head.img")
n=$(gets head)
bytes=$(sent head)
echo "head: $reads reads, $n range requests, $bytes bytes sent"
[ "$n" -eq 2 ] || fail "head: $n range requests for $reads probes of the first MiB"
[ "$bytes" -eq 1048576 ] || fail "head: $bytes bytes sent for the first MiB (fetched twice?)"

# Random: no readahead.
reads=$("$NBDCURLD" -v -r "$WEB_URL/good/rnd.img" \
    --run "$PY reader.py random \"\$uri\" www/rnd.img" 2> rnd.log)
n=$(gets rnd)
! grep -q 'debug: staged' rnd.log || fail "random: a random reader's reads were staged"
! grep -q 'debug: readahead: fetching' rnd.log || fail "random: a random reader was read ahead"

bytes=$(sent rnd)
echo "random: $reads reads, $n range requests, $bytes bytes sent"
[ "$n" -le $((reads + 5)) ] ||
    fail "random: $n range requests for $reads reads"
# Each reply carries its headers too; the bodies alone are 4096 a read.
[ "$bytes" -le $((reads * (4096 + 1024))) ] ||
    fail "random: $bytes bytes sent for $reads reads of 4 KiB (read ahead?)"

# CACHE, then reads of the cached range: no more requests.
mkfifo cache.in
"$NBDCURLD" -r "$WEB_URL/good/cache.img" \
    --run "$PY reader.py cache \"\$uri\" www/cache.img < cache.in > cache.out" &
pid=$!
kill_on_exit "$pid"
exec 7> cache.in
for i in $(seq 100); do
    grep -q cached cache.out 2>/dev/null && break
    sleep 0.1
done
grep -q cached cache.out || fail "cache: NBD_CMD_CACHE was not answered"
before=$(in_cached cache)
[ "$before" -ge 1 ] || fail "cache: NBD_CMD_CACHE sent no range request"
echo >&7
exec 7>&-
wait "$pid" || fail "cache: the reader failed"
after=$(in_cached cache)
echo "cache: $before range requests for the CACHE, $after after 16 reads of it" \
     "($(gets cache) with the readahead past it)"
[ "$after" -eq "$before" ] ||
    fail "cache: reads of a cached range sent $((after - before)) more requests"

# Mixed reads, CACHEs and queue depths, with few transfers: exact data.
for conns in 1 3; do
    reads=$("$NBDCURLD" -r --connections $conns "$WEB_URL/good/seq.img" \
        --run "$PY reader.py mixed \"\$uri\" www/seq.img")
    echo "mixed, $conns connections: $reads reads exact"
done

# The object changes under a sequential reader: EIO, never data.
errors=$("$NBDCURLD" -r "$WEB_URL/changing/changing.img" \
    --run "$PY reader.py changing \"\$uri\" www/changing.img" 2> changing.log) ||
    fail "changing: $(tail -n 3 changing.log)"
echo "changing: $errors reads failed"
grep -q "readahead of .* failed" changing.log ||
    fail "changing: no prefetch was tried (or its failure not logged): $(tail -n 3 changing.log)"
