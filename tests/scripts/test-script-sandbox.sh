#!/usr/bin/env bash
# Scripts run in the supervisor (its child: the only role that starts
# programs), in their temporary directory, with a scrubbed environment:
# nothing of the environment nbdcurld was started with but PATH, HOME and
# the locale, plus nbdkit's $iteration and $url (without its user name
# and password) and our $tmpdir.  Neither the URL's password nor the
# script's own text is in its environment (env, /proc/PID/environ of the
# shell and of a program it runs) or on any command line; the URL as
# given, password included, is its standard input.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdinfo

serve_token_image 1M 0 0
out=$pub
export FOO_SECRET=do-not-pass-me
url_password=pw-Script-3b8e1f
start_nbdcurld -r "http://alice:$url_password@${WEB_URL#http://}/token/disk.img" header-script='
    tr "\0" "\n" < /proc/$$/environ > '"$out"'/shell-environ
    tr "\0" "\n" < /proc/self/environ > '"$out"'/child-environ
    read -r given_url; echo "$given_url" > '"$out"'/stdin
    cat /proc/$PPID/comm > '"$out"'/comm
    echo $PPID > '"$out"'/ppid
    pwd > '"$out"'/pwd
    env | sort > '"$out"'/env
    tr "\0" " " < /proc/$$/cmdline > '"$out"'/cmdline
    printf "Authorization: Bearer %s\n" "$(cat '"$pub"'/token)"  # MARKER-IN-SCRIPT'
unset FOO_SECRET

nbdinfo --size "$NBD_URI" > /dev/null || fail "the export did not open: $(tail -n 3 "$NBDCURLD_LOG")"
[ "$(cat "$out/ppid")" = "$NBDCURLD_PID" ] ||
    fail "the script's parent is $(cat "$out/ppid"), not the supervisor ($NBDCURLD_PID)"
[ "$(cat "$out/comm")" = "$(cat "/proc/$NBDCURLD_PID/comm")" ] || fail "comm: $(cat "$out/comm")"
echo "environment of the script:"
sed 's/=.*//' "$out/env"
! grep -q FOO_SECRET "$out/env" || fail "FOO_SECRET reached the script"
! grep -q NBDCURLD_SCRIPT "$out/env" || fail "the script's text is in its environment"
grep -qx 'iteration=0' "$out/env" || fail "no \$iteration"
grep -qx "url=$WEB_URL/token/disk.img" "$out/env" || fail "no \$url, or not without its credentials"
for f in env shell-environ child-environ; do
    ! grep -q -- "$url_password" "$out/$f" || fail "the URL's password is in the script's $f"
    ! grep -q MARKER-IN-SCRIPT "$out/$f" || fail "the script's text is in its $f"
done
[ "$(cat "$out/stdin")" = "http://alice:$url_password@${WEB_URL#http://}/token/disk.img" ] ||
    fail "standard input is not the URL as given: $(cat "$out/stdin")"
tmpdir=$(sed -n 's/^tmpdir=//p' "$out/env")
[ -n "$tmpdir" ] && [ "$(cat "$out/pwd")" = "$tmpdir" ] || fail "not run in \$tmpdir ($tmpdir)"
bad=$(sed 's/=.*//' "$out/env" | grep -vxE 'PATH|HOME|LANG|LC_ALL|LC_CTYPE|iteration|url|tmpdir|PWD|OLDPWD|SHLVL|_' || true)
[ -z "$bad" ] || fail "more in the environment: $bad"
! grep -q MARKER-IN-SCRIPT "$out/cmdline" || fail "the script is on a command line"
stop_nbdcurld
sleep 0.5
[ ! -e "$tmpdir" ] || fail "$tmpdir was left behind"
