#!/usr/bin/env bash
# The read cache shared by an export's connections (--cache, --cache-dir,
# --filter=cache with nbdkit's keys), against the test web server, whose
# log shows every range request:
#  - a second nbdcopy through a warm cache sends no range request (and
#    the statistics count its reads as cache hits), and
#    its copy is exact;
#  - two exports of one URL, each with its cache, never see each other's
#    blocks (the second export's first copy fetches everything);
#  - a cache smaller than the object fills, evicts and is reused: copies
#    stay exact;
#  - a client that scans the whole object through a small cache leaves
#    another connection's hot blocks in it (its share, CACHE_SHARE_WAYS);
#  - an object that changes on the server between two clients: the new
#    client gets the new bytes, the old one EIO, never the cached ones;
#  - --cache-dir keeps the cache in an unnamed file: nothing is left in
#    the directory;
#  - nbdkit's form (--filter=cache cache-on-read=true cache-max-size=),
#    and a --config file's sections, each export's own size;
#  - blocks a client read only in part are fetched whole for the next
#    client, even when it leaves at once, and when more of them are left
#    in part than the fetcher keeps edges of (CACHE_PARTIAL_SLOTS); a
#    window read ahead fetches only what the cache lacks;
#  - a warm qcow2 import (qemu-img's overlapping and gapped reads) sends
#    no range request;
#  - --prefetch=all fetches the whole object into the cache while a client
#    is idle, so a copy after it sends no range request; --filter=scan
#    with a smaller cache stops once it has fetched what the cache holds;
#  - bad values are refused at start, naming the option.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy
requires_python_nbd

mkdir www
for f in a small scan chg dir nbdkit pf pfsmall edges; do
    make_image www/$f.img $((8 * 1024 * 1024))
done
sum=$(md5_of www/a.img)
start_web_server "$tmp/www"

gets() { web_requests "$1" | grep -c '^GET .* range=bytes=[0-9]' || true; }
# gets_below NAME END: range requests for NAME.img that start before END.
gets_below() {
    web_requests "$1" | sed -n 's/^GET .* range=bytes=\([0-9]*\)-.*/\1/p' |
        awk -v end="$2" '$1 < end { n++ } END { print n + 0 }'
}
copy_as() {     # copy_as EXPORT FILE: export EXPORT to OUT.img, equal to FILE
    rm -f out.img
    nbdcopy -C 1 "$(nbd_uri "$1")" out.img || fail "$1: the copy failed"
    [ "$(md5_of out.img)" = "$(md5_of "$2")" ] || fail "$1: the copy differs"
    sleep 0.2   # the web server logs a request once it has answered it
}

start_nbdcurld -v -r --cache 16M \
    --export "a=$WEB_URL/good/a.img" \
    --export "a2=$WEB_URL/good/a.img" \
    --export "small=$WEB_URL/good/small.img" cache-max-size=1M \
    --export "scan=$WEB_URL/good/scan.img" cache-max-size=1M \
    --export "chg=$WEB_URL/good/chg.img"

echo "== warm"
copy_as a www/a.img
first=$(gets a)
[ "$first" -ge 1 ] || fail "warm: the first copy sent no range request"
copy_as a www/a.img
second=$(gets a)
echo "warm: $first range requests, then $((second - first))"
[ "$second" -eq "$first" ] ||
    fail "warm: the second copy sent $((second - first)) range requests"
# The statistics count the hits: each client's line at its close.
eventually 10 grep -Eq 'closed, export "a": .* [1-9][0-9]* cache hits' "$NBDCURLD_LOG" ||
    fail "warm: no cache hits counted: $(grep 'closed, export "a"' "$NBDCURLD_LOG")"

echo "== two exports of one URL"
copy_as a2 www/a.img
third=$(gets a)
echo "a2: $((third - second)) range requests"
[ "$third" -gt "$second" ] ||
    fail "a2: its first copy sent no range request: it read export a's cache"

echo "== full, evicted, reused"
copy_as small www/small.img
n1=$(gets small)
copy_as small www/small.img
n2=$(gets small)
echo "small: $n1 then $((n2 - n1)) range requests"
[ "$n2" -gt "$n1" ] || fail "small: an 8 MiB object fitted a 1 MiB cache"
read_ranges "$(nbd_uri small)" www/small.img 0:65536 0:65536 > small.out
before=$(gets small)
read_ranges "$(nbd_uri small)" www/small.img 0:65536 > small2.out
[ "$(gets small)" -eq "$before" ] || fail "small: a block just read was fetched again"

echo "== a scan costs its share"
cat > scan.py <<'PYEOF'
import subprocess, sys, time
import nbd

uri, path, log = sys.argv[1], sys.argv[2], sys.argv[3]
data = open(path, "rb").read()
hot = 4 * 65536         # CACHE_SHARE_WAYS blocks

def gets_in_hot():
    n = 0
    for line in open(log):
        if line.startswith("GET /good/scan.img range=bytes="):
            if int(line.split("range=bytes=")[1].split("-")[0]) < hot:
                n += 1
    return n

h = nbd.NBD()
h.connect_uri(uri)
assert h.pread(hot, 0) == data[:hot]
time.sleep(0.3)
warm = gets_in_hot()
assert warm >= 1, "the hot blocks were never fetched"
subprocess.run(["nbdcopy", "-C", "1", uri, "scan-copy.img"], check=True)
assert open("scan-copy.img", "rb").read() == data, "the scan's copy differs"
assert h.pread(hot, 0) == data[:hot]
time.sleep(0.3)
after = gets_in_hot()
print("hot range requests: %d before the scan, %d after" % (warm, after))
if after != warm:
    sys.exit("the scan evicted another connection's hot blocks")
h.shutdown()
PYEOF
$PY scan.py "$(nbd_uri scan)" www/scan.img "$WEB_LOG"

echo "== the object changes between two clients"
cat > chg.py <<'PYEOF'
import os, sys, time
import nbd

uri, path = sys.argv[1], sys.argv[2]
old = open(path, "rb").read()
h1 = nbd.NBD()
h1.connect_uri(uri)
assert h1.pread(65536, 0) == old[:65536]
assert h1.pread(65536, 0) == old[:65536]
new = os.urandom(len(old))
with open(path + ".new", "wb") as f:
    f.write(new)
os.replace(path + ".new", path)
time.sleep(0.01)
h2 = nbd.NBD()
h2.connect_uri(uri)
if h2.pread(65536, 0) != new[:65536]:
    sys.exit("a client that came after the change got other bytes than the new")
try:
    got = h1.pread(65536, 0)
except nbd.Error as e:
    print("the first client: %s" % e.errno)
    if e.errno != "EIO":
        sys.exit("the first client: %s, not EIO" % e.errno)
else:
    sys.exit("the first client got %s bytes of a changed object" %
             ("the old" if got == old[:65536] else "other"))
PYEOF
$PY chg.py "$(nbd_uri chg)" www/chg.img
stop_nbdcurld

echo "== --cache-dir"
# Executed fetchers, with CA certificates when the system has some: the
# cache's descriptor after theirs.
mkdir cdir
ca=()
[ -r /etc/ssl/certs/ca-certificates.crt ] && ca=(--cainfo /etc/ssl/certs/ca-certificates.crt)
start_nbdcurld -v -r --exec-fetchers "${ca[@]}" --cache 16M --cache-dir cdir \
    "$WEB_URL/good/dir.img"
nbdcopy -C 1 "$NBD_URI" dir1.img
[ "$(md5_of dir1.img)" = "$(md5_of www/dir.img)" ] || fail "cache-dir: the copy differs"
nbdcopy -C 1 "$NBD_URI" dir2.img
[ "$(md5_of dir2.img)" = "$(md5_of www/dir.img)" ] || fail "cache-dir: the second copy differs"
grep -q 'cache: [1-9][0-9]* reads answered' "$NBDCURLD_LOG" ||
    fail "cache-dir: no read was answered from the cache"
ls -l /proc/"$NBDCURLD_PID"/fd | grep -q "$tmp/cdir/#" ||
    fail "cache-dir: the supervisor holds no unnamed file in cdir"
[ -z "$(ls -A cdir)" ] || fail "cache-dir: files in the directory: $(ls -A cdir)"
stop_nbdcurld
[ -z "$(ls -A cdir)" ] || fail "cache-dir: files left behind: $(ls -A cdir)"

echo "== nbdkit's --filter=cache"
start_nbdcurld -v -r --filter=cache "$WEB_URL/good/nbdkit.img" cache-on-read=true \
    cache-max-size=16M cache-min-block-size=128K cache-high-threshold=95
nbdcopy -C 1 "$NBD_URI" nbdkit1.img
sleep 0.2
n1=$(gets nbdkit)
nbdcopy -C 1 "$NBD_URI" nbdkit2.img
sleep 0.2
[ "$(gets nbdkit)" -eq "$n1" ] || fail "--filter=cache: the second copy fetched"
cmp nbdkit2.img www/nbdkit.img || fail "--filter=cache: the copy differs"
grep -q 'a cache of 128 blocks of 131072 bytes' "$NBDCURLD_LOG" ||
    fail "--filter=cache: not 16 MiB of 128 KiB blocks"
stop_nbdcurld

echo "== per export in a --config file"
cat > cache.conf <<CONFEOF
cache = 2M
[export big]
url = $WEB_URL/good/a.img
cache-max-size = 4M
[export default]
url = $WEB_URL/good/a.img
CONFEOF
start_nbdcurld -v -r --config cache.conf
eventually 10 grep -q 'export "default": a cache of 32 blocks' "$NBDCURLD_LOG" ||
    fail "config: export default has no 2 MiB cache"
grep -q 'export "big": a cache of 64 blocks' "$NBDCURLD_LOG" ||
    fail "config: export big has no 4 MiB cache"
stop_nbdcurld

echo "== --prefetch=all"
sent() {
    web_requests "$1" | sed -n 's/^GET .* body_bytes_sent=\([0-9]*\) .*/\1/p' |
        awk '{ s += $1 } END { print s + 0 }'
}
whole() { [ "$(sent "$1")" -ge "$2" ]; }
cat > idle.py <<'PYEOF'
import sys, time
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
h.pread(4096, 0)
time.sleep(float(sys.argv[2]))
h.shutdown()
PYEOF
start_nbdcurld -v -r --cache 16M --prefetch=all "$WEB_URL/good/pf.img"
$PY idle.py "$NBD_URI" 3 &
idle=$!
eventually 20 whole pf $((8 * 1024 * 1024)) ||
    fail "prefetch: only $(sent pf) bytes of 8 MiB were fetched"
wait "$idle" || fail "prefetch: the idle client failed"
sleep 0.2
n1=$(gets pf)
nbdcopy -C 1 "$NBD_URI" pf.img
sleep 0.2
echo "prefetch: $n1 range requests, then $(($(gets pf) - n1))"
[ "$(gets pf)" -eq "$n1" ] || fail "prefetch: the copy after it still fetched"
cmp pf.img www/pf.img || fail "prefetch: the copy differs"
stop_nbdcurld

start_nbdcurld -v -r --filter=scan --filter=cache "$WEB_URL/good/pfsmall.img" \
    cache-max-size=2M
$PY idle.py "$NBD_URI" 2
sleep 0.2
echo "scan into 2 MiB: $(sent pfsmall) bytes fetched"
[ "$(sent pfsmall)" -ge $((2 * 1024 * 1024)) ] || fail "scan: it fetched too little"
# Besides the client's read, a block it read in part may be fetched whole.
[ "$(sent pfsmall)" -le $((2 * 1024 * 1024 + 2 * 65536)) ] ||
    fail "scan: it went on past what the cache holds"
stop_nbdcurld

echo "== blocks read in part, the client gone"
# Through a proxy 150 ms away, so that the fills of the blocks the first
# client's reads cover in part are still on their way when it leaves.
# Its reads leave 12 blocks in part (more than the fetcher keeps edges
# of): the first and last block of each, gaps between them.  A second
# client reading the same bytes must find every block in the cache.
start_wan_proxy edges "$WEB_PORT" 150
cat > edges.py <<'PYEOF'
# edges.py URI IMAGE ORDER: six reads, each from the middle of one block
# to the middle of the next but one; ORDER: pipelined (all in flight at
# once), backwards (last first: a reader going backwards is not read
# ahead) or forwards.
import sys
import nbd
uri, path, order = sys.argv[1], sys.argv[2], sys.argv[3]
data = open(path, "rb").read()
block = 65536
ranges = [((3 * i) * block + 1000 + 7 * i, 2 * block + 5000) for i in range(6)]
h = nbd.NBD()
h.connect_uri(uri)
if order == "pipelined":
    reads = []
    for o, n in ranges:
        buf = nbd.Buffer(n)
        reads.append((h.aio_pread(buf, o), buf, o))
    while h.aio_in_flight() > 0:
        h.poll(-1)
    got = []
    for cookie, buf, o in reads:
        h.aio_command_completed(cookie)
        got.append((o, buf.to_bytearray()))
else:
    if order == "backwards":
        ranges.reverse()
    got = [(o, h.pread(n, o)) for o, n in ranges]
for o, b in got:
    if b != data[o:o + len(b)]:
        sys.exit("edges (%s): other bytes at %d" % (order, o))
h.shutdown()
PYEOF
start_nbdcurld -v -r --cache 16M "http://127.0.0.1:$WAN_PORT/good/edges.img"
exits() { grep -c 'debug: fetcher [0-9]* exited' "$NBDCURLD_LOG" || true; }
exited_since() { [ "$(exits)" -gt "$1" ]; }
before=$(exits)
$PY edges.py "$NBD_URI" www/edges.img pipelined
# The fills take a round trip or a few (150 ms each) after the client
# left: its fetcher exits once they are done, and the web server logs a
# request once it has answered it.
eventually 10 exited_since "$before" || fail "edges: the first client's fetcher did not exit"
sleep 0.3
n1=$(gets edges)
$PY edges.py "$NBD_URI" www/edges.img backwards
sleep 0.3
echo "edges: $n1 range requests, then $(($(gets edges) - n1))"
[ "$(gets edges)" -eq "$n1" ] ||
    fail "edges: the second client's reads were not all in the cache"
# A third reads them forwards: the windows read ahead for it take what
# the cache holds and fetch only what lies past it (18 blocks).
below=$(gets_below edges $((18 * 65536)))
$PY edges.py "$NBD_URI" www/edges.img forwards
sleep 0.3
echo "edges, forwards: $(($(gets_below edges $((18 * 65536))) - below)) range requests below 18 blocks"
[ "$(gets_below edges $((18 * 65536)))" -eq "$below" ] ||
    fail "edges: a window fetched blocks the cache held"
stop_nbdcurld

echo "== a warm qcow2 import"
# qemu-img reads a compressed qcow2 a cluster at a time, rounded to
# sectors: reads that overlap or leave gaps, rarely on block boundaries.
# The blocks at their edges are completed by their neighbours, and those
# only ever read in part (the image's header and tables) are fetched
# whole in the background: a second import sends no range request.
if command -v qemu-img > /dev/null && command -v mkfs.ext4 > /dev/null; then
    mkdir tree
    find /usr/share/doc /usr/lib/python3 -type f -readable -size -1024k 2>/dev/null |
        awk 'NR <= 1500' | tar -cf - -T - 2>/dev/null | tar -xf - -C tree
    truncate -s 48M disk.raw
    mkfs.ext4 -q -d tree disk.raw
    qemu-img convert -c -f raw -O qcow2 disk.raw www/qcow.img
    qemu-img convert -f qcow2 -O raw www/qcow.img local.raw
    "$NBDCURLD" -r --cache 64M "$WEB_URL/good/qcow.img" --run '
        qemu-img convert -f qcow2 -O raw "$uri" q1.raw && sleep 0.2 &&
        grep -c "^GET /good/qcow.img range=bytes=" '"$WEB_LOG"' > q1.n &&
        qemu-img convert -f qcow2 -O raw "$uri" q2.raw' 2> qcow.log ||
        fail "qcow2: an import failed: $(tail -n 5 qcow.log)"
    sleep 0.2
    cmp -s q2.raw local.raw || fail "qcow2: the warm import differs"
    n1=$(cat q1.n)
    n2=$(( $(gets qcow) - n1 ))
    echo "qcow2: $n1 range requests, then $n2"
    [ "$n2" -eq 0 ] || fail "qcow2: the warm import sent $n2 range requests"
else
    echo "qcow2: skipped (no qemu-img or mkfs.ext4)"
fi

echo "== refused"
touch plainfile
refused_at_start zero '--cache must be a size' --cache 0 "$WEB_URL/good/a.img"
refused_at_start word '--cache must be a size' --cache lots "$WEB_URL/good/a.img"
refused_at_start nodir '--cache-dir .*/nonexistent: cannot make' \
    --cache 2M --cache-dir "$tmp/nonexistent" "$WEB_URL/good/a.img"
refused_at_start notdir '--cache-dir .*plainfile: cannot make' \
    --cache 2M --cache-dir "$tmp/plainfile" "$WEB_URL/good/a.img"
refused_at_start onread 'cache-on-read=false' --filter=cache "$WEB_URL/good/a.img" \
    cache-on-read=false
refused_at_start block 'cache-min-block-size= must be a power of two' \
    --cache 2M "$WEB_URL/good/a.img" cache-min-block-size=3000
refused_at_start blockonly 'cache-min-block-size= without a cache' \
    "$WEB_URL/good/a.img" cache-min-block-size=64K
refused_at_start prefetchword '--prefetch takes all' \
    --cache 2M --prefetch=some "$WEB_URL/good/a.img"
refused_at_start prefetchalone '--prefetch=all .* give a cache too' \
    --prefetch=all "$WEB_URL/good/a.img"
refused_at_start toosmall 'fewer than 16 blocks' \
    --cache 1M "$WEB_URL/good/a.img" cache-min-block-size=1M
echo "ok"
