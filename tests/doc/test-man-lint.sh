#!/usr/bin/env bash
# Every page in man/ renders clean: no warning from groff (typeset, and
# on a terminal 80 columns wide, as man(1) shows it) nor from mandoc's
# lint, no rendered line wider than 80 columns, and quotes that close
# where they open.
source "$(dirname "$0")/../lib/functions.sh"
requires groff mandoc col

mandir=$(cd "$srcdir/../man" && pwd)
pages=("$mandir"/*.[1-9])
[ -e "${pages[0]}" ] || fail "no manual page in $mandir"

# man(1) on an 80-column terminal typesets 78 columns (MANWIDTH=80).
width=80
line_length=$((width - 2))

problems=0
problem() { echo "$page_name: $*" >&2; problems=$((problems + 1)); }

# check_output WHAT FILE: FILE, one tool's messages, must be empty.
check_output() {
    [ -s "$2" ] || return 0
    problem "$1:"
    sed 's/^/    /' "$2" >&2
}

# check_width RENDERER FILE: no line of FILE wider than $width characters.
check_width() {
    $PY - "$width" "$2" <<'PY' > width.txt
import sys
width, path = int(sys.argv[1]), sys.argv[2]
for n, line in enumerate(open(path, encoding="utf-8"), 1):
    line = line.rstrip("\n")
    if len(line) > width:
        print(f"line {n} has {len(line)} columns: {line.strip()[:70]}")
PY
    check_output "$1 at $width columns" width.txt
}

# check_quotes RENDERER FILE: in each paragraph of FILE, every opening
# quote is closed, no quote opens inside another of its kind, and
# parentheses balance.  An enclosure macro (Ql, Dq, Pq) that swallows the
# rest of its line shows up here.
check_quotes() {
    $PY - "$2" <<'PY' > quotes.txt
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
pairs = (("\u2018", "\u2019", 1), ("\u201c", "\u201d", 1), ("(", ")", 3))
for para in re.split(r"\n\s*\n", text):
    for opening, closing, deepest in pairs:
        depth, bad = 0, False
        for ch in para:
            if ch == opening:
                depth += 1
                bad = bad or depth > deepest
            elif ch == closing:
                depth -= 1
                bad = bad or depth < 0
        if bad or depth:
            words = " ".join(para.split())
            print(f"unbalanced {opening}{closing} in: {words[:160]}")
            break
PY
    check_output "$1: quotes" quotes.txt
}

for page in "${pages[@]}"; do
    page_name=man/$(basename "$page")

    # Typeset: groff's own warnings (-ww: every kind).
    groff -ww -z -t -man "$page" > /dev/null 2> groff-z.txt
    check_output "groff -ww -z -t -man" groff-z.txt

    # On a terminal: lines that cannot be broken, tables too wide.
    LC_ALL=C.UTF-8 groff -ww -t -man -Tutf8 -rLL=${line_length}n \
        -rLT=${line_length}n "$page" 2> groff-tty.txt | col -bx > groff.txt
    check_output "groff -ww -t -man -Tutf8 (${width} columns)" groff-tty.txt
    check_width groff groff.txt
    check_quotes groff groff.txt

    # mandoc's lint, every level down to style; only the messages that
    # depend on which other pages this machine has installed are left out
    # (an outdated mandoc.db, a page referenced but not installed).
    mandoc -Tlint -W style "$page" 2>&1 |
        grep -v -e 'outdated mandoc.db' -e 'referenced manual not found' \
            > mandoc-lint.txt || true
    check_output "mandoc -Tlint" mandoc-lint.txt

    LC_ALL=C.UTF-8 mandoc -Tutf8 -O width=$line_length "$page" \
        2> mandoc-tty.txt | col -bx > mandoc.txt
    check_output "mandoc -Tutf8" mandoc-tty.txt
    check_width mandoc mandoc.txt
    check_quotes mandoc mandoc.txt
done

[ "$problems" -eq 0 ] || fail "$problems problems in the manual pages (above)"
echo "${#pages[@]} pages clean"
