#!/usr/bin/env bash
# Started by the client: systemd socket activation (libnbd's [ CMD ]) and
# -s (one client on stdin/stdout, libnbd's connect_command).
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdinfo nbdcopy
requires_python_nbd

make_image disk.img 1000001
url=file://$tmp/disk.img

# Socket activation: LISTEN_PID/LISTEN_FDS set by libnbd.
size=$(nbdinfo --size -- [ "$NBDCURLD" -r "$url" ])
[ "$size" -eq 1000001 ] || fail "socket activation: size $size"
nbdcopy -- [ "$NBDCURLD" -r "$url" ] out.img
cmp disk.img out.img || fail "socket activation: copy differs"

# -s: the client talks over the process's stdin/stdout.
$PY - "$NBDCURLD" "$url" <<'PYEOF' || fail "-s with connect_command failed"
import sys
import nbd
nbdcurld, url = sys.argv[1], sys.argv[2]
data = open("disk.img", "rb").read()
h = nbd.NBD()
h.connect_command([nbdcurld, "-r", "-s", url])
assert h.get_size() == len(data)
assert h.pread(4097, 12345) == data[12345:12345 + 4097]
assert h.pread(7, len(data) - 7) == data[-7:]
h.shutdown()
PYEOF

sleep 0.2
[ -z "$(leftover_processes)" ] || fail "processes left: $(leftover_processes)"
