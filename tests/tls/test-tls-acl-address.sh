#!/usr/bin/env bash
# --allow ADDR and ADDR/PREFIX (IPv4 and IPv6) per export, over TCP: a
# client from 127.0.0.1 lists and opens the exports whose rules match its
# address, and neither sees nor opens the others; the same from ::1.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdinfo nbdcopy

for e in v4host v4net other v6host v6net open; do
    make_image "$e.img" "$(( 100000 + ${#e} * 4096 ))"
done
exports=(
    --export-ro "v4host=file://$tmp/v4host.img" --allow 127.0.0.1
    --export-ro "v4net=file://$tmp/v4net.img" --allow 10.0.0.0/8 --allow 127.0.0.0/8
    --export-ro "other=file://$tmp/other.img" --allow 10.0.0.0/8 --allow 192.0.2.7
        --allow 2001:db8::/32
    --export-ro "v6host=file://$tmp/v6host.img" --allow ::1
    --export-ro "v6net=file://$tmp/v6net.img" --allow ::/112
    --export-ro "open=file://$tmp/open.img"
)

# check HOST ALLOWED... : from HOST, exactly the exports ALLOWED are listed
# and open, the others are refused.
check() {
    local host=$1 e want
    shift
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    expect_list "$host" "nbd://$host:$NBD_PORT/" "$want"
    for e in v4host v4net other v6host v6net open; do
        if [[ " $want " = *" $e "* ]]; then
            rm -f out.img
            expect_works "$host: $e" nbdcopy "nbd://$host:$NBD_PORT/$e" out.img
            same_bytes out.img "$e.img" "$host: copy of $e"
        else
            expect_refused "$host: $e" nbdinfo --size "nbd://$host:$NBD_PORT/$e"
        fi
    done
}

NBD_HOST=127.0.0.1 start_nbdcurld_tcp "${exports[@]}"
check 127.0.0.1 v4host v4net open
stop_nbdcurld

if ! $PY -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
    echo "$0: no IPv6 on the loopback here: IPv4 only" >&2
else
    NBD_HOST=::1 start_nbdcurld_tcp "${exports[@]}"
    check "[::1]" v6host v6net open
    stop_nbdcurld
fi
check_no_leftovers
