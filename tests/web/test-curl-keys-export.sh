#!/usr/bin/env bash
# nbdkit curl keys per export: keys given before the first
# --export/--export-ro apply to every export, keys given after an
# `--export NAME=URL` apply to that export only, and an export's key
# overrides the same key given before the first export; long options
# (--timeout here) are the defaults under both.  tests/lib/web-server.py logs
# each request's User-Agent, Cookie, Authorization and test headers, so
# each export's requests show its own values.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy

www_image 1M
for name in a b c d ro auth q slow fast-fail; do
    ln -s disk.img "www/$name.img"
done
start_web_server "$tmp/www"
u=$WEB_URL
password='pw-Exp0rt-41c8'
printf '%s\n' "$password" > pw.txt
basic="Basic $(printf 'alice:%s' "$password" | base64)"
query='X-Amz-Signature=ab12==&X-Amz-Expires=600'

# Global keys first, then each export with its own.  /delay/ holds every
# GET for 2 s: --timeout 1 fails it, unless the export says otherwise.
start_nbdcurld -r -v \
    user-agent=global-ua/1 cookie=g=global 'header=X-Nbdcurld-Test2: global' \
    --timeout 1 \
    --export "a=$u/good/a.img" 'header=X-Nbdcurld-Test: a' \
    --export "b=$u/good/b.img" 'header=X-Nbdcurld-Test: b' user-agent=b-ua/2 cookie=b=own \
    --export "c=$u/chunked/c.img" 'header=X-Nbdcurld-Test2: c' \
    --export "d=$u/good/d.img" \
    --export-ro "ro=$u/head-405/ro.img" 'header=X-Nbdcurld-Test: ro' \
    --export "auth=$u/good/auth.img" user=alice "password=+$tmp/pw.txt" \
    --export "q=$u/good/q.img?$query" user-agent=q/3 \
    --export "slow=$u/delay/slow.img" timeout=10 \
    --export "fast-fail=$u/delay/fast-fail.img"


for name in a b c d ro auth q slow; do
    copy_export "$name"
done

# Global keys, and the export's own header.
web_every a ' xtest="a" ' ' ua="global-ua/1" ' ' cookie="g=global" ' ' authz=- '
# The export's user-agent and cookie replace the global ones; keys given
# after b's --export are b's only (a above has neither).
web_every b ' xtest="b" ' ' ua="b-ua/2" ' ' cookie="b=own" '
# The export's header of the same name replaces the global one (not both):
# on libcurl's reads (/chunked/) too.
web_every c ' xtest2="c" ' ' xtest=- ' ' ua="global-ua/1" ' ' cookie="g=global" '
# No keys of its own: the global ones.
web_every d ' xtest2="global" ' ' xtest=- ' ' ua="global-ua/1" ' ' cookie="g=global" ' ' authz=- '
# --export-ro, and the GET probe after a refused HEAD.
web_every ro ' xtest="ro" ' ' ua="global-ua/1" '
web_requests ro | grep -q '^HEAD .* status=405 ' || fail "ro: no HEAD refused before the probe"
# Credentials for one export only.
web_every auth " authz=\"$basic\" " ' ua="global-ua/1" '
for name in a b c d ro q slow; do
    ! web_requests "$name" | grep -q ' auth=yes ' ||
        fail "$name: another export's credentials were sent: $(web_requests "$name" | grep ' auth=yes ' | head -n 2)"
done
! grep -qF -- "$password" "$NBDCURLD_LOG" || fail "the password is in nbdcurld's log"
# An export URL with '=' in its query.
web_every q " ua=\"q/3\" " "/q.img?$query "
# timeout=10 overrides --timeout 1 for this export only.
web_every slow ' ua="global-ua/1" '
echo "== fast-fail"
rm -f fast-fail.img
expect_fail nbdcopy "$(nbd_uri fast-fail)" fast-fail.img
grep -q 'fast-fail.*timed out' "$NBDCURLD_LOG" ||
    fail "fast-fail: no read timed out: $(tail -n 5 "$NBDCURLD_LOG")"
kill -0 "$NBDCURLD_PID" || fail "nbdcurld died"
stop_nbdcurld

# A key before the first --export overrides the long option too, and an
# export's key overrides both.
for name in global-over-option export-over-global; do
    ln -s disk.img "www/$name.img"
done
start_nbdcurld -r --timeout 1 timeout=10 \
    --export "global-over-option=$u/delay/global-over-option.img" \
    --export "export-over-global=$u/delay/export-over-global.img" timeout=1
copy_export global-over-option
echo "== export-over-global"
rm -f export-over-global.img
expect_fail nbdcopy "$(nbd_uri export-over-global)" export-over-global.img
grep -q 'export-over-global.*timed out' "$NBDCURLD_LOG" ||
    fail "export-over-global: no read timed out: $(tail -n 5 "$NBDCURLD_LOG")"
stop_nbdcurld

# Keys refused after an --export as before it: misspelt (with the nearest
# key named), not supported yet (named), a literal password.
# refused PATTERN ARGS...: nbdcurld ARGS exits at start with an error
# matching PATTERN (grep -iE); the --run command never runs.
refused() {
    local pattern=$1 rc=0
    shift
    echo "== refused: $*"
    rm -f ran
    "$NBDCURLD" -r --run "touch '$tmp/ran'" "$@" </dev/null >refused.log 2>&1 || rc=$?
    [ "$rc" -ne 0 ] || fail "accepted: nbdcurld $*"
    [ "$rc" -lt 128 ] || fail "killed by signal $((rc - 128)): nbdcurld $*"
    [ ! -e ran ] || fail "refused only after serving: nbdcurld $*"
    grep -qiE -- "$pattern" refused.log ||
        fail "the message does not match /$pattern/: $(cat refused.log)"
}
refused 'header' --export "a=$u/good/a.img" --export "b=$u/good/b.img" heder=x
refused 'sslverify' sslverfy=false --export "a=$u/good/a.img"
refused 'proxy-password=.*\+FILE' \
    --export "a=$u/good/a.img" proxy=http://127.0.0.1:3128 proxy-user=bob \
    "proxy-password=$password"
! grep -qF -- "$password" refused.log || fail "a literal proxy password was echoed"
refused '\+FILE|-FD|file|descriptor' --export "a=$u/good/a.img" user=alice "password=$password"
! grep -qF -- "$password" refused.log || fail "a literal password was echoed"
refused 'header' --export "a=$u/good/a.img" 'header=no colon'

if grep -h 'killed by signal' ./*.log; then
    fail "a process was killed by a signal"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
