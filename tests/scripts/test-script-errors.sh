#!/usr/bin/env bash
# Scripts that fail, or print what may not be sent: the export does not
# open (the client is told), and the log says why in one line, with the
# failing script's exit status and the first lines of its standard error,
# never its standard output (which holds secrets).
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdinfo

serve_token_image 1M 0 0
u=$WEB_URL/token/disk.img
start_nbdcurld -r \
    --export "fails=$u" header-script='
        echo "Authorization: Bearer SECRET-ON-STDOUT"
        echo "login failed: the password was refused" >&2
        echo "second line of stderr" >&2
        exit 3' \
    --export "reserved=$u" header-script='echo "Host: elsewhere.example"' \
    --export "no-colon=$u" header-script='echo "Authorization Bearer x"' \
    --export "control=$u" header-script='printf "X-A: a\033b\n"' \
    --export "nul=$u" header-script='printf "X-A: a\000b\n"' \
    --export "too-large=$u" header-script='head -c 20000 /dev/zero | tr "\0" a' \
    --export "too-many=$u" header-script='for i in $(seq 40); do echo "X-H$i: v"; done' \
    --export "cookie-lines=$u" cookie-script='printf "a=1\nb=2\n"' \
    --export "killed=$u" header-script='kill -9 $$'

# not_opened NAME TEXT: export NAME does not open, and the log says TEXT.
not_opened() {
    if nbdinfo "$(nbd_uri "$1")" > /dev/null 2> info.err; then
        fail "$1: the export opened"
    fi
    eventually 10 grep -qF -- "$2" "$NBDCURLD_LOG" ||
        fail "$1: no log line with '$2': $(grep -F "\"$1\"" "$NBDCURLD_LOG" | tail -n 3)"
    eventually 10 grep -q "export \"$1\" cannot be opened: [^ ]*: its header-script or cookie-script failed" \
        "$NBDCURLD_LOG" || fail "$1: the front-end did not say why it did not open"
}

not_opened fails 'export "fails": header-script failed: exit status 3; its standard error:'
grep -q 'export "fails": header-script: login failed: the password was refused' \
    "$NBDCURLD_LOG" || fail "the script's standard error is not in the log"
grep -q 'export "fails": header-script: second line of stderr' "$NBDCURLD_LOG" ||
    fail "the second line of standard error is not in the log"
! grep -q 'SECRET-ON-STDOUT' "$NBDCURLD_LOG" || fail "the script's standard output was logged"
not_opened reserved 'export "reserved": header-script failed: line 1 (Host): nbdcurld sends that header itself'
not_opened no-colon 'export "no-colon": header-script failed: line 1 (Authorization Bearer x): not a header'
not_opened control 'export "control": header-script failed: line 1 (X-A): the value has a control character'
not_opened nul 'export "nul": header-script failed: line 1 has a NUL byte'
not_opened too-large 'export "too-large": header-script failed: it printed more than 8192 bytes'
not_opened too-many 'export "too-many": header-script failed: more than 32 headers'
not_opened cookie-lines 'export "cookie-lines": cookie-script failed: it printed more than one line'
not_opened killed 'export "killed": header-script failed: killed by signal 9'
# No request went out without the values.
[ -z "$(grep '^GET' "$WEB_LOG" || true)" ] || fail "requests went out: $(head -n 3 "$WEB_LOG")"
