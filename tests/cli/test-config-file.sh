#!/usr/bin/env bash
# --config FILE (nbdcurld.conf(5)): settings before the first section
# apply to every export, each [export NAME] section's to its export;
# the file counts where --config stands on the command line (what comes
# after it overrides it, what comes before does not); relative +FILE
# references are taken from the file's directory; and every wrong file
# is refused at start, exit status 1, with FILE:LINE and what to do.
# tests/lib/web-server.py logs each request's User-Agent, Authorization and
# test headers, so each export's requests show its own values.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy nbdinfo

mkdir www etc elsewhere
make_image www/disk.img 1M
sum=$(md5_of www/disk.img)
for name in hdr auth plain hdr2 auth2 plain2 hdr3 auth3 plain3 extra quoted; do
    ln -s disk.img "www/$name.img"
done
start_web_server "$tmp/www"
u=$WEB_URL
password='pw-C0nfig-7d21'
printf '%s\n' "$password" > etc/pw.txt
basic="Basic $(printf 'alice:%s' "$password" | base64)"

# conf FILE SUFFIX: three exports, hdr with a header of its own, auth
# with credentials (the password by a file relative to the config file),
# plain with none; one user-agent for all.  Images NAME$SUFFIX.img, so
# each run's requests are told apart in the web server's log.
conf() {
    cat > "$1" <<EOF
# Settings for every export.
user-agent = conf-ua/1
connections = 4

[export hdr]
url = $u/good/hdr$2.img
header = X-Nbdcurld-Test: hdr
description = from the file

[export auth]
# The password file is next to this file.
user = alice
password = +pw.txt
url = $u/good/auth$2.img

[export plain]
url   =   $u/chunked/plain$2.img
EOF
    chmod 644 "$1"
}


# description NAME: what export NAME tells clients about itself.
description() {
    nbdinfo --json "$(nbd_uri "$1")" |
        $PY -c 'import json, sys; print(json.load(sys.stdin)["exports"][0].get("description", ""))'
}

# Three exports from one file, started from another directory.
conf etc/nbdcurld.conf ''
cd elsewhere
start_nbdcurld -r --config ../etc/nbdcurld.conf
cd "$tmp"
for name in hdr auth plain; do
    copy_export "$name"
done
web_every hdr ' xtest="hdr" ' ' ua="conf-ua/1" ' ' authz=- '
web_every auth " authz=\"$basic\" " ' ua="conf-ua/1" ' ' xtest=- '
web_every plain ' ua="conf-ua/1" ' ' xtest=- ' ' authz=- '
for name in hdr plain; do
    ! web_requests "$name" | grep -q ' auth=yes ' ||
        fail "$name: another export's credentials were sent"
done
[ "$(description hdr)" = "from the file" ] ||
    fail "hdr: description \"$(description hdr)\", not the file's"
! grep -qF -- "$password" "$NBDCURLD_LOG" || fail "the password is in nbdcurld's log"
stop_nbdcurld

# After --config: a key for all exports and --description override the
# file's (an export's own keys still win); a second --config adds its
# exports.
conf etc/second.conf 2
printf '[export extra]\nurl = %s\n' "$u/good/extra.img" > etc/extra.conf
chmod 600 etc/extra.conf
start_nbdcurld -r --config etc/second.conf --config etc/extra.conf \
    user-agent=cli-ua/2 --description 'hdr=from the command line'
for name in hdr auth plain extra; do
    copy_export "$name"
done
web_every hdr2 ' xtest="hdr" ' ' ua="cli-ua/2" '
web_every auth2 " authz=\"$basic\" " ' ua="cli-ua/2" '
web_every plain2 ' ua="cli-ua/2" ' ' xtest=- '
web_every extra ' ua="cli-ua/2" ' ' xtest=- '
[ "$(description hdr)" = "from the command line" ] ||
    fail "hdr: description \"$(description hdr)\", not the command line's"
stop_nbdcurld

# Before --config: the file's settings override them.
conf etc/third.conf 3
start_nbdcurld -r user-agent=cli-ua/3 --description 'hdr=from the command line' \
    --config etc/third.conf
for name in hdr plain; do
    copy_export "$name"
done
web_every hdr3 ' xtest="hdr" ' ' ua="conf-ua/1" '
web_every plain3 ' ua="conf-ua/1" '
[ "$(description hdr)" = "from the file" ] ||
    fail "hdr: description \"$(description hdr)\", not the file's"
stop_nbdcurld

# Values in double quotes (nbdcurld.conf(5)): the URL, a description
# with blanks at its ends and an escaped quote, a header value.
cat > etc/quoted.conf <<EOF
[export q]
url = "$u/good/quoted.img"
description = "  a \\"quoted\\" one \\\\ "
header = "X-Nbdcurld-Test: q"
EOF
chmod 644 etc/quoted.conf
start_nbdcurld -r --config etc/quoted.conf
copy_export q
web_every quoted ' xtest="q" '
[ "$(description q)" = '  a "quoted" one \ ' ] ||
    fail "quoted: description [$(description q)]"
stop_nbdcurld

# refused PATTERN FILE: nbdcurld --config FILE exits with status 1 at
# start, with a message matching PATTERN (grep -E); the --run command
# never runs.  FILE is made 0644 unless it is already in place.
refused() {
    local pattern=$1 file=$2 rc=0
    echo "== refused: $file: $pattern"
    rm -f ran
    "$NBDCURLD" -r --run "touch '$tmp/ran'" --config "$file" </dev/null >refused.log 2>&1 || rc=$?
    [ "$rc" -eq 1 ] || fail "$file: exit status $rc, not 1: $(cat refused.log)"
    [ ! -e ran ] || fail "$file: refused only after serving"
    grep -qE -- "$pattern" refused.log ||
        fail "$file: the message does not match /$pattern/: $(cat refused.log)"
}
# bad NAME LINES...: a file bad/NAME.conf of those lines, mode 0644.
bad() {
    local name=$1
    shift
    mkdir -p bad
    printf '%s\n' "$@" > "bad/$name.conf"
    chmod 644 "bad/$name.conf"
}
good="url = $u/good/hdr.img"

bad unknown "$good" '' 'heder = X-Nbdcurld-Test: x'
refused ' nbdcurld: error: bad/unknown.conf:3: unknown setting heder: did you mean header\?' bad/unknown.conf
bad unknown-option 'conections = 8' "$good"
refused 'unknown-option.conf:1: unknown setting conections: did you mean connections\?' \
    bad/unknown-option.conf
bad password '[export a]' "$good" 'user = alice' "password = $password"
refused 'password.conf:4: password: .*\(password = \+FILE\)' bad/password.conf
! grep -qF -- "$password" refused.log || fail "a literal password was echoed"
bad cookie "$good" 'cookie = session=s3cr3t'
refused 'cookie.conf:2: cookie: .*\+FILE' bad/cookie.conf
! grep -qF -- 's3cr3t' refused.log || fail "a literal cookie was echoed"
bad url-password "url = http://alice:$password@127.0.0.1:$WEB_PORT/good/hdr.img"
refused 'url-password.conf:1: export "": the URL holds a password: give the URL as url = \+FILE' \
    bad/url-password.conf
! grep -qF -- "$password" refused.log || fail "a password in a URL was echoed"
bad line "$good" 'this is not a setting'
refused 'line.conf:2: not NAME = VALUE' bad/line.conf
bad section '[export]' "$good"
refused 'section.conf:1: a section is \[export NAME\]' bad/section.conf
bad no-url '[export a]' 'header = X-Nbdcurld-Test: a'
refused 'no-url.conf:1: \[export a\] has no url' bad/no-url.conf
bad global-in-section '[export a]' "$good" 'port = 10809'
refused 'global-in-section.conf:3: port applies to every export.*before the first \[export\]' \
    bad/global-in-section.conf
bad value "$good" 'connections = 999'
refused 'value.conf:2: connections= must be a number from 1 to 64' bad/value.conf
bad include "$good" 'config = other.conf'
refused 'include.conf:2: config: a configuration file cannot name another' bad/include.conf
bad flag "$good" 'insecure = yes'
refused 'flag.conf:2: insecure takes no value' bad/flag.conf
bad env 'NBDCURLD_OPTIONS="--export a=http://x/"'
refused "env.conf:1: this is nbdcurld.service's environment file" bad/env.conf
# Quotes: not closed, a stray backslash, text after the closing quote.
bad open-quote "url = \"$u/good/hdr.img"
refused 'open-quote.conf:1: the value.s quote is not closed' bad/open-quote.conf
bad escape "$good" 'description = "a\qb"'
refused 'escape.conf:2: in quotes, a backslash comes before " or \\ only' bad/escape.conf
bad after-quote "$good" 'description = "a" b'
refused 'after-quote.conf:2: something after the closing quote' bad/after-quote.conf
# What is found wrong after the file is read names its line too: a URL
# the URL checker refuses, a CA file that is not there.
bad scheme '# an export' "url = htp://127.0.0.1:$WEB_PORT/good/hdr.img"
refused '^nbdcurld: error: bad/scheme.conf:2: export "": .*URL scheme' bad/scheme.conf
bad section-scheme '[export a]' "$good" '' '[export b]' 'header = X-Nbdcurld-Test: b' \
    'url = "gopher://127.0.0.1/x"'
refused 'bad/section-scheme.conf:6: export "b": .*scheme' bad/section-scheme.conf
bad cainfo '[export c]' "$good" 'cainfo = no-such-ca.pem'
refused 'bad/cainfo.conf:2: cainfo=.*/bad/no-such-ca.pem: no such file' bad/cainfo.conf
# Limits: a line longer than MAX_CONFIG_LINE, a file larger than
# MAX_CONFIG_FILE_BYTES (comment lines that are each fine), a control byte.
bad long-line "$good" "header = X-Nbdcurld-Test: $(head -c 17000 /dev/zero | tr '\0' a)"
refused 'long-line.conf:2: longer than 16384 bytes' bad/long-line.conf
bad large "$good"
for i in $(seq 20); do
    printf '# %s\n' "$(head -c 60000 /dev/zero | tr '\0' a)"
done >> bad/large.conf
refused 'large.conf: larger than 1048576 bytes' bad/large.conf
bad control "$good" "description = a$(printf '\001')b"
refused 'control.conf:2: a control character' bad/control.conf
# Who may write it.
bad group-writable "$good"
chmod 664 bad/group-writable.conf
refused 'group-writable.conf: writable by its group \(mode 0664\).*chmod go-w' \
    bad/group-writable.conf
bad world-writable "$good"
chmod 646 bad/world-writable.conf
refused 'world-writable.conf: writable by its others' bad/world-writable.conf
if [ "$(id -u)" -eq 0 ]; then
    bad not-owned "$good"
    chown 65534 bad/not-owned.conf
    refused 'not-owned.conf: owned by uid 65534, neither root nor the user' bad/not-owned.conf
fi
refused ' nbdcurld: error: --config bad/missing.conf: No such file or directory' bad/missing.conf
mkdir bad/dir.conf
refused 'dir.conf: not a regular file' bad/dir.conf
# A FIFO is refused at once, not waited on for a writer.
mkfifo bad/fifo.conf
refused 'fifo.conf: not a regular file' bad/fifo.conf

if grep -h 'killed by signal' ./*.log; then
    fail "a process was killed by a signal"
fi
left=$(leftover_processes)
[ -z "$left" ] || fail "processes left over: $left"
