#!/usr/bin/env bash
# Statistics after a known copy through nginx: --stats-file in the text and
# Prometheus formats (each export on its own, with a name that needs
# escaping), nbdkit's --filter=stats statsfile=, and --stats and -v
# printing the report at exit.  The figures: clients read exactly the
# image's size, in reads, and the fetchers fetched at least that.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy

mkdir www
make_image www/disk.img 8M
make_image www/odd.img 1048583
start_nginx "$tmp/www"
disk_size=$(stat -c %s www/disk.img)
odd_size=$(stat -c %s www/odd.img)
# The supervisor writes the file once it is --user (when started as root).
chmod 755 "$tmp"
mkdir stats
chmod 1777 stats
check() { $PY "$srcdir/lib/stats-check.py" "$@" || fail "statistics: $*"; }

# Two exports, each copied once, then a graceful stop: its last report.
for fmt in text prometheus; do
    echo "== $fmt"
    rm -f "$tmp/nbdcurld.log"
    start_nbdcurld -r --stats --stats-file "stats/$fmt.out" --stats-format "$fmt" \
        --export "disk=$NGINX_URL/disk.img" --export "odd\"x=$NGINX_URL/odd.img"
    nbdcopy "$(nbd_uri disk)" disk-$fmt.img || fail "$fmt: the copy of disk failed"
    nbdcopy "$(nbd_uri 'odd%22x')" odd-$fmt.img || fail "$fmt: the copy of odd\"x failed"
    cmp -s disk-$fmt.img www/disk.img && cmp -s odd-$fmt.img www/odd.img ||
        fail "$fmt: a copy differs"
    kill -TERM "$NBDCURLD_PID"
    wait "$NBDCURLD_PID" || fail "$fmt: nbdcurld exited with status $?"
    [ -s "stats/$fmt.out" ] || fail "$fmt: no statistics file: $(tail -n 5 nbdcurld.log)"
    check "$fmt" "stats/$fmt.out" disk "$disk_size"
    check "$fmt" "stats/$fmt.out" 'odd"x' "$odd_size"
    # Replaced whole: no temporary file is left beside it.
    [ "$(ls stats | grep -c tmp)" = 0 ] || fail "$fmt: a temporary file is left: $(ls stats)"
    # --stats: the report in the log at exit, and a line per client.
    grep -q "nbdcurld: *total: [0-9]* ops" nbdcurld.log ||
        grep -q "  total: [0-9]* ops" nbdcurld.log || fail "$fmt: --stats printed no report"
    grep -q "read: [0-9]* ops, $disk_size bytes" nbdcurld.log ||
        fail "$fmt: the log's report lacks disk's bytes: $(cat nbdcurld.log)"
    grep -q "client .* closed, export \"disk\"" nbdcurld.log ||
        fail "$fmt: no line for a closed client: $(cat nbdcurld.log)"
done

# nbdkit's command line: --filter=stats statsfile=FILE; and -v alone
# prints the report at exit too.
echo "== nbdkit's stats filter"
"$NBDCURLD" -r -v --filter=stats statsfile=stats/nbdkit.txt statsthreshold=95 \
    "$NGINX_URL/disk.img" --run 'nbdcopy "$uri" nbdkit.img' 2>nbdkit.log ||
    fail "--filter=stats: $(tail -n 5 nbdkit.log)"
cmp -s nbdkit.img www/disk.img || fail "--filter=stats: the copy differs"
check text stats/nbdkit.txt "" "$disk_size"
grep -q "  total: [0-9]* ops" nbdkit.log || fail "-v printed no report at exit"

# statsappend=true: each report is added at the end.
echo "== statsappend"
for i in 1 2; do
    "$NBDCURLD" -r --filter=stats statsfile=stats/append.txt statsappend=true \
        "$NGINX_URL/odd.img" --run 'nbdcopy "$uri" append.img' 2>append.log ||
        fail "statsappend: $(tail -n 5 append.log)"
done
[ "$(grep -c '^nbdcurld statistics' stats/append.txt)" = 2 ] ||
    fail "statsappend: not two reports: $(cat stats/append.txt)"

# --stats-interval: the file is written while the server runs.
echo "== interval"
start_nbdcurld -r --stats-file stats/interval.txt --stats-interval 1 "$NGINX_URL/disk.img"
nbdcopy "$NBD_URI" interval.img || fail "interval: the copy failed"
eventually 5 grep -q "read: [0-9]* ops, $disk_size bytes" stats/interval.txt ||
    fail "--stats-interval 1: the file was not written with the copy's figures"
kill -TERM "$NBDCURLD_PID"
wait "$NBDCURLD_PID" || fail "interval: nbdcurld exited with status $?"

# Refused: a directory that is not there; the file's options without it.
echo "== refused"
refused_at_start nodir "not a directory" --stats-file "$tmp/none/s.txt" "$NGINX_URL/disk.img"
refused_at_start nofile "give --stats-file" --stats-interval 5 "$NGINX_URL/disk.img"
refused_at_start format "text .*or prometheus" --stats-file stats/x --stats-format=json \
    "$NGINX_URL/disk.img"
