#!/usr/bin/env bash
# quickstart.sh: install what is missing, build, and either show nbdcurld
# at work or run the whole test suite.
#
#   tests/quickstart.sh demo   serve a sample image through nginx, show it
#                              with nbdinfo, copy it with nbdcopy, check
#                              the copy, and say where the binary is
#   tests/quickstart.sh test   run the suite on a release build and on an
#                              ASan/UBSan build, build the Debian package
#                              and lint it, and run the fuzz suite on a
#                              clang build (when clang is there), then
#                              print a summary
#
# Debian or Ubuntu: missing packages are installed with apt-get (through
# sudo when not run as root): for the demo only what it uses, for the
# tests those and the tools the tests use.  Runs from any directory.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
# What every private nginx shares (nginx_launch), and stop_pid.
source "$root/tests/lib/nginx.sh"

# What the build and the demo use: the compiler and build tools, the
# libraries' development files, the NBD clients and nginx.
DEMO_PACKAGES=(
    meson ninja-build pkg-config gcc
    libcurl4-openssl-dev libssl-dev libseccomp-dev libcap-ng-dev libgnutls28-dev
    libnbd-bin nginx-light
)
# What only the tests use, beside those: clients, peers and web tools,
# the manual pages' linters, the benchmark's tools, clang for the fuzz
# suite, and the Debian package's tools.
TEST_PACKAGES=(
    python3-libnbd nbdkit qemu-utils
    mandoc groff-base bsdextrautils openssl curl jq procps iproute2 gnutls-bin
    e2fsprogs hyperfine fio qemu-block-extra python3-pyftpdlib tinyproxy
    clang libclang-rt-14-dev
    dpkg-dev debhelper lintian
    python3-yaml yamllint
)

say() { printf '==> %s\n' "$*"; }
die() { printf 'quickstart: error: %s\n' "$*" >&2; exit 1; }

usage() {
    cat <<EOF
usage: $0 demo|test
  demo   install, build, serve a sample image and copy it
  test   install, build (release and ASan/UBSan) and run the test suite
EOF
}

# ---- dependencies ----

# install_deps PACKAGE...: install those of the packages that are missing.
install_deps() {
    local pkg missing=() sudo=()
    command -v dpkg-query >/dev/null 2>&1 ||
        die "dpkg-query not found: install these packages by hand: $*"
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
                grep -q 'install ok installed'; then
            missing+=("$pkg")
        fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
        say "all packages are installed"
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 ||
            die "not root and no sudo: install these packages: ${missing[*]}"
        sudo=(sudo)
    fi
    say "installing: ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y "${missing[@]}"
}

# ---- building ----

# build DIR [MESON OPTIONS...]: configure DIR (or reconfigure it) and build.
# Written without relying on set -e, so that callers may use it in a test.
build() {
    local dir=$1
    shift
    if [ -d "$dir/meson-private" ]; then
        say "reconfiguring $dir"
        meson setup --reconfigure "$dir" "$@" || return 1
    else
        say "configuring $dir"
        meson setup "$dir" "$@" || return 1
    fi
    if [ -n "${BUILD_FOR_SUITE:-}" ]; then
        # Only what that suite's tests run (meson test --no-rebuild after).
        local targets
        targets=$(suite_targets "$dir" "$BUILD_FOR_SUITE") || return 1
        say "building $dir: what the $BUILD_FOR_SUITE suite runs"
        # shellcheck disable=SC2086  # paths from meson, without spaces
        ninja -C "$dir" $targets || return 1
        return 0
    fi
    say "building $dir"
    ninja -C "$dir" || return 1
}

# suite_targets DIR SUITE: the files (relative to DIR) that the tests of
# SUITE depend on, from meson's introspection.
suite_targets() {
    (cd "$1" && /usr/bin/python3 - "$2" <<'PY'
import json, os, subprocess, sys
suite = sys.argv[1]
tests = json.loads(subprocess.check_output(["meson", "introspect", "--tests", "."]))
targets = {t["id"]: t for t in json.loads(
    subprocess.check_output(["meson", "introspect", "--targets", "."]))}
need = set()
for test in tests:
    if any(s == suite or s.endswith(":" + suite) for s in test["suite"]):
        for dep in test["depends"]:
            need.update(os.path.relpath(f) for f in targets[dep]["filename"])
print(" ".join(sorted(need)))
PY
    )
}

# ---- demo ----

demo_tmp=""
nginx_pid=""
demo_cleanup() {
    [ -z "$nginx_pid" ] || stop_pid "$nginx_pid"
    if [ -n "$demo_tmp" ]; then
        rm -rf "$demo_tmp"
    fi
}

# The demo's nginx: one process (master_process off), so it runs as us.
demo_nginx_conf() {
    cat <<EOF
$(nginx_main_conf "$demo_tmp")
master_process off;
events { worker_connections 64; }
http {
$(nginx_http_conf "$demo_tmp")
    server {
        listen 127.0.0.1:$1;
        root $demo_tmp/www;
    }
}
EOF
}

demo() {
    local url sum_image sum_copy
    install_deps "${DEMO_PACKAGES[@]}"
    build build
    if ! command -v nbdinfo >/dev/null || ! command -v nbdcopy >/dev/null; then
        die "nbdinfo and nbdcopy are needed (package libnbd-bin)"
    fi

    demo_tmp=$(mktemp -d "${TMPDIR:-/tmp}/nbdcurld-demo.XXXXXX")
    trap demo_cleanup EXIT
    trap 'exit 130' INT TERM
    mkdir "$demo_tmp/www"

    say "making a 64 MiB sample image"
    head -c 64M /dev/urandom > "$demo_tmp/www/sample.img"

    # nginx with its own configuration, as one process (so it runs as us
    # and can read our private directory).
    nginx_launch "$demo_tmp" demo_nginx_conf ||
        die "nginx did not start: $(cat "$demo_tmp/nginx-error.log")"
    nginx_pid=$NGINX_PID
    url=http://127.0.0.1:$NGINX_PORT/sample.img
    say "nginx serves $url"

    say "nbdcurld -r $url --run 'nbdinfo ... && nbdcopy ...'"
    "$root/build/src/nbdcurld" -r "$url" --run "
        nbdinfo \"\$uri\" &&
        nbdcopy --progress \"\$uri\" '$demo_tmp/copy.img'" ||
        die "nbdcurld --run failed (status $?)"

    sum_image=$(sha256sum < "$demo_tmp/www/sample.img" | cut -d' ' -f1)
    sum_copy=$(sha256sum < "$demo_tmp/copy.img" | cut -d' ' -f1)
    echo "image: $sum_image"
    echo "copy:  $sum_copy"
    [ "$sum_image" = "$sum_copy" ] || die "checksums differ"
    echo "checksums match"

    cat <<EOF

nbdcurld is built: $root/build/src/nbdcurld
It runs from there (it starts nbdcurld-frontend and nbdcurld-fetcher from
beside itself), for example:
    $root/build/src/nbdcurld -r URL --run 'nbdcopy "\$uri" disk.img'
To install it with its manual pages and systemd units:
    meson install -C $root/build
or build the Debian package (in $root: dpkg-buildpackage -us -uc -b).
EOF
}

# ---- test ----

total_ok=0
total_fail=0
total_skip=0
runs_failed=0
failures=()

# count LOG FIELD: the number meson test printed after "FIELD:" (0 if none).
count() {
    awk -v f="$2:" '$1 == f || ($1 " " $2) == f { n = $NF } END { print n + 0 }' "$1"
}

# suite NAME DIR [MESON OPTIONS...]: build DIR and run the tests there.
suite() {
    local name=$1 dir=$2 log status=0 ok fail skip
    shift 2
    say "$name build"
    if ! build "$dir" "$@"; then
        echo "quickstart: $name build failed" >&2
        runs_failed=$((runs_failed + 1))
        return 0
    fi
    log=$dir/quickstart-test.log
    say "$name tests"
    meson test -C "$dir" --print-errorlogs "${MESON_TEST_ARGS[@]}" 2>&1 |
        tee "$log" || status=$?
    ok=$(count "$log" Ok)
    fail=$(( $(count "$log" Fail) + $(count "$log" "Unexpected Pass") +
             $(count "$log" Timeout) ))
    skip=$(count "$log" Skipped)
    say "$name: $ok passed, $fail failed, $skip skipped"
    total_ok=$((total_ok + ok))
    total_fail=$((total_fail + fail))
    total_skip=$((total_skip + skip))
    if [ "$status" -ne 0 ] || [ "$fail" -ne 0 ]; then
        runs_failed=$((runs_failed + 1))
        failures+=("$name:$dir")
    fi
}

# recap: what failed, each test with the end of what it printed, last,
# where whoever reads only the end of a long log sees it.
recap() {
    local entry name dir
    [ ${#failures[@]} -gt 0 ] || return 0
    say "what failed"
    for entry in "${failures[@]}"; do
        name=${entry%%:*} dir=${entry#*:}
        /usr/bin/python3 - "$name" "$dir/meson-logs/testlog.json" 2>/dev/null <<'PY' ||
import json, sys
name, path = sys.argv[1], sys.argv[2]
for line in open(path, encoding="utf-8", errors="replace"):
    try:
        test = json.loads(line)
    except ValueError:
        continue
    if test.get("result") in ("OK", "SKIP", "EXPECTEDFAIL"):
        continue
    print(f"--- {name}: {test['name']}: {test['result']} "
          f"after {test.get('duration', 0):.1f} s")
    out = (test.get("stdout") or "") + (test.get("stderr") or "")
    for text in out.splitlines()[-12:]:
        print("    " + text[:300])
PY
            echo "--- $name: no readable test log (the build or meson itself failed)"
    done
}

test_all() {
    install_deps "${DEMO_PACKAGES[@]}" "${TEST_PACKAGES[@]}"

    # Twice each test's own timeout: a busy CI machine has run tests at a
    # fraction of a quiet one's speed, and a test that hangs still ends,
    # at twice its timeout.
    MESON_TEST_ARGS=(--timeout-multiplier 2)
    suite release build

    # Sanitizers slow everything down: give the tests more time.
    # LeakSanitizer stops the process with ptrace at exit, which every
    # role's seccomp filter refuses (policy/sanitizer.policy adds only what
    # ASan and UBSan need while running), so leak checking is off here.
    # The benchmark's smoke test checks the script, not the build: the
    # release run has it, and here it would only take a minute and a half.
    MESON_TEST_ARGS=(--timeout-multiplier 3 --no-suite benchmark)
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:color=never \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:color=never \
        suite "ASan/UBSan" build-asan \
            -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

    # The Debian package (debian/), built from a copy of the tree, and
    # lintian on it (tests/debian-package.sh; about a minute).
    say "Debian package"
    local pstatus=0
    tests/debian-package.sh || pstatus=$?
    case $pstatus in
        0) say "Debian package: built, lintian without errors"; total_ok=$((total_ok + 1)) ;;
        77) say "Debian package: skipped (tools missing)"; total_skip=$((total_skip + 1)) ;;
        *) say "Debian package: FAILED"; total_fail=$((total_fail + 1))
           runs_failed=$((runs_failed + 1)) ;;
    esac

    # The libFuzzer harnesses (tests/fuzz/), each briefly over its seeds.
    if command -v clang >/dev/null 2>&1; then
        # Only the harnesses are built: the rest of the tree with clang
        # would double this step's time and run nothing.
        MESON_TEST_ARGS=(--suite fuzz --no-rebuild)
        BUILD_FOR_SUITE=fuzz CC=clang suite fuzz build-fuzz -Dfuzz=true
    else
        say "no clang: the fuzz suite is skipped"
    fi

    recap
    echo "$total_ok passed, $total_fail failed, $total_skip skipped"
    [ "$runs_failed" -eq 0 ]
}

case "${1:-}" in
    demo) demo ;;
    test) test_all ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
esac
