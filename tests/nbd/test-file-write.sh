#!/usr/bin/env bash
# A file: URL without -r is writable: nbdcopy into it changes the backing
# file to exactly the source; multi-conn is not offered for a writable
# export; with -r writing fails.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy nbdinfo

make_image src.img 1000001
truncate -s 1000001 disk.img

"$NBDCURLD" "file://$tmp/disk.img" --run '
    nbdinfo "$uri" > info.txt &&
    nbdcopy src.img "$uri"'
cmp src.img disk.img || fail "backing file differs from what was written"
grep -q 'is_read_only: false' info.txt || fail "export is not writable"
grep -q 'can_multi_conn: false' info.txt || fail "multi-conn offered on a writable export"
grep -q 'can_flush: true' info.txt || fail "flush not offered on a writable export"

truncate -s 0 disk.img
truncate -s 1000001 disk.img
expect_fail "$NBDCURLD" -r "file://$tmp/disk.img" --run 'nbdcopy src.img "$uri"'
[ "$(tr -d '\0' < disk.img | wc -c)" -eq 0 ] || fail "-r export was written to"
