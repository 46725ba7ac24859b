#!/usr/bin/env bash
# README.md matches the tree: its Layout names folders that exist, and
# every folder at the top, under src/ and under tests/; the Quick start
# opens with the two commands CI and newcomers run; and it holds no
# development history (issue numbers, commit hashes), which belongs in
# commit messages.
source "$(dirname "$0")/../lib/functions.sh"

top=$(cd "$srcdir/.." && pwd)
[ -f "$top/README.md" ] || fail "no README.md in $top"

# The tree's folders, two levels deep: those git tracks in a checkout,
# else those on disk but build directories.
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$top" ls-files | awk -F/ '
        NF > 1 { print $1 "/" } NF > 2 { print $1 "/" $2 "/" }' | sort -u
else
    (cd "$top" && find . -mindepth 1 -maxdepth 2 -type d \
        -not -path './build*' -not -path './.git*' -printf '%P/\n')
fi > folders.txt

$PY - "$top/README.md" folders.txt "$top" <<'PY'
import os, re, sys

readme, folders_file, top = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(readme, encoding="utf-8").read()
tree = set(open(folders_file).read().split())
problems = []

def section(title):
    m = re.search(r"^## " + re.escape(title) + r"\n(.*?)(?=^## |\Z)", text,
                  re.M | re.S)
    if not m:
        problems.append(f"no '## {title}' section")
        return ""
    return m.group(1)

def first_block(body):
    m = re.search(r"^```[^\n]*\n(.*?)^```", body, re.M | re.S)
    return m.group(1).splitlines() if m else None

# Quick start: exactly the two commands.
block = first_block(section("Quick start"))
want = ["tests/quickstart.sh demo", "tests/quickstart.sh test"]
if block != want:
    problems.append(f"Quick start's first code block is {block}, not {want}")

# Layout: a folder is a first word ending in "/", at the start of a line
# (top level) or indented (inside the last top-level folder).
named = set()
parent = None
for line in first_block(section("Layout")) or []:
    m = re.match(r"^( *)(\S+/)(\s|$)", line)
    if not m:
        continue
    if not m.group(1):
        parent = m.group(2)
        named.add(parent)
    elif parent:
        named.add(parent + m.group(2))
if not named:
    problems.append("Layout names no folder")
for folder in sorted(named):
    if not os.path.isdir(os.path.join(top, folder)):
        problems.append(f"Layout names {folder}, which does not exist")
for folder in sorted(tree):
    depth = folder.count("/")
    inside = folder.split("/")[0] + "/"
    if depth == 1 or inside in ("src/", "tests/"):
        if folder not in named:
            problems.append(f"{folder} is not in the Layout")

# No history: issue numbers and commit hashes belong in commit messages.
for n, line in enumerate(text.splitlines(), 1):
    if re.search(r"\bissues? #?\d+", line, re.I):
        problems.append(f"line {n} names an issue: {line.strip()}")
    for word in re.findall(r"\b[0-9a-f]{7,40}\b", line):
        if re.search(r"[a-f]", word) and re.search(r"\d", word):
            problems.append(f"line {n} names a commit ({word}): {line.strip()}")

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
status=$?
[ "$status" -eq 0 ] || fail "README.md does not match the tree (above)"
echo "README.md matches the tree"
