#!/usr/bin/env bash
# meson install puts the systemd units where systemd looks, naming the
# installed nbdcurld, and systemd accepts them: installed into
# a DESTDIR, then checked with systemd-analyze verify in a private mount
# namespace where DESTDIR's prefix is mounted over the real one, so the
# paths the units name are the ones checked.  Also: the service's
# exposure score (systemd-analyze security) does not get worse.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires meson systemd-analyze unshare
[ -n "${BUILD_ROOT:-}" ] && [ -n "${PREFIX:-}" ] && [ -n "${UNITDIR:-}" ] ||
    fail "run by meson test (BUILD_ROOT, PREFIX and UNITDIR unset)"
[ "$UNITDIR" != no ] || { echo "$0: SKIP: built with -Dsystemdunitdir=no" >&2; exit 77; }

# The exposure of the service as this commit measured it (x10, 1.6): a
# change that loosens the unit fails here.
MAX_EXPOSURE=16

dest=$tmp/dest
meson install -C "$BUILD_ROOT" --no-rebuild --quiet --destdir "$dest" >install.log 2>&1 ||
    fail "meson install failed: $(tail -n 5 install.log)"
service=$dest$UNITDIR/nbdcurld.service
socket=$dest$UNITDIR/nbdcurld.socket
[ -f "$service" ] && [ -f "$socket" ] || fail "units not installed in $UNITDIR"
grep -qx "ExecStart=$PREFIX/sbin/nbdcurld --readonly \$NBDCURLD_OPTIONS" "$service" ||
    fail "ExecStart= does not name $PREFIX/sbin/nbdcurld: $(grep ExecStart= "$service")"
! grep -q '@[A-Z]*@' "$service" || fail "unsubstituted variable in the service: $(grep '@[A-Z]*@' "$service")"
[ -x "$dest$PREFIX/sbin/nbdcurld" ] || fail "nbdcurld not installed in $PREFIX/sbin"

systemd-analyze security --offline=true --threshold=$MAX_EXPOSURE "$service" >security.log 2>&1 ||
    fail "exposure above $MAX_EXPOSURE/10: $(grep Overall security.log)"
grep Overall security.log

# Mounting DESTDIR's prefix over /usr would hide systemd-analyze itself.
case $PREFIX in
    /usr|/) echo "$0: SKIP: verify needs a prefix other than $PREFIX" >&2; exit 77 ;;
esac
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
    echo "$0: SKIP: verify needs root for a private mount namespace" >&2
    exit 77
fi
[ -d "$PREFIX" ] || { echo "$0: SKIP: $PREFIX does not exist" >&2; exit 77; }
unshare -m bash -c 'mount --bind "$1$2" "$2" && systemd-analyze verify "$3" "$4"' \
    verify "$dest" "$PREFIX" "$socket" "$service" >verify.log 2>&1 ||
    fail "systemd-analyze verify: $(cat verify.log)"
[ ! -s verify.log ] || fail "systemd-analyze verify complained: $(cat verify.log)"
