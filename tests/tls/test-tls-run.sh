#!/usr/bin/env bash
# --run with TLS: $tls is 2 with --tls=require, 1 with --tls=on, unset
# without TLS (as with nbdkit); with --tls=require $uri is an nbds+unix://
# (or nbds:// on TCP) URI to which a client adds its certificates, and
# nbdcopy "$uri&tls-certificates=DIR" copies the export.
source "$(dirname "$0")/../lib/tls-functions.sh"
set -euo pipefail
requires nbdcopy nbdinfo
make_tls_keys

make_image disk.img 1500007
url=file://$tmp/disk.img
export PKI

# shellcheck disable=SC2016 # expanded by --run's shell
show_vars='printf "tls=%s\nset=%s\nuri=%s\n" "${tls-}" "${tls+yes}" "$uri" > vars.txt'
var() { sed -n "s/^$1=//p" vars.txt; }

"$NBDCURLD" --tls=require --tls-certificates "$PKI" -r "$url" --run "$show_vars
    nbdcopy \"\$uri&tls-certificates=\$PKI/client1\" out.img" ||
    fail "--tls=require: --run failed"
cat vars.txt
[ "$(var tls)" = 2 ] || fail "--tls=require: \$tls is '$(var tls)'"
case "$(var uri)" in
    nbds+unix://*) ;;
    *) fail "--tls=require: \$uri is $(var uri)" ;;
esac
same_bytes out.img disk.img "--run nbdcopy over TLS"

"$NBDCURLD" --tls=on --tls-certificates "$PKI" -r "$url" --run "$show_vars
    nbdinfo --size \"\$uri\" > size.txt" || fail "--tls=on: --run failed"
[ "$(var tls)" = 1 ] || fail "--tls=on: \$tls is '$(var tls)'"
[ "$(cat size.txt)" = 1500007 ] || fail "--tls=on: nbdinfo \$uri: $(cat size.txt)"

"$NBDCURLD" -r "$url" --run "$show_vars" || fail "no TLS: --run failed"
[ "$(var set)" = "" ] || fail "no TLS: \$tls is set ('$(var tls)')"
"$NBDCURLD" --tls=off -r "$url" --run "$show_vars" || fail "--tls=off: --run failed"
[ "$(var set)" = "" ] || fail "--tls=off: \$tls is set ('$(var tls)')"

# PSK: the URI takes the user name before the host part.
"$NBDCURLD" --tls=require --tls-psk "$PKI/keys.psk" -r "$url" --run "$show_vars
    nbdinfo --size \"nbds+unix://alice@/?socket=\$unixsocket&tls-psk-file=\$PKI/keys.psk\" > size.txt" ||
    fail "--tls=require --tls-psk: --run failed"
[ "$(var tls)" = 2 ] || fail "--tls-psk: \$tls is '$(var tls)'"
[ "$(cat size.txt)" = 1500007 ] || fail "--tls-psk: nbdinfo: $(cat size.txt)"

# TCP: nbds://, and the client checks the server's certificate against the
# host in $uri.
port=$(free_port)
rm -f out.img
"$NBDCURLD" --tls=require --tls-certificates "$PKI" -i 127.0.0.1 -p "$port" \
    -r "$url" --run "$show_vars
    nbdcopy \"\$uri?tls-certificates=\$PKI/client1\" out.img" ||
    fail "TCP --tls=require: --run failed"
case "$(var uri)" in
    nbds://*) ;;
    *) fail "TCP --tls=require: \$uri is $(var uri)" ;;
esac
same_bytes out.img disk.img "--run nbdcopy over TCP and TLS"
check_no_leftovers
