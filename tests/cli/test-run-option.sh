#!/usr/bin/env bash
# --run: the command sees $uri, $unixsocket, $exportname and $port as with
# nbdkit, nbdcurld serves while it runs and exits with its status.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdinfo

make_image disk.img 1M
url=file://$tmp/disk.img

# Private Unix socket, default export name.
"$NBDCURLD" -r "$url" --run '
    printf "uri=%s\nunixsocket=%s\nexportname=%s\nport=%s\n" \
        "$uri" "$unixsocket" "$exportname" "$port" > vars.txt
    nbdinfo --size "$uri" > size.txt'
cat vars.txt
sock=$(sed -n 's/^unixsocket=//p' vars.txt)
[ -n "$sock" ] || fail "\$unixsocket is empty"
# The socket path may be percent-encoded in the URI (nbdkit does).
uri=$(sed -n 's/^uri=//p' vars.txt)
case "$uri" in
    "nbd+unix:///?socket=$sock" | "nbd+unix:///?socket=${sock//\//%2F}") ;;
    *) fail "\$uri is $uri, socket $sock" ;;
esac
grep -qx 'exportname=' vars.txt || fail "\$exportname is not empty"
grep -qx 'port=' vars.txt || fail "\$port is set for a Unix socket"
[ "$(cat size.txt)" -eq 1048576 ] || fail "nbdinfo through \$uri failed"
[ ! -e "$sock" ] || fail "private socket $sock left behind"

# The command's exit status is nbdcurld's.
status=0
"$NBDCURLD" -r "$url" --run 'exit 3' || status=$?
[ "$status" -eq 3 ] || fail "--run 'exit 3' exited $status"
"$NBDCURLD" -r "$url" --run 'true' || fail "--run true failed"
status=0
"$NBDCURLD" -r "$url" --run 'kill -TERM $$' || status=$?
[ "$status" -eq $((128 + 15)) ] || fail "--run killed by SIGTERM exited $status"

# -e names the export, and $uri and $exportname say so.
"$NBDCURLD" -r -e myexport "$url" --run '
    printf "%s\n%s\n" "$exportname" "$uri" > vars.txt
    nbdinfo --size "$uri" > size.txt'
[ "$(sed -n 1p vars.txt)" = myexport ] || fail "-e: \$exportname is $(sed -n 1p vars.txt)"
case "$(sed -n 2p vars.txt)" in
    nbd+unix:///myexport\?socket=*) ;;
    *) fail "-e: \$uri is $(sed -n 2p vars.txt)" ;;
esac
[ "$(cat size.txt)" -eq 1048576 ] || fail "-e: nbdinfo through \$uri failed"

# -p PORT: TCP, $port set and $uri is nbd://.
port=$(free_port)
"$NBDCURLD" -r -i 127.0.0.1 -p "$port" "$url" --run '
    printf "%s\n%s\n" "$port" "$uri" > vars.txt
    nbdinfo --size "$uri" > size.txt'
[ "$(sed -n 1p vars.txt)" = "$port" ] || fail "-p: \$port is $(sed -n 1p vars.txt)"
case "$(sed -n 2p vars.txt)" in
    "nbd://127.0.0.1:$port"*|"nbd://localhost:$port"*) ;;
    *) fail "-p: \$uri is $(sed -n 2p vars.txt)" ;;
esac
[ "$(cat size.txt)" -eq 1048576 ] || fail "-p: nbdinfo through \$uri failed"

sleep 0.2
[ -z "$(leftover_processes)" ] || fail "processes left: $(leftover_processes)"
