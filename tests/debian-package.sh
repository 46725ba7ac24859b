#!/usr/bin/env bash
# debian-package.sh: build the Debian package (debian/) from a copy of the
# working tree, check the files it installs (exactly the expected list)
# and run lintian on it.
#
#   tests/debian-package.sh [OUTDIR]
#
# The copy holds the files git knows of plus new ones it does not ignore
# (no build directories), so the source tree is left as it was.  The .deb
# and lintian's report stay in OUTDIR (default: a temporary directory,
# removed afterwards).  Exit status 77 when dpkg-buildpackage, debhelper
# or lintian is missing; 1 when the build fails, a file is missing from
# the package or one is there that is not expected, or lintian reports an
# error (warnings are printed).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in dpkg-buildpackage dh lintian git; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "debian-package: SKIP: $tool is not installed" >&2
        exit 77
    fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/nbdcurld-deb.XXXXXX")
out=${1:-}
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
mkdir "$work/nbdcurld"
git ls-files -z --cached --others --exclude-standard |
    tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -x -C "$work/nbdcurld"

# Quicker: every CPU, and no debug symbol package.
export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-} parallel=$(nproc) noddebs"
echo "==> dpkg-buildpackage -us -uc -b (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS)"
if ! (cd "$work/nbdcurld" && dpkg-buildpackage -us -uc -b) > "$work/build.log" 2>&1; then
    tail -n 30 "$work/build.log" >&2
    echo "debian-package: the package build failed" >&2
    exit 1
fi
deb=$(ls "$work"/nbdcurld_*.deb)

status=0
# Every file the package installs, and nothing else: the supervisor and
# its two executables, the units, the service's two configuration files,
# the sysusers entry, the completion, the manual pages and the documents.
expected_files='./etc/default/nbdcurld
./etc/nbdcurld/nbdcurld.conf
./lib/systemd/system/nbdcurld.service
./lib/systemd/system/nbdcurld.socket
./usr/lib/nbdcurld/nbdcurld-fetcher
./usr/lib/nbdcurld/nbdcurld-frontend
./usr/lib/sysusers.d/nbdcurld.conf
./usr/sbin/nbdcurld
./usr/share/bash-completion/completions/nbdcurld
./usr/share/doc/nbdcurld/README.md
./usr/share/doc/nbdcurld/SECURITY.md
./usr/share/doc/nbdcurld/changelog.gz
./usr/share/doc/nbdcurld/copyright
./usr/share/man/man5/nbdcurld.conf.5.gz
./usr/share/man/man8/nbdcurld.8.gz'
listing=$(dpkg-deb -c "$deb")
files=$(awk '$1 !~ /^d/ { print $6 }' <<< "$listing" | sort)
if [ "$files" != "$expected_files" ]; then
    echo "debian-package: the package's files differ from the expected list (< expected, > packaged):" >&2
    diff <(echo "$expected_files") <(echo "$files") >&2 || true
    status=1
fi
for f in ./usr/sbin/nbdcurld ./usr/lib/nbdcurld/nbdcurld-fetcher ./usr/lib/nbdcurld/nbdcurld-frontend; do
    grep -q "^-rwxr-xr-x .* $f\$" <<< "$listing" ||
        { echo "debian-package: $f is not an executable file" >&2; status=1; }
done
# The configuration files are conffiles: an upgrade keeps the operator's.
conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles 2>/dev/null || true)
for f in /etc/default/nbdcurld /etc/nbdcurld/nbdcurld.conf; do
    grep -qx "$f" <<< "$conffiles" || { echo "debian-package: $f is not a conffile" >&2; status=1; }
done
# Read whole before grep looks at it: grep -q stops at the first match,
# and with pipefail the writer's SIGPIPE would fail the check.
service=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./lib/systemd/system/nbdcurld.service)
grep -qx 'ExecStart=/usr/sbin/nbdcurld --readonly --config /etc/nbdcurld/nbdcurld.conf $NBDCURLD_OPTIONS' <<< "$service" ||
    { echo "debian-package: the service does not run /usr/sbin/nbdcurld with /etc/nbdcurld/nbdcurld.conf" >&2; status=1; }
grep -qx 'EnvironmentFile=-/etc/default/nbdcurld' <<< "$service" ||
    { echo "debian-package: the service does not read /etc/default/nbdcurld" >&2; status=1; }

# The package's own user (the default --user), made at configure time.
postinst=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./postinst 2>/dev/null || true)
grep -q 'systemd-sysusers.*nbdcurld.conf' <<< "$postinst" ||
    { echo "debian-package: postinst does not make the nbdcurld user" >&2; status=1; }

echo "==> lintian"
lintian --fail-on error "$work"/nbdcurld_*.changes > "$work/lintian.log" 2>&1 || status=1
cat "$work/lintian.log"
echo "==> $(basename "$deb"): $(grep -c '^E:' "$work/lintian.log" || true) lintian errors," \
     "$(grep -c '^W:' "$work/lintian.log" || true) warnings"
if [ -n "$out" ]; then
    mkdir -p "$out"
    cp "$deb" "$work/lintian.log" "$work/build.log" "$out"/
fi
exit "$status"
