#!/usr/bin/env bash
# Usage errors and unusable URLs: a quick non-zero exit, a message on
# stderr that names the problem, nothing left running.  --help and
# --version succeed.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail

img=$tmp/disk.img
make_image "$img" 64K

# bad PATTERN ARGS...: nbdcurld ARGS must fail within 10 s, saying PATTERN
# (case-insensitive extended regexp) on stderr.
bad() {
    local pattern=$1 status=0
    shift
    timeout 10 "$NBDCURLD" -f --unix "$tmp/sock" "$@" \
        >out.txt 2>err.txt </dev/null || status=$?
    echo "nbdcurld $*: exit $status: $(head -n3 err.txt)"
    [ "$status" -ne 0 ] || fail "nbdcurld $* succeeded"
    [ "$status" -ne 124 ] || fail "nbdcurld $* did not exit"
    [ "$status" -lt 128 ] || fail "nbdcurld $* was killed by a signal"
    grep -qiE "$pattern" err.txt || fail "nbdcurld $*: stderr does not match /$pattern/"
}

bad 'url|usage|argument|missing'   # no URL at all
bad 'option|unrecognized|unknown|usage'   --no-such-option "file://$img"
bad 'url|scheme|example'           example.com/x
bad 'gopher|scheme|protocol|support'   gopher://127.0.0.1/x
bad 'nonexistent|no such|exist|open'   file:///nonexistent/disk.img
bad 'export|='                     --export justaname
bad 'export|url|both|positional'   --export "a=file://$img" "file://$img"
bad 'port|abc|invalid|number'      -p abc "file://$img"
bad 'connections|invalid|number|range'   --connections 0 "file://$img"
bad 'timeout|invalid|number'       --timeout -5 "file://$img"
bad 'client-memory.*64K to 32M'    --client-memory 1K "file://$img"
bad 'client-memory.*64K to 32M'    --client-memory 33M "file://$img"
bad 'client-memory.*64K to 32M'    --client-memory 16G "file://$img"
bad 'client-memory.*64K to 32M'    --client-memory 2MB "file://$img"
bad 'client-memory.*64K to 32M'    --client-memory 18446744073709551615K "file://$img"
# NBD over TLS and --allow: options that cannot work together, files
# that are not there, rules that mean nothing.
mkdir -p "$tmp/emptypki"
bad 'tls.*off, on or require'      --tls=maybe "file://$img"
bad 'tls-certificates.*--tls-psk'  --tls=require "file://$img"
bad 'need --tls=on or --tls=require'   --tls-certificates "$tmp/emptypki" "file://$img"
bad 'cert:CN=x.*tls-certificates'   --tls=require --tls-psk "$img" --tls-verify-peer --allow cert:CN=x "file://$img"
bad 'server-cert.pem'              --tls=require --tls-certificates "$tmp/emptypki" "file://$img"
# A FIFO in the certificates' place is refused at once, not waited on.
mkdir -p "$tmp/fifopki"
mkfifo "$tmp/fifopki/server-cert.pem"
bad 'server-cert.pem: not a regular file'   --tls=require --tls-certificates "$tmp/fifopki" "file://$img"
bad 'tls-psk.*nonexistent'         --tls=require --tls-psk "$tmp/nonexistent" "file://$img"
printf 'alice=00ff\n' > "$tmp/bad.psk"
bad 'psk file, line 1: not USERNAME:HEXKEY'   --tls=require --tls-psk "$tmp/bad.psk" "file://$img"
bad 'allow.*not a rule'            --allow 300.1.2.3 "file://$img"
bad 'allow.*not a rule'            --allow everyone "file://$img"
bad 'prefix length.*0 to 32'       --allow 10.0.0.0/33 "file://$img"
bad 'prefix length.*0 to 128'      --allow ::1/129 "file://$img"
bad 'name must be 1 to'            --allow psk: "file://$img"
bad 'psk:alice.*--tls-psk'         --allow psk:alice "file://$img"
bad 'cert:CN=x.*--tls-verify-peer' --allow cert:CN=x "file://$img"
# nbdkit's server options that would change what is served are refused
# with what to use instead.
bad 'cache-on-read=false: .*always keeps what was read' --filter=cache "file://$img" cache-on-read=false
bad 'filter=exportname.*--export NAME=URL'  --filter=exportname "file://$img"
bad 'filter=cow.*no filters'  --filter=cow "file://$img"
# Retries (built in, --filter=retry is taken): the numbers are checked.
bad 'retries must be a number from 0 to 100'  --retries 101 "file://$img"
bad 'retry-delay must be a number of seconds'  --retry-delay 1.2345 "file://$img"
bad 'retry-delay must be a number of seconds'  --retry-delay 61 "file://$img"
bad 'retry-delay must be a number of seconds'  "file://$img" retry-delay=2.
bad 'retry-exponential= takes true or false'   "file://$img" retry-exponential=maybe
bad 'only curl.verbose=1 applies'  -D nbdkit.backend.datapath=0 "file://$img"
bad 'error: --log=sylog: give stderr, syslog or null' --log=sylog "file://$img"
bad 'and -6.*not with -U'          -4 "file://$img"
bad 'threads.*number'              -t lots "file://$img"
# Longer than MAX_URL_LENGTH (8192): named, not a broken-off URL checker.
bad 'export "": its URL is 9019 bytes long, more than the 8192' \
    "http://127.0.0.1:1/$(printf '%9000s' '' | tr ' ' a)"

"$NBDCURLD" --help > help.txt || fail "--help failed"
grep -q -- '--export' help.txt || fail "--help does not describe --export"
# Every key --help lists (from src/common/curl-keys.h) is in the man page.
keys=$(sed -n '/^KEY=VALUE:/,/^$/p' help.txt | sed 1d |
       grep -oE '[a-z][a-z0-9-]*[,;]|retry-exponential' | tr -d ',;')
[ "$(echo "$keys" | wc -l)" -gt 30 ] || fail "--help lists too few keys: $keys"
for k in $keys; do
    grep -qE "Cm $k( |\$)" "$srcdir/../man/nbdcurld.8" ||
        fail "--help lists $k= but man/nbdcurld.8 does not describe it"
done
"$NBDCURLD" --version > version.txt || fail "--version failed"
grep -qE '[0-9]+\.[0-9]+' version.txt || fail "--version prints no version"
"$NBDCURLD" -V > /dev/null || fail "-V failed"

[ ! -e "$tmp/sock" ] || fail "a failed start left its socket behind"
sleep 0.2
[ -z "$(leftover_processes)" ] || fail "processes left: $(leftover_processes)"
