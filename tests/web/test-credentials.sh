#!/usr/bin/env bash
# --auth-user and --auth-password: the password comes from a file, a
# descriptor or the terminal, never from the command line; it reaches the
# web server (nginx basic authentication), and never a log line, a
# command line or another host.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy nbdinfo

password='pw-Sekr1t-7d1c'
mkdir www
make_image www/disk.img 3M
# nginx reads {PLAIN} passwords from its user file.
printf 'alice:{PLAIN}%s\n' "$password" > htpasswd
start_nginx "$tmp/www" "" "auth_basic \"nbdcurld test\"; auth_basic_user_file $tmp/htpasswd;"
url=$NGINX_URL/disk.img
printf '%s\n' "$password" > pw.txt
printf 'not-the-password\n' > wrong.txt

# serve LOG ARGS...: nbdcurld -v ARGS with a copy of the export, log in LOG.
serve() {
    local log=$1
    shift
    rm -f out.img
    "$NBDCURLD" -v -r "$@" --run 'nbdcopy "$uri" out.img' 2>"$log"
}
copied() { [ -f out.img ] && [ "$(md5_of out.img)" = "$(md5_of www/disk.img)" ]; }
no_password_in() {
    ! grep -q -- "$password" "$@" || fail "the password appears in $*"
}

# Without credentials: HTTP 401, said clearly.
if serve nocreds.log "$url"; then fail "served without credentials"; fi
grep -q '401' nocreds.log || fail "no HTTP 401 in the log: $(tail -n 3 nocreds.log)"

# From a file.
serve file.log --auth-user alice --auth-password "+$tmp/pw.txt" "$url" ||
    fail "--auth-password +FILE: $(tail -n 3 file.log)"
copied || fail "--auth-password +FILE: copy differs"
no_password_in file.log

# From a descriptor (a here-string, as a script would pass it).
serve fd.log --auth-user alice --auth-password -7 "$url" 7<<<"$password" ||
    fail "--auth-password -FD: $(tail -n 3 fd.log)"
copied || fail "--auth-password -FD: copy differs"
no_password_in fd.log

# From standard input as descriptor 0.
serve stdin.log --auth-user alice --auth-password -0 "$url" < pw.txt ||
    fail "--auth-password -0: $(tail -n 3 stdin.log)"
copied || fail "--auth-password -0: copy differs"

# The wrong password: 401 at open, not data.
if serve wrong.log --auth-user alice --auth-password "+$tmp/wrong.txt" "$url"; then
    fail "served with the wrong password"
fi
grep -q '401' wrong.log || fail "wrong password: no 401 in the log"

# The password itself on the command line is refused, without echoing it.
rc=0
"$NBDCURLD" -r --auth-user alice --auth-password "$password" "$url" \
    --run true 2>cmdline.log || rc=$?
[ "$rc" -eq 1 ] || fail "a password on the command line: exit $rc"
grep -q 'visible to every local user' cmdline.log || fail "no reason given: $(cat cmdline.log)"
no_password_in cmdline.log

# Other mistakes, each with its own message.
expect_message() {
    local pattern=$1 rc=0
    shift
    "$NBDCURLD" -r "$@" --run true </dev/null 2>err.log || rc=$?
    [ "$rc" -ne 0 ] || fail "$*: succeeded"
    grep -qiE "$pattern" err.log || fail "$*: stderr $(cat err.log) does not match /$pattern/"
}
expect_message 'needs --auth-user' --auth-password "+$tmp/pw.txt" "$url"
expect_message 'no such file' --auth-user alice --auth-password "+$tmp/none.txt" "$url"
expect_message 'no terminal' --auth-user alice --auth-password - "$url" < /dev/null
expect_message 'descriptor 9' --auth-user alice --auth-password -9 "$url"
head -c 2000 /dev/zero | tr '\0' x > long.txt
expect_message 'longer than' --auth-user alice --auth-password "+$tmp/long.txt" "$url"
printf 'two\nlines\n' > lines.txt
expect_message 'one line' --auth-user alice --auth-password "+$tmp/lines.txt" "$url"

# The terminal prompt, naming the user and the web server, with script(1)
# giving nbdcurld a terminal.  The password is typed only once the prompt
# is there (nbdcurld turns echo off and drops type-ahead first).
if command -v script >/dev/null; then
    rm -f out.img
    : > tty.log
    mkfifo ttyin
    (
        for i in $(seq 100); do
            grep -q 'password for' tty.log && break
            sleep 0.1
        done
        printf '%s\n' "$password"
    ) > ttyin &
    script -q -e -c "'$NBDCURLD' -r --auth-user alice --auth-password - '$url' --run 'nbdcopy \"\$uri\" out.img'" \
        /dev/null < ttyin > tty.log 2>&1 ||
        fail "--auth-password -: $(tail -n 5 tty.log)"
    copied || fail "--auth-password -: copy differs"
    # The prompt names whose password it asks for.
    grep -qF "nbdcurld: password for alice at 127.0.0.1:$NGINX_PORT (export \"\"): " tty.log ||
        fail "the prompt does not name the user and host: $(cat tty.log)"
    no_password_in tty.log
fi

# A password in the URL still works, with a notice, and is not logged.
serve inurl.log "http://alice:$password@127.0.0.1:$NGINX_PORT/disk.img" ||
    fail "password in the URL: $(tail -n 3 inurl.log)"
copied || fail "password in the URL: copy differs"
grep -q 'use --auth-user and --auth-password' inurl.log || fail "no notice about the URL's password"
no_password_in inurl.log


# A redirect to another host gets no credentials, neither while opening
# nor with the reads that follow.  Two web-server.py instances on one port
# (the fetcher's sandbox allows only the URL's port): the first, on
# 127.0.0.1, redirects to the second, on 127.0.0.2.
start_two_origins "$tmp/www" first.log target.log
target_port=$TWO_ORIGINS_PORT
serve redirect.log --auth-user alice --auth-password "+$tmp/pw.txt" \
    "http://127.0.0.1:$target_port/redirect-to/127.0.0.2:$target_port/disk.img" ||
    fail "redirected: $(tail -n 3 redirect.log)"
copied || fail "redirected: copy differs"
grep -q 'auth=yes' first.log || fail "the first server got no credentials"
grep -q 'range=bytes' target.log || fail "no reads reached the second server"
! grep -q 'auth=yes' target.log ||
    fail "credentials went to the host a redirect led to: $(grep 'auth=yes' target.log | head -n 2)"
no_password_in redirect.log

# The whole URL from a file ("+FILE"), as for a presigned URL: served, no
# notice (it is not on the command line), nothing of it in the log.
printf 'http://alice:%s@127.0.0.1:%s/disk.img\n' "$password" "$NGINX_PORT" > url.txt
serve urlfile.log "+$tmp/url.txt" || fail "URL from a file: $(tail -n 3 urlfile.log)"
copied || fail "URL from a file: copy differs"
! grep -q 'holds a password' urlfile.log || fail "a notice about a URL that came from a file"
no_password_in urlfile.log
serve urlfile2.log --export-ro "disk=+$tmp/url.txt" || fail "--export NAME=+FILE: $(tail -n 3 urlfile2.log)"
expect_message 'URL file.*no such file' "+$tmp/no-url.txt"
