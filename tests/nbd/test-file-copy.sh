#!/usr/bin/env bash
# A file: URL served read-only copies back bit for bit with nbdcopy, over
# several connections (multi-conn) and over one.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy

for size in 10M 1000001; do
    make_image disk.img "$size"
    sum=$(md5_of disk.img)

    rm -f out.img
    "$NBDCURLD" -r "file://$tmp/disk.img" --run 'nbdcopy "$uri" out.img'
    [ "$(md5_of out.img)" = "$sum" ] || fail "$size: multi-conn copy differs"

    rm -f out.img
    "$NBDCURLD" -r "file://$tmp/disk.img" \
        --run 'nbdcopy --connections=1 "$uri" out.img'
    [ "$(md5_of out.img)" = "$sum" ] || fail "$size: single-connection copy differs"
done
