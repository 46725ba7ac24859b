#!/usr/bin/env bash
# Reads at odd offsets and lengths (single bytes, the last bytes, unaligned
# spans, random ones) return exactly the file's bytes, for a file: URL,
# nginx and the test web server; a read past the end fails.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires_python_nbd

mkdir www
make_image www/disk.img 3000017
start_nginx "$tmp/www"
start_web_server "$tmp/www"

cat > reads.py <<'PYEOF'
import random, sys
import nbd

uri, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
size = len(data)
h = nbd.NBD()
h.connect_uri(uri)
assert h.get_size() == size, "size %d, expected %d" % (h.get_size(), size)

def check(offset, count):
    got = h.pread(count, offset)
    if got != data[offset:offset + count]:
        sys.exit("%s: wrong data for %d bytes at %d" % (uri, count, offset))

check(0, 1)
check(size - 1, 1)
check(size - 7, 7)
check(12345, 4097)
check(4095, 2)
check(0, size)                       # the whole image in one request
rnd = random.Random(1234)
for _ in range(100):
    offset = rnd.randrange(size)
    check(offset, rnd.randint(1, min(size - offset, 300000)))

# Past the end: an error, never data.
for offset, count in ((size - 1, 2), (size, 1), (size + 4096, 512)):
    try:
        h.pread(count, offset)
    except nbd.Error:
        pass
    else:
        sys.exit("%s: read of %d bytes at %d past the end succeeded"
                 % (uri, count, offset))
h.shutdown()
PYEOF

for url in "file://$tmp/www/disk.img" "$NGINX_URL/disk.img" "$WEB_URL/good/disk.img"; do
    "$NBDCURLD" -r "$url" --run "$PY reads.py \"\$uri\" www/disk.img" ||
        fail "odd reads failed for $url"
done
