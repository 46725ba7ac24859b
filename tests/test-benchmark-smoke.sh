#!/usr/bin/env bash
# The benchmark's smoke mode: tests/benchmark.sh --smoke runs every section
# on a 64 MiB image (the import section on a 32 MiB disk holding 4 MiB of
# files), exits 0 and prints nbdcurld's lines.  (The benchmark itself is
# not part of the suite: it takes many minutes.)
source "$(dirname "$0")/lib/functions.sh"

requires hyperfine nbdkit nbdcopy /usr/sbin/nginx

# The benchmark's temporary files go under our $tmp.
status=0
TMPDIR=$tmp "$srcdir/benchmark.sh" --smoke --out "$tmp/results.txt" \
    > "$tmp/stdout.log" 2> "$tmp/benchmark.log" || status=$?
cat "$tmp/stdout.log"
[ "$status" -eq 0 ] || fail "benchmark.sh --smoke exited with status $status"
cmp -s "$tmp/stdout.log" "$tmp/results.txt" || fail "--out differs from stdout"

# A line of the copy tables: name, then numbers.
n='[0-9]+\.[0-9]+'
grep -Eq "^nbdcurld +$n +$n +$n +[0-9]+ +1\.00 +1\.00$" "$tmp/stdout.log" ||
    fail "no nbdcurld line in the copy table"
# copy, copy1, wan and wan-cap (through tests/wan-proxy), and tls and
# https when certtool can make their certificates.
tables=4
command -v certtool >/dev/null && tables=6
[ "$(grep -Ec "^nbdcurld +$n +$n +$n +[0-9]+ " "$tmp/stdout.log")" -eq "$tables" ] ||
    fail "expected nbdcurld in $tables copy tables (copy, copy1, wan, wan-cap, tls, https)"
[ "$tables" -eq 4 ] || grep -q '^== tls: ' "$tmp/stdout.log" || fail "no tls table"
grep -q '^== wan: .*RTT +20 ms, no cap' "$tmp/stdout.log" || fail "no wan table"
grep -q '^== wan-cap: .*50 MB/s per TCP connection' "$tmp/stdout.log" || fail "no wan-cap table"
grep -Eq '^target nbdcurld >= 350 MiB/s \(2.5 x 140\): [0-9]+ MiB/s' "$tmp/stdout.log" ||
    fail "no wan-cap target line"
if [ "$tables" -eq 6 ]; then
    grep -q '^== https: ' "$tmp/stdout.log" || fail "no https table"
    grep -Eq "^curl -o /dev/null +$n " "$tmp/stdout.log" || fail "no curl line in the https table"
    grep -Eq '^nbdcurld CPU per GiB over https \(all its processes; median of [0-9]+ (copy|copies), [0-9.]+ to [0-9.]+\): [0-9.]+ s' \
        "$tmp/stdout.log" || fail "no https CPU line"
fi
grep -Eq "^nbdkit curl +$n " "$tmp/stdout.log" || fail "no nbdkit curl line"
if fio --enghelp 2>/dev/null | grep -qw nbd; then
    grep -Eq '^nbdcurld +[0-9]+ +[0-9]+ +1\.00 +1\.00$' "$tmp/stdout.log" ||
        fail "no nbdcurld line in the random-read table"
    grep -Eq '^random-read runs: 2 finished, 0 failed' "$tmp/stdout.log" ||
        fail "random-read runs in the stall section failed"
fi
if fio --enghelp 2>/dev/null | grep -qw nbd; then
    # The readahead table: MiB/s for 4 KiB, 64 KiB and 1 MiB reads.
    grep -Eq "^nbdcurld +$n +$n +$n +1\.00 +1\.00 +1\.00$" "$tmp/stdout.log" ||
        fail "no nbdcurld line in the readahead table"
fi
if fio --enghelp 2>/dev/null | grep -qw nbd; then
    # The latency table: one line per case and server, p50 and p99 in us.
    for c in '4 KiB seq' '64 KiB seq' '256 KiB seq' 'mixed: 1 MiB seq' \
             'mixed: 4 KiB rand'; do
        grep -Eq "^$c +nbdcurld +[0-9]+ +$n +[0-9]+ +[0-9]+ *$" "$tmp/stdout.log" ||
            fail "no nbdcurld line for $c in the latency table"
    done
    grep -Eq '^target 256 KiB seq QD16 p99 <= nbdkit curl: [0-9]+ vs [0-9]+ us' \
        "$tmp/stdout.log" || fail "no latency target line"
fi
# The import table: a row per link, the targets, the second import and
# the bytes fetched per byte read.
if command -v qemu-img >/dev/null && [ -x "$(command -v mkfs.ext4 || echo /usr/sbin/mkfs.ext4)" ]; then
    grep -q '^== import: qemu-img convert -f qcow2 -O raw of a compressed qcow2 ' \
        "$tmp/stdout.log" || fail "no import table"
    for link in 'local +qemu-img convert of a local copy' 'LAN +nbdcurld' \
                'WAN +nbdcurld' 'WAN capped +nbdcurld' 'raw, WAN capped +nbdcurld'; do
        grep -Eq "^$link +$n +1 " "$tmp/stdout.log" || fail "no import row: $link"
    done
    grep -Eq '^target WAN capped: nbdcurld <= 0.5 x download-then-convert: [0-9.]+ ' \
        "$tmp/stdout.log" || fail "no import target line"
    grep -Eq '^two imports through one nbdcurld .*: first import [0-9.]+ s, .*; second import [0-9.]+ s' \
        "$tmp/stdout.log" || fail "no second-import line"
    for what in 'qemu-img import' 'nbdcopy'; do
        grep -Eq "^bytes fetched per byte read, $what: [0-9.]+ " "$tmp/stdout.log" ||
            fail "no bytes-per-byte line for $what"
    done
fi
grep -Eq '^nbdcurld peak PSS, all processes \([0-9]+\): +[0-9.]+ MiB' "$tmp/stdout.log" ||
    fail "no memory line for nbdcurld"
grep -Eq '^copies: 2 finished, 0 failed, 0 timed out' "$tmp/stdout.log" ||
    fail "copies in the stall section failed"
grep -q '^== machine ==' "$tmp/stdout.log" || fail "no machine line"

# It cleaned up after itself.
[ -z "$(ls "$tmp" | grep nbdcurld-bench)" ] || fail "temporary directory left behind"
[ -z "$(leftover_processes)" ] || fail "processes left behind: $(leftover_processes)"
exit 0
