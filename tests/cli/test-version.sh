#!/usr/bin/env bash
# --version: the version, then one key=value line for each library and
# kernel interface, each checked against what pkg-config and the kernel
# say; and -h is --help.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires pkg-config

"$NBDCURLD" --version >version.txt 2>version.err || fail "--version failed: $(cat version.err)"
cat version.txt
[ ! -s version.err ] || fail "--version wrote to stderr: $(cat version.err)"
"$NBDCURLD" -V | cmp -s - version.txt || fail "-V and --version differ"

# The first line as before; every other line key=value, each key once,
# in this order.
expected_keys="version libseccomp seccomp_api libcap-ng_built landlock_abi landlock gnutls
libcurl libcurl_ssl libcurl_protocols openssl"
keys=$(tail -n +2 version.txt | sed 's/=.*//')
[ "$(echo $keys)" = "$(echo $expected_keys)" ] ||
    fail "keys: $(echo $keys), not $(echo $expected_keys)"
tail -n +2 version.txt | grep -vq '^[a-z_-]*=[^ ]' &&
    fail "a line that is not key=value: $(tail -n +2 version.txt | grep -v '^[a-z_-]*=[^ ]')"
value() { sed -n "s/^$1=//p" version.txt; }

version=$(value version)
[ "$(head -n1 version.txt)" = "nbdcurld $version" ] || fail "first line: $(head -n1 version.txt)"
[ "$(value libseccomp)" = "$(pkg-config --modversion libseccomp)" ] ||
    fail "libseccomp=$(value libseccomp), pkg-config says $(pkg-config --modversion libseccomp)"
[[ $(value seccomp_api) =~ ^[0-9]+$ ]] || fail "seccomp_api=$(value seccomp_api)"
[ "$(value libcap-ng_built)" = "$(pkg-config --modversion libcap-ng)" ] ||
    fail "libcap-ng_built=$(value libcap-ng_built)"
[ "$(value gnutls)" = "$(pkg-config --modversion gnutls)" ] ||
    fail "gnutls=$(value gnutls), pkg-config says $(pkg-config --modversion gnutls)"
[ "$(value libcurl)" = "$(pkg-config --modversion libcurl)" ] ||
    fail "libcurl=$(value libcurl), pkg-config says $(pkg-config --modversion libcurl)"
[ "$(value openssl)" = "$(pkg-config --modversion openssl)" ] ||
    fail "openssl=$(value openssl), pkg-config says $(pkg-config --modversion openssl)"
case $(value libcurl_ssl) in
    OpenSSL/"$(value openssl)"*) ;;
    *) fail "libcurl_ssl=$(value libcurl_ssl): not the OpenSSL nbdcurld links" ;;
esac
# The protocols nbdcurld serves are among libcurl's.
for p in http https ftp ftps file; do
    grep -q "^libcurl_protocols=\(.*,\)\?$p\(,\|$\)" version.txt ||
        fail "libcurl_protocols lacks $p"
done

# The kernel's Landlock ABI, asked here without nbdcurld (the call's
# number is the same on every architecture).
read -r abi errno_name < <($PY -c '
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
print(max(r, 0), errno.errorcode.get(ctypes.get_errno(), "-") if r < 0 else "-")')
[ "$(value landlock_abi)" = "$abi" ] || fail "landlock_abi=$(value landlock_abi), the kernel says $abi"
case $abi:$errno_name in
    0:EOPNOTSUPP) want=disabled ;;
    0:*) want=unsupported ;;
    *) want=enabled ;;
esac
[ "$(value landlock)" = "$want" ] || fail "landlock=$(value landlock), expected $want"

# -h is --help.
"$NBDCURLD" -h >h.txt || fail "-h failed"
"$NBDCURLD" --help >help.txt
cmp -s h.txt help.txt || fail "-h and --help differ"
grep -q -- '^  -h, --help' help.txt || fail "--help does not list -h"
echo "ok"
