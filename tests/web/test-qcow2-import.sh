#!/usr/bin/env bash
# The job importers run: qemu-img convert -f qcow2 -O raw of a compressed
# qcow2 cloud image over NBD.  qemu-img keeps one read in flight, of a
# compressed cluster rounded to sectors: neighbours overlap or leave
# small gaps.  Through nbdcurld, on the test web server directly and
# through tests/wan-proxy 20 ms away:
#  - the raw disk is byte-exact (the same as a local convert);
#  - it is read ahead: far fewer range requests than qemu-img's reads
#    (one per read, a round trip each, is what a server that follows
#    only exact successors sends), and hardly more bytes than the image.
# And the raw disk itself, converted from raw: qemu-img keeps eight reads
# of 2 MiB in flight, the direct path's kind of reader: byte-exact, and
# no byte fetched twice (read ahead through the store as well, some were).
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires qemu-img mkfs.ext4

# A disk of ordinary files, as a cloud image holds, compressed.
mkdir tree www
find /usr/share/doc /usr/lib/python3 -type f -readable -size -1024k 2>/dev/null |
    awk 'NR <= 3000' | tar -cf - -T - 2>/dev/null | tar -xf - -C tree
truncate -s 96M disk.raw
mkfs.ext4 -q -d tree disk.raw
qemu-img convert -c -f raw -O qcow2 disk.raw www/disk.img
cp disk.raw www/raw.img
qemu-img convert -f qcow2 -O raw www/disk.img local.raw
image=$(stat -c %s www/disk.img)
echo "image: $image bytes of compressed qcow2 for a $(du -sh tree | cut -f1) tree"

start_web_server "$tmp/www"
start_wan_proxy distant "$WEB_PORT" 20

ranges() { web_requests disk | grep -c '^GET .* range=bytes=[0-9]' || true; }
# sent [NAME]: body bytes the web server sent of NAME.img (disk.img).
sent() {
    web_requests "${1:-disk}" | sed -n 's/.* body_bytes_sent=\([0-9]*\) .*/\1/p' |
        awk '{ s += $1 } END { print s + 0 }'
}

# qemu-img reads about 20 KiB at a time: one range request per 128 KiB on
# average is already six times fewer requests than reads.
max_ranges=$((image / (128 * 1024) + 8))
for where in near distant; do
    port=$WEB_PORT
    [ "$where" = distant ] && port=$WAN_PORT
    before=$(ranges)
    bytes_before=$(sent)
    timeout 120 "$NBDCURLD" -r "http://127.0.0.1:$port/good/disk.img" \
        --run 'qemu-img convert -f qcow2 -O raw "$uri" out.raw' 2> nbdcurld.log ||
        fail "$where: the import failed: $(tail -n 5 nbdcurld.log)"
    cmp -s out.raw local.raw || fail "$where: the imported disk differs from a local convert"
    n=$(( $(ranges) - before ))
    bytes=$(( $(sent) - bytes_before ))
    echo "$where: exact, $n range requests, $bytes bytes for $image of image"
    [ "$n" -le "$max_ranges" ] ||
        fail "$where: $n range requests (at most $max_ranges: not read ahead?)"
    [ "$bytes" -le $((image + image / 10)) ] ||
        fail "$where: $bytes bytes fetched for an image of $image"
    rm -f out.raw
done

before=$(sent raw)
timeout 120 "$NBDCURLD" -r "http://127.0.0.1:$WEB_PORT/good/raw.img" \
    --run 'qemu-img convert -f raw -O raw "$uri" out.raw' 2> nbdcurld.log ||
    fail "raw: the import failed: $(tail -n 5 nbdcurld.log)"
cmp -s out.raw disk.raw || fail "raw: the imported disk differs"
bytes=$(( $(sent raw) - before ))
size=$(stat -c %s disk.raw)
echo "raw: exact, $bytes bytes for $size of disk"
[ "$bytes" -le $((size + size / 100)) ] || fail "raw: $bytes bytes fetched for a disk of $size"
