#!/usr/bin/env bash
# The bash completion (bash-completion/nbdcurld), sourced into bash
# without the bash-completion package: options, their arguments and the
# curl keys as nbdcurld --help gives them; and every long option of the
# program is in --help, so that completion, built from it, misses none.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
script=$srcdir/../bash-completion/nbdcurld
[ -f "$script" ] || fail "no $script"

# complete WORDS...: the completions of the last word, one a line, sorted.
complete_words() {
    bash -c '
        source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        _nbdcurld
        printf "%s\n" "${COMPREPLY[@]}" | sort' complete "$script" "$NBDCURLD" "$@"
}
expect() {
    local want=$1 got
    shift
    got=$(complete_words "$@" | tr '\n' ' ' | sed 's/ $//')
    [ "$got" = "$want" ] || fail "nbdcurld $*<TAB>: \"$got\", not \"$want\""
    echo "nbdcurld $*<TAB>: $got"
}

expect "--cache --cache-dir --cainfo --capath" --ca
expect "--tls --tls-certificates --tls-priority --tls-psk --tls-verify-peer" --tls
expect "off on require" --tls ""
expect "require" --tls=re
expect "ssl-cipher-list= ssl-version= sslverify=" https://example.com/disk.img ssl
expect "retries= retry-delay= retry-exponential=" --export a=https://example.com/a retr
expect "sslverify=false sslverify=true" sslverify=
mkdir -p pki.d pkg
: > pki.file
expect "pki.d" --capath pki
expect "pki.d pki.file" --cainfo pki
expect "pki.d pki.file" --tls-psk pki
expect "+pki.d +pki.file" --auth-password +pki
expect "" --auth-password ""
expect "root" --user roo
expect "--verbose --version" -r --ver

# Every long option in the program's table is in --help, but for the
# aliases of one that is.
aliases=" read-only no-fork ipv4-only ipv6-only "
help=$("$NBDCURLD" --help)
options=$(sed -n '/^const struct option long_options\[\]/,/^};/p' \
    "$srcdir/../src/supervisor/options.c" | sed -n 's/^ *{ "\([a-z0-9-]*\)".*/\1/p')
[ -n "$options" ] || fail "no long options read from options.c"
for o in $options; do
    [[ $aliases == *" $o "* ]] && continue
    grep -qE -- "(^|[ ,])--$o([ =]|\$)" <<< "$help" || fail "--$o is not in --help"
done
echo ok
