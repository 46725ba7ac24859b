#!/usr/bin/env bash
# Through nginx (a correct, range-capable web server): the right size,
# multi-conn offered (http is always read-only), and a bit-exact copy.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy nbdinfo

mkdir www
make_image www/big.img 64M
make_image www/odd.img 1048583
start_nginx "$tmp/www"

for f in big.img odd.img; do
    size=$(stat -c %s "www/$f")
    rm -f out.img
    "$NBDCURLD" -r "$NGINX_URL/$f" --run '
        nbdinfo "$uri" > info.txt &&
        nbdinfo --size "$uri" > size.txt &&
        nbdcopy "$uri" out.img'
    [ "$(cat size.txt)" = "$size" ] || fail "$f: size $(cat size.txt), expected $size"
    grep -q 'can_multi_conn: true' info.txt || fail "$f: no multi-conn"
    grep -q 'is_read_only: true' info.txt || fail "$f: not read-only"
    [ "$(md5_of out.img)" = "$(md5_of "www/$f")" ] || fail "$f: copy differs"
done
