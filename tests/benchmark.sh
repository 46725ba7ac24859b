#!/usr/bin/env bash
# benchmark.sh: time nbdcurld against other NBD servers that read over HTTP.
#
# It makes a random image (or takes one with --image), serves it with a
# private nginx on 127.0.0.1 and measures, in one run:
#
#   copy     nbdcopy URI null: (4 connections where the server allows it)
#            through nbdcurld -r, nbdkit -r curl, nbdkit -r curl with the
#            multi-conn filter, qemu-nbd with the curl driver, and the
#            ceilings curl -o /dev/null and nbdkit -r file, timed by
#            hyperfine (warm-up, several runs, medians)
#   copy1    the same with nbdcopy --connections=1
#   tls      nbdcopy over NBD TLS (X.509, --tls=require) through nbdcurld,
#            nbdkit curl and nbdkit file, certificates made with certtool
#   wan, wan-cap  nbdcopy of a 512 MiB image (--wan-size) through
#            tests/wan-proxy in front of the same nginx: 20 ms added to
#            the round trip, without and with a 50 MB/s cap per TCP
#            connection (as CDNs and object stores): nbdcurld, nbdkit
#            curl with and without the multi-conn filter (and its
#            connections= where nbdkit has it, 1.34 on), qemu-nbd curl
#   https    nbdcopy over https (a second nginx, a certificate made at run
#            time) through nbdcurld against one curl -o /dev/null stream,
#            and the CPU seconds per GiB of all nbdcurld processes
#   random   4 KiB random reads at queue depth 32 with fio's nbd engine:
#            IOPS and 99th percentile completion latency
#   import   qemu-img convert -f qcow2 -O raw of a compressed qcow2, as a
#            cloud image's importer does it (one small read after the
#            other, each near where the last ended): an ext4 disk of
#            --import-size made with mkfs.ext4 -d from --import-fill of
#            this machine's files (/usr/lib, /usr/share), compressed with
#            qemu-img convert -c, kept in --import-cache for later runs;
#            timed on the LAN and through tests/wan-proxy without and
#            with the cap, through nbdcurld, nbdkit curl plain and with
#            its cache filter (cache-on-read=true, as virt-v2v), qemu-img's
#            own curl driver, curl -o to a scratch file then a local
#            convert, and the local convert (the ceiling), with ratios to
#            the local convert and to download-then-convert; the disk
#            itself as raw (qemu-img convert -f raw) through the capped
#            link, nbdcurld against nbdkit; two floors measured in the
#            same run, printed beside the targets they bound: nbdkit's
#            file plugin over the local copy (what any NBD server costs
#            a local convert) and 16 parallel curl range requests for
#            the whole raw disk through the capped link, no NBD (what
#            the link allows); two imports through one
#            nbdcurld with --cache of the image's size; and the bytes
#            nginx sent per byte the client read, for an import, fio's
#            4 KiB random reads and an nbdcopy.  The local convert, the
#            nbdkit file floor and nbdcurld on the LAN run in rounds
#            (each once a round, --import-runs rounds), so that the
#            machine's drift moves all three alike.  The WAN imports run
#            once unless --import-wan-runs says otherwise.
#   readahead  sequential reads at queue depth 1 (one read after the
#            other, as dd or a booting VM) with fio's nbd engine, 4 KiB,
#            64 KiB and 1 MiB requests, one connection: MiB/s through
#            nbdcurld (readahead built in), nbdkit curl with its readahead
#            filter, and nbdkit curl without it
#   latency  completion latency (IOPS, MiB/s, p50 and p99) of sequential
#            reads at queue depth 16 on one connection, 4 KiB, 64 KiB and
#            256 KiB, and of 4 KiB random reads while 1 MiB sequential
#            reads run on a second connection: nbdcurld and nbdkit curl,
#            with fio's nbd engine
#   memory   proportional set size (PSS) of all nbdcurld processes during
#            a copy against nbdkit's, the front-end's with many clients
#            connected, and the front-end after 1 and after many copies
#   stall    many full copies and random-read runs in a loop against one
#            server, each with a timeout: every one must finish
#
# It is a benchmark, not a test: nothing is enforced except that nbdcurld
# works.  Exit status 0 even when a peer is missing or fails; 1 when an
# nbdcurld copy or read run failed or stalled; 2 on usage errors.  Peers
# that are not installed are named and skipped (--install installs them
# with apt-get).  The results go to stdout as plain text; progress and
# hyperfine's own output go to stderr.
#
# Notes on the peers:
# - qemu-nbd (7.2) runs in the background on a Unix socket (-t -e 8) and
#   only nbdcopy is timed.  Its curl driver hangs for good when many
#   requests are in flight (nbdcopy's default 4 x 64, fio's QD32, and
#   even one connection with its default readahead), so it runs with
#   readahead 0 and nbdcopy gets --requests=8 for it; a run that still
#   hangs is stopped by a timeout and reported as failed.
# - nbdkit and nbdcurld are started by nbdcopy's side of the timing
#   (--run), so their start-up is included (a few milliseconds).
# - qemu-img's own curl driver (7.2) hangs in most imports with its
#   default of 8 coroutines, so its import row runs with -m 1 (one);
#   qemu-img keeps one read of a compressed qcow2 in flight most of the
#   time anyway.
# - NBDKIT=PATH puts that nbdkit (a newer build's in-place wrapper) in
#   every section instead of the one on PATH.
#
# Runs from any directory; uses build/src/nbdcurld or $NBDCURLD.
set -euo pipefail

srcdir=$(cd "$(dirname "$0")" && pwd)
# What every private nginx shares (nginx_launch, free_port), and stop_pid.
source "$srcdir/lib/nginx.sh"
root=$(cd "$srcdir/.." && pwd)
PY=/usr/bin/python3

usage() {
    cat <<EOF
usage: $0 [OPTIONS]
  --size SIZE      image size (default 2G; K, M, G suffixes are powers of 2)
  --image PATH     serve this existing image instead of making one
  --runs N         timed runs per command (default 5)
  --warmup N       warm-up runs per command (default 1)
  --random-time S  seconds per fio run (default 10)
  --only LIST      comma-separated sections: copy,copy1,tls,wan,https,random,
                   import,readahead,latency,memory,stall
                   (default: all)
  --wan-size SIZE  image size of the wan sections (default 512M; 16M
                   with --smoke)
  --wan-rtt MS     milliseconds added to the round trip (default 20)
  --wan-cap MBPS   the per-connection cap of wan-cap, 10^6 bytes/s
                   (default 50)
  --import-size SIZE  the import section's ext4 disk (default 4G)
  --import-fill SIZE  bytes of this machine's files (/usr/lib, /usr/share)
                   copied onto it (default 2G)
  --import-runs N  timed runs of the local and LAN imports (default: --runs)
  --import-wan-runs N  timed runs of the imports through tests/wan-proxy
                   and of the raw-image rows (default 1)
  --import-cache DIR  where the import section keeps the disks it makes,
                   for later runs (default \${TMPDIR:-/var/tmp}/nbdcurld-import-images)
  --smoke          a quick check: 64M image, 1 run, no warm-up, fio for 1 s,
                   a 32M import disk holding 4M of files (through the
                   proxy only nbdcurld's import and the download), 4
                   clients in the memory section, 2 copies and 2 random
                   runs in the stall section
  --out FILE       also write the results to FILE
  --install        install missing tools (hyperfine, fio, nbdkit,
                   qemu-block-extra, ...) with apt-get first
  -h, --help       this text
The binary is \$NBDCURLD, or build/src/nbdcurld; the proxy \$WAN_PROXY, or
build/tests/wan-proxy; nbdkit \$NBDKIT (a newer build, say), or PATH's.
EOF
}

die() { printf 'benchmark: error: %s\n' "$*" >&2; exit 2; }
# Progress on stderr, with the seconds since the start: where a long run
# spends its time.
say() { printf '==> [%4d s] %s\n' "$SECONDS" "$*" >&2; }

# ---- options ----

size="" image="" runs="" warmup="" random_time="" only="" smoke=0 out=""
install=0 wan_size="" wan_rtt=20 wan_cap=50
import_size="" import_fill="" import_runs="" import_wan_runs=1 import_cache=""
while [ $# -gt 0 ]; do
    case $1 in
        --size) size=${2:?--size needs a value}; shift ;;
        --size=*) size=${1#*=} ;;
        --image) image=${2:?--image needs a value}; shift ;;
        --image=*) image=${1#*=} ;;
        --runs) runs=${2:?--runs needs a value}; shift ;;
        --runs=*) runs=${1#*=} ;;
        --warmup) warmup=${2:?--warmup needs a value}; shift ;;
        --warmup=*) warmup=${1#*=} ;;
        --random-time) random_time=${2:?--random-time needs a value}; shift ;;
        --random-time=*) random_time=${1#*=} ;;
        --only) only=${2:?--only needs a value}; shift ;;
        --only=*) only=${1#*=} ;;
        --out) out=${2:?--out needs a value}; shift ;;
        --out=*) out=${1#*=} ;;
        --wan-size) wan_size=${2:?--wan-size needs a value}; shift ;;
        --wan-size=*) wan_size=${1#*=} ;;
        --wan-rtt) wan_rtt=${2:?--wan-rtt needs a value}; shift ;;
        --wan-rtt=*) wan_rtt=${1#*=} ;;
        --wan-cap) wan_cap=${2:?--wan-cap needs a value}; shift ;;
        --wan-cap=*) wan_cap=${1#*=} ;;
        --import-size) import_size=${2:?--import-size needs a value}; shift ;;
        --import-size=*) import_size=${1#*=} ;;
        --import-fill) import_fill=${2:?--import-fill needs a value}; shift ;;
        --import-fill=*) import_fill=${1#*=} ;;
        --import-runs) import_runs=${2:?--import-runs needs a value}; shift ;;
        --import-runs=*) import_runs=${1#*=} ;;
        --import-wan-runs) import_wan_runs=${2:?--import-wan-runs needs a value}; shift ;;
        --import-wan-runs=*) import_wan_runs=${1#*=} ;;
        --import-cache) import_cache=${2:?--import-cache needs a value}; shift ;;
        --import-cache=*) import_cache=${1#*=} ;;
        --smoke) smoke=1 ;;
        --install) install=1 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown option: $1" ;;
    esac
    shift
done

if [ "$smoke" -eq 1 ]; then
    : "${size:=64M}" "${runs:=1}" "${warmup:=0}" "${random_time:=1}"
    : "${import_size:=32M}" "${import_fill:=4M}"
    mem_clients=4 growth_copies=2 stall_copies=2 stall_random=2
else
    : "${size:=2G}" "${runs:=5}" "${warmup:=1}" "${random_time:=10}"
    : "${import_size:=4G}" "${import_fill:=2G}"
    mem_clients=64 growth_copies=10 stall_copies=50 stall_random=20
fi
: "${import_runs:=$runs}"
for n in "$runs" "$warmup" "$random_time" "$wan_rtt" "$wan_cap" \
         "$import_runs" "$import_wan_runs"; do
    [[ $n =~ ^[0-9]+$ ]] || die "not a number: $n"
done
[ "$runs" -ge 1 ] || die "--runs must be at least 1"
[ "$import_runs" -ge 1 ] && [ "$import_wan_runs" -ge 1 ] ||
    die "--import-runs and --import-wan-runs must be at least 1"
[ "$random_time" -ge 1 ] || die "--random-time must be at least 1"
: "${only:=copy,copy1,tls,wan,https,random,import,readahead,latency,memory,stall}"
for s in ${only//,/ }; do
    case $s in copy|copy1|tls|wan|import|https|random|readahead|latency|memory|stall) ;;
        *) die "unknown section: $s" ;;
    esac
done
want() { [[ ",$only," == *",$1,"* ]]; }

if [ -z "$image" ]; then
    size_bytes=$(numfmt --from=iec "${size%B}" 2>/dev/null) ||
        die "bad size: $size"
    [ "$size_bytes" -ge 1048576 ] || die "--size must be at least 1M"
else
    [ -f "$image" ] && [ -r "$image" ] || die "cannot read image $image"
    image=$(realpath "$image")
    size_bytes=$(stat -c %s "$image")
fi
[ -z "$out" ] || : > "$out" || die "cannot write $out"
if [ -z "$wan_size" ]; then
    # --smoke: 16 MiB, a second or two for the slowest peer through the
    # proxy's 20 ms.
    if [ "$smoke" -eq 1 ]; then wan_bytes=16777216; else wan_bytes=536870912; fi
else
    wan_bytes=$(numfmt --from=iec "${wan_size%B}" 2>/dev/null) ||
        die "bad size: $wan_size"
    [ "$wan_bytes" -ge 1048576 ] || die "--wan-size must be at least 1M"
fi
wan_size=$(( wan_bytes / 1048576 ))M
import_bytes=$(numfmt --from=iec "${import_size%B}" 2>/dev/null) ||
    die "bad size: $import_size"
fill_bytes=$(numfmt --from=iec "${import_fill%B}" 2>/dev/null) ||
    die "bad size: $import_fill"
[ "$import_bytes" -ge 16777216 ] || die "--import-size must be at least 16M"
# ext4's own metadata (inode tables, journal) takes the rest.
[ $(( fill_bytes * 10 )) -le $(( import_bytes * 7 )) ] ||
    die "--import-fill must be at most 70% of --import-size"
: "${import_cache:=${TMPDIR:-/var/tmp}/nbdcurld-import-images}"
import_cache=$(realpath -m "$import_cache")
WAN_PROXY=${WAN_PROXY:-$root/build/tests/wan-proxy}

NBDCURLD=${NBDCURLD:-$root/build/src/nbdcurld}
[ -x "$NBDCURLD" ] ||
    die "nbdcurld not found at $NBDCURLD (ninja -C build, or set NBDCURLD)"
NBDCURLD=$(realpath "$NBDCURLD")

# ---- temporary directory, processes, cleanup ----

tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/nbdcurld-bench.XXXXXX")
bg_pids=()
nginx_pid=""
ca_dir=""
import_parts=()    # the import section's half-made disks

cleanup() {
    local status=$? p
    set +e
    trap '' HUP INT PIPE TERM
    for p in "${bg_pids[@]}"; do
        stop_pid "$p"
    done
    [ -z "$nginx_pid" ] || stop_pid "$nginx_pid"
    cd /
    rm -rf "$tmp" "${import_parts[@]}"
    [ -z "$ca_dir" ] || rm -rf "$ca_dir"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 141' PIPE
trap 'exit 143' TERM
cd "$tmp"

# NBDKIT=PATH: every section compares against that nbdkit (a newer
# build's in-place wrapper, say) instead of the one on PATH; hyperfine's
# commands find it on PATH too.
if [ -n "${NBDKIT:-}" ]; then
    [ -x "$NBDKIT" ] || die "NBDKIT=$NBDKIT is not an executable"
    mkdir "$tmp/bin"
    ln -s "$(realpath "$NBDKIT")" "$tmp/bin/nbdkit"
    export PATH="$tmp/bin:$PATH"
fi

# ---- tools ----

qemu_curl_so() {
    local f
    for f in /usr/lib/*/qemu/block-curl.so /usr/lib64/qemu/block-curl.so \
             /usr/lib/qemu/block-curl.so; do
        [ -e "$f" ] && return 0
    done
    return 1
}

if [ "$install" -eq 1 ]; then
    pkgs=(hyperfine fio nbdkit qemu-utils qemu-block-extra libnbd-bin gnutls-bin
          python3-libnbd nginx-light curl openssl procps e2fsprogs)
    missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        sudo=()
        [ "$(id -u)" -eq 0 ] || sudo=(sudo)
        say "installing: ${missing[*]}"
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update >&2
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y "${missing[@]}" >&2
    fi
fi

for t in nbdcopy /usr/sbin/nginx; do
    command -v "$t" >/dev/null 2>&1 ||
        die "$t is needed (packages libnbd-bin, nginx-light; or --install)"
done
have() { command -v "$1" >/dev/null 2>&1; }
has_hyperfine=0 has_fio=0 has_nbdkit=0 has_multiconn=0 has_nbdkit_ra=0 has_qemu=0
has_curl=0 has_pynbd=0 has_nbdkit_conns=0 has_nbdkit_cache=0 has_import=0
has_qemu_img_curl=0 nbdkit_ver=""
missing_tools=()
if have hyperfine; then has_hyperfine=1
else missing_tools+=("hyperfine (copy, copy1)"); fi
if have fio && fio --enghelp 2>/dev/null | grep -qw nbd; then has_fio=1
else missing_tools+=("fio with the nbd engine (random, readahead, latency, stall)"); fi
if have nbdkit && nbdkit curl --dump-plugin >/dev/null 2>&1; then
    has_nbdkit=1
    nbdkit --filter=multi-conn curl --dump-plugin >/dev/null 2>&1 &&
        has_multiconn=1
    [ "$has_multiconn" -eq 1 ] || missing_tools+=("nbdkit's multi-conn filter")
    nbdkit --filter=readahead curl --dump-plugin >/dev/null 2>&1 &&
        has_nbdkit_ra=1
    [ "$has_nbdkit_ra" -eq 1 ] || missing_tools+=("nbdkit's readahead filter")
    # connections= (nbdkit 1.34 on): one curl handle pool for all clients.
    nbdkit curl --help 2>&1 | grep -q 'connections=' && has_nbdkit_conns=1
    nbdkit_ver=$(nbdkit --version | awk '{ print $2 }')
    nbdkit --filter=cache curl --dump-plugin >/dev/null 2>&1 &&
        has_nbdkit_cache=1
    [ "$has_nbdkit_cache" -eq 1 ] || missing_tools+=("nbdkit's cache filter (import)")
else missing_tools+=("nbdkit with its curl plugin"); fi
if have qemu-nbd && qemu_curl_so; then has_qemu=1
else missing_tools+=("qemu-nbd with the curl driver (qemu-utils, qemu-block-extra)"); fi
if have curl; then has_curl=1; else missing_tools+=("curl"); fi
# mkfs.ext4 lives in /usr/sbin, which a user's PATH may leave out.
MKFS_EXT4=$(command -v mkfs.ext4 || echo /usr/sbin/mkfs.ext4)
if [ -x "$MKFS_EXT4" ] && have qemu-img; then has_import=1
else missing_tools+=("mkfs.ext4 and qemu-img (import: e2fsprogs, qemu-utils)"); fi
if have qemu-img && qemu_curl_so; then has_qemu_img_curl=1
else missing_tools+=("qemu-img's curl driver (import: qemu-block-extra)"); fi
if "$PY" -c 'import nbd' 2>/dev/null; then has_pynbd=1
else missing_tools+=("python3-libnbd (memory: many clients)"); fi
for t in "${missing_tools[@]}"; do
    say "missing, skipped: $t"
done

# Results: printed as each section ends, and kept for --out.
# report LINE...: print each line.
report() {
    printf '%s\n' "$@"
    [ -z "$out" ] || printf '%s\n' "$@" >> "$out"
}
report_file() {
    cat "$1"
    [ -z "$out" ] || cat "$1" >> "$out"
}

broken=()    # what failed in nbdcurld (the exit status)

# ---- image and nginx ----

mkdir "$tmp/www"
if [ -n "$image" ]; then
    ln -s "$image" "$tmp/www/disk.img"
    image_desc="$image ($size_bytes bytes)"
else
    image=$tmp/www/disk.img
    say "making a $size random image in $tmp"
    if have openssl; then
        # AES-CTR of zeroes: random-looking and much faster than urandom.
        { openssl enc -aes-128-ctr -nosalt -pbkdf2 \
              -pass "pass:$RANDOM$RANDOM" -in /dev/zero 2>/dev/null || true
        } | head -c "$size_bytes" > "$image"
    else
        head -c "$size_bytes" /dev/urandom > "$image"
    fi
    [ "$(stat -c %s "$image")" -eq "$size_bytes" ] || die "could not make the image"
    image_desc="random data, $size_bytes bytes"
fi
size_mib=$(( size_bytes / 1048576 ))

# The benchmark's nginx: two workers, keep-alive for the whole run.
# Under /counted/ the same files are served with every request's body
# bytes logged to bytes.log (fetched_bytes); elsewhere nothing is logged.
bench_nginx_conf() {
    cat <<EOF
$(nginx_head "$tmp" 2 1024)
http {
$(nginx_http_conf "$tmp")
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    keepalive_timeout 300s;
    log_format body_bytes '\$body_bytes_sent';
    server {
        listen 127.0.0.1:$1;
        root $tmp/www;
        location /counted/ {
            alias $tmp/www/;
            access_log $tmp/bytes.log body_bytes;
        }
    }
}
EOF
}
nginx_launch "$tmp" bench_nginx_conf ||
    die "nginx did not start: $(tail -n 5 "$tmp/nginx-error.log" 2>/dev/null)"
nginx_pid=$NGINX_PID
# The https section's nginx_launch sets NGINX_PORT again.
bench_port=$NGINX_PORT
URL=http://127.0.0.1:$bench_port/disk.img
say "nginx serves $URL"
say "warming the page cache"
cat "$image" > /dev/null

# ---- helpers ----

# Copies get this long before they count as stalled: 2 minutes plus
# 30 s per GiB (nbdcopy moves several GiB/s here).
copy_timeout=$(( 120 + 30 * size_bytes / 1073741824 ))
# The smoke image takes well under a second: a peer that hangs (qemu's
# curl driver does, now and then) must not eat the smoke test's time.
[ "$smoke" -eq 0 ] || copy_timeout=10
random_timeout=$(( random_time + 30 ))
# An import over a capped link takes minutes: 5 minutes plus 2 per GiB
# of disk; the smoke test's tiny disk, half a minute.
import_timeout=$(( 300 + 120 * import_bytes / 1073741824 ))
[ "$smoke" -eq 0 ] || import_timeout=30

# start_bg NAME SOCKET COMMAND...: run a server in the background until
# SOCKET appears; sets bg_pid.  Its output goes to NAME.log.
start_bg() {
    local name=$1 sock=$2 i
    shift 2
    rm -f "$sock"
    "$@" </dev/null >"$tmp/$name.log" 2>&1 &
    bg_pid=$!
    bg_pids+=("$bg_pid")
    for i in $(seq 100); do
        [ -S "$sock" ] && return 0
        kill -0 "$bg_pid" 2>/dev/null || break
        sleep 0.1
    done
    say "$name did not start: $(tail -n 3 "$tmp/$name.log")"
    stop_bg "$bg_pid"
    return 1
}
stop_bg() {
    local pid=$1 p keep=()
    stop_pid "$pid"
    for p in "${bg_pids[@]}"; do
        [ "$p" = "$pid" ] || keep+=("$p")
    done
    bg_pids=("${keep[@]}")
}

# Background servers, each on its own Unix socket; sets bg_pid and buri.
# (nbdcurld, started as root, runs its children as nobody: the sockets
# live in $tmp, which is ours; nbdcurld creates them as the supervisor.)
serve_nbdcurld() {
    start_bg nbdcurld "$tmp/nbdcurld.sock" \
        "$NBDCURLD" -f -r "$@" -U "$tmp/nbdcurld.sock" "$URL" &&
        buri="nbd+unix:///?socket=$tmp/nbdcurld.sock"
}
serve_nbdkit() {
    start_bg nbdkit "$tmp/nbdkit.sock" \
        nbdkit -f -r -U "$tmp/nbdkit.sock" curl "$URL" &&
        buri="nbd+unix:///?socket=$tmp/nbdkit.sock"
}
serve_nbdkit_mc() {
    start_bg nbdkit-mc "$tmp/nbdkit-mc.sock" \
        nbdkit -f -r -U "$tmp/nbdkit-mc.sock" --filter=multi-conn \
        curl "$URL" multi-conn-mode=unsafe &&
        buri="nbd+unix:///?socket=$tmp/nbdkit-mc.sock"
}
serve_nbdkit_ra() {
    start_bg nbdkit-ra "$tmp/nbdkit-ra.sock" \
        nbdkit -f -r -U "$tmp/nbdkit-ra.sock" --filter=readahead curl "$URL" &&
        buri="nbd+unix:///?socket=$tmp/nbdkit-ra.sock"
}
serve_qemu() {
    start_bg qemu-nbd "$tmp/qemu.sock" \
        qemu-nbd -t -r -f raw -e 8 -k "$tmp/qemu.sock" \
        "json:{\"file.driver\":\"http\",\"file.url\":\"$URL\",\"file.readahead\":0}" &&
        buri="nbd+unix:///?socket=$tmp/qemu.sock"
}
serve_file() {
    start_bg nbdkit-file "$tmp/file.sock" \
        nbdkit -f -r -U "$tmp/file.sock" file "$image" &&
        buri="nbd+unix:///?socket=$tmp/file.sock"
}

# The python helpers: memory sampling and many clients.
cat > "$tmp/mem.py" <<'EOF'
# mem.py sample ROOT STOPFILE OUTFILE | once ROOT
# Sum PSS and RSS (KiB) over ROOT and all its descendants, and the PSS of
# shared memory (nbdcurld's data areas); "sample" keeps the peaks, every
# 0.2 s, until STOPFILE exists or ROOT is gone.
import json, os, sys, time

def tree(root):
    kids = {}
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % d) as f:
                s = f.read()
        except OSError:
            continue
        ppid = int(s[s.rindex(')') + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    out = [root]
    i = 0
    while i < len(out):
        out += kids.get(out[i], [])
        i += 1
    return out

def snapshot(root):
    r = {'pss': 0, 'rss': 0, 'procs': 0, 'fe_pss': 0, 'fe_rss': 0, 'shmem': 0}
    for pid in tree(root):
        try:
            with open('/proc/%d/comm' % pid) as f:
                comm = f.read().strip()
            pss = rss = shmem = 0
            with open('/proc/%d/smaps_rollup' % pid) as f:
                for line in f:
                    if line.startswith('Pss:'):
                        pss = int(line.split()[1])
                    elif line.startswith('Rss:'):
                        rss = int(line.split()[1])
                    elif line.startswith('Pss_Shmem:'):
                        shmem = int(line.split()[1])
        except (OSError, ValueError):
            continue
        r['pss'] += pss
        r['rss'] += rss
        r['shmem'] += shmem
        r['procs'] += 1
        if comm == 'nbdcurld-fe':
            r['fe_pss'] += pss
            r['fe_rss'] += rss
    return r

mode, root = sys.argv[1], int(sys.argv[2])
if mode == 'once':
    print(json.dumps(snapshot(root)))
    sys.exit(0)
stop, outfile = sys.argv[3], sys.argv[4]
peak = {'pss': 0, 'rss': 0, 'procs': 0, 'fe_pss': 0, 'fe_rss': 0, 'shmem': 0}
samples = 0
while not os.path.exists(stop) and os.path.exists('/proc/%d' % root):
    s = snapshot(root)
    for k in peak:
        peak[k] = max(peak[k], s[k])
    samples += 1
    time.sleep(0.2)
peak['samples'] = samples
with open(outfile, 'w') as f:
    json.dump(peak, f)
EOF

cat > "$tmp/clients.py" <<'EOF'
# clients.py URI N READYFILE STOPFILE: open N connections, read 4 KiB on
# each, then hold them until STOPFILE exists (at most 5 minutes).
import os, sys, time
import nbd
uri, n, ready, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
hs = []
for i in range(n):
    h = nbd.NBD()
    h.connect_uri(uri)
    h.pread(4096, (i * 1048576) % max(h.get_size() - 4096, 1))
    hs.append(h)
open(ready, 'w').close()
end = time.time() + 300
while not os.path.exists(stop) and time.time() < end:
    time.sleep(0.1)
for h in hs:
    h.shutdown()
EOF

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
json_get() { "$PY" -c 'import json, sys
print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# ---- sanity ----

say "checking that nbdcurld serves the image"
if ! timeout -k 10 "$copy_timeout" "$NBDCURLD" -r "$URL" \
        --run 'nbdcopy "$uri" null:' >"$tmp/sanity.log" 2>&1; then
    cat "$tmp/sanity.log" >&2
    report "nbdcurld could not copy the image: the benchmark stops here"
    exit 1
fi

# ---- copy sections (hyperfine) ----

# Results, one line per command: section<TAB>name<TAB>status<TAB>json.
: > "$tmp/copy.tsv"

# timed SECTION NAME COMMAND: hyperfine one command.  timed_runs,
# timed_warmup and timed_limit, set for one call, replace --runs,
# --warmup and the copies' timeout.
timed() {
    local section=$1 name=$2 cmd=$3 json status=ok
    json=$tmp/hf-$section-$(( $(wc -l < "$tmp/copy.tsv") + 1 )).json
    say "$section: $name: $cmd"
    if ! hyperfine --style basic --warmup "${timed_warmup:-$warmup}" \
            --runs "${timed_runs:-$runs}" \
            --export-json "$json" --command-name "$name" \
            "timeout -k 10 ${timed_limit:-$copy_timeout} $cmd" >&2; then
        status=failed
        say "$section: $name FAILED"
    fi
    printf '%s\t%s\t%s\t%s\n' "$section" "$name" "$status" "$json" >> "$tmp/copy.tsv"
    [ "$status" = ok ] || [ "$name" != nbdcurld ] || broken+=("$section: nbdcurld copy")
}
skipped() {
    printf '%s\t%s\tskipped: %s\t-\n' "$1" "$2" "$3" >> "$tmp/copy.tsv"
}

# timed_rounds SECTION NAME COMMAND [SECTION NAME COMMAND]...: as timed,
# one row each, but the runs taken in rounds, every command once a round
# (no warm-up): a machine whose speed drifts during the section (a
# virtual machine's neighbours) then moves every row alike, and the
# ratios between the rows, which the targets judge, hold.  A command that
# fails is dropped from the rounds after.
timed_rounds() {
    local -a secs=() names=() cmds=() jsons=() states=()
    local i r n line
    line=$(wc -l < "$tmp/copy.tsv")
    while [ $# -ge 3 ]; do
        secs+=("$1") names+=("$2") cmds+=("$3")
        jsons+=("$tmp/hf-$1-$(( line + ${#secs[@]} )).json") states+=(ok)
        shift 3
    done
    n=${#names[@]}
    for (( r = 1; r <= ${timed_runs:-$runs}; r++ )); do
        for (( i = 0; i < n; i++ )); do
            [ "${states[i]}" = ok ] || continue
            say "${secs[i]}: ${names[i]} (round $r of ${timed_runs:-$runs}): ${cmds[i]}"
            if ! hyperfine --style basic --warmup 0 --runs 1 \
                    --export-json "${jsons[i]}.$r" --command-name "${names[i]}" \
                    "timeout -k 10 ${timed_limit:-$copy_timeout} ${cmds[i]}" >&2; then
                states[i]=failed
                say "${secs[i]}: ${names[i]} FAILED"
            fi
        done
    done
    for (( i = 0; i < n; i++ )); do
        if [ "${states[i]}" = ok ] &&
           ! "$PY" - "${jsons[i]}" "${jsons[i]}".* <<'PYEOF'
# One hyperfine result of the rounds' runs: their times and statistics.
import json, statistics, sys
out, parts = sys.argv[1], sys.argv[2:]
first = json.load(open(parts[0]))['results'][0]
times = [t for p in parts for t in json.load(open(p))['results'][0]['times']]
first.update(times=times, median=statistics.median(times), mean=statistics.mean(times),
             min=min(times), max=max(times),
             stddev=statistics.stdev(times) if len(times) > 1 else 0.0)
json.dump({'results': [first]}, open(out, 'w'))
PYEOF
        then
            states[i]=failed
        fi
        printf '%s\t%s\t%s\t%s\n' "${secs[i]}" "${names[i]}" "${states[i]}" "${jsons[i]}" \
            >> "$tmp/copy.tsv"
        [ "${states[i]}" = ok ] || [ "${names[i]}" != nbdcurld ] ||
            broken+=("${secs[i]}: nbdcurld copy")
    done
}

copy_section() {
    local section=$1 nbdcopy=$2 q
    timed "$section" nbdcurld "$NBDCURLD -r $URL --run '$nbdcopy \"\$uri\" null:'"
    if [ "$has_nbdkit" -eq 1 ]; then
        timed "$section" "nbdkit curl" \
            "nbdkit -r -U - curl $URL --run '$nbdcopy \"\$uri\" null:'"
    else
        skipped "$section" "nbdkit curl" "nbdkit not installed"
    fi
    if [ "$section" = copy ]; then
        if [ "$has_multiconn" -eq 1 ]; then
            timed "$section" "nbdkit curl multi-conn" \
                "nbdkit -r -U - --filter=multi-conn curl $URL multi-conn-mode=unsafe --run '$nbdcopy \"\$uri\" null:'"
        else
            skipped "$section" "nbdkit curl multi-conn" "not installed"
        fi
    fi
    if [ "$has_qemu" -eq 1 ]; then
        if serve_qemu; then
            q=$bg_pid
            timed "$section" "qemu-nbd curl" "$nbdcopy --requests=8 $buri null:"
            stop_bg "$q"
        else
            skipped "$section" "qemu-nbd curl" "did not start"
        fi
    else
        skipped "$section" "qemu-nbd curl" "not installed"
    fi
    if [ "$section" = copy ]; then
        if [ "$has_curl" -eq 1 ]; then
            timed "$section" "curl -o /dev/null" "curl -sSf -o /dev/null $URL"
        else
            skipped "$section" "curl -o /dev/null" "not installed"
        fi
    fi
    if [ "$has_nbdkit" -eq 1 ]; then
        timed "$section" "nbdkit file" \
            "nbdkit -r -U - file $image --run '$nbdcopy \"\$uri\" null:'"
    else
        skipped "$section" "nbdkit file" "nbdkit not installed"
    fi
}

# The table of medians and ratios of one section.
copy_table() {
    "$PY" - "$tmp/copy.tsv" "$1" "${2:-$size_bytes}" <<'EOF' > "$tmp/table.txt"
import json, sys
tsv, section, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = []
for line in open(tsv):
    sec, name, status, js = line.rstrip('\n').split('\t')
    if sec != section:
        continue
    med = mn = mx = None
    if status == 'ok':
        r = json.load(open(js))['results'][0]
        med, mn, mx = r['median'], r['min'], r['max']
    rows.append((name, status, med, mn, mx))
base = next((r[2] for r in rows if r[0] == 'nbdcurld'), None)
print('%-24s %9s %9s %9s %9s %14s %14s' % ('command', 'median s', 'min s', 'max s',
      'MiB/s', 'peer/nbdcurld', 'nbdcurld/peer'))
for name, status, med, mn, mx in rows:
    if med is None:
        print('%-24s %s' % (name, status))
        continue
    rate = size / 1048576 / med if med > 0 else 0
    if base and med > 0:
        ratios = '%14.2f %14.2f' % (med / base, base / med)
    else:
        ratios = '%14s %14s' % ('-', '-')
    print('%-24s %9.3f %9.3f %9.3f %9.0f %s' % (name, med, mn, mx, rate, ratios))
# Targets (reported, not enforced): times, nbdcurld's over the peer's.
meds = {r[0]: r[2] for r in rows if r[2]}
def target(text, peers, limit):
    ps = [meds[p] for p in peers if p in meds]
    if not base or not ps:
        print('target %s: not measured' % text)
        return
    ratio = base / min(ps)
    print('target %s: %.2f (%s)' % (text, ratio, 'met' if ratio <= limit else 'NOT met'))
if section == 'copy':
    target('nbdcurld <= 0.6 x fastest peer (nbdkit multi-conn, qemu-nbd)',
           ['nbdkit curl multi-conn', 'qemu-nbd curl'], 0.6)
    target('nbdcurld <= 1.5 x nbdkit file', ['nbdkit file'], 1.5)
elif section == 'wan-cap':
    # Issue 13: 2.5 x the 140 MiB/s measured before requests were sized
    # to the link (RTT +20 ms, 50 MB/s per connection, 512 MiB).
    if base:
        rate = size / 1048576 / base
        print('target nbdcurld >= 350 MiB/s (2.5 x 140): %.0f MiB/s (%s)'
              % (rate, 'met' if rate >= 350 else 'NOT met'))
elif section == 'https':
    target('nbdcurld <= 1.0 x one curl stream', ['curl -o /dev/null'], 1.0)
elif section != 'wan':
    target('nbdcurld <= 0.6 x nbdkit curl', ['nbdkit curl'], 0.6)
EOF
    report_file "$tmp/table.txt"
}

if want copy; then
    if [ "$has_hyperfine" -eq 1 ]; then
        copy_section copy nbdcopy
        report ""
        report "== copy: nbdcopy URI null: ($size_mib MiB; median of $runs runs, $warmup warm-up; ratios of median times) =="
        copy_table copy
    else
        report "" "== copy: skipped (hyperfine is not installed) =="
    fi
fi
if want copy1; then
    if [ "$has_hyperfine" -eq 1 ]; then
        copy_section copy1 "nbdcopy --connections=1"
        report ""
        report "== copy1: nbdcopy --connections=1 URI null: ($size_mib MiB; median of $runs runs) =="
        copy_table copy1
    else
        report "" "== copy1: skipped (hyperfine is not installed) =="
    fi
fi

# ---- NBD over TLS ----

# A CA and a server certificate for localhost in $tmp/pki: ECDSA P-256,
# what the key holder signs fastest.
make_pki() {
    local d=$tmp/pki
    mkdir -p "$d"
    printf 'cn = benchmark CA\nca\ncert_signing_key\nexpiration_days = 2\n' > "$d/ca.info"
    printf 'cn = localhost\ndns_name = localhost\ntls_www_server\nsigning_key\nexpiration_days = 2\n' \
        > "$d/server.info"
    certtool --generate-privkey --key-type=ecdsa --outfile "$d/ca-key.pem" 2>/dev/null &&
    certtool --generate-self-signed --load-privkey "$d/ca-key.pem" \
        --template "$d/ca.info" --outfile "$d/ca-cert.pem" 2>/dev/null &&
    certtool --generate-privkey --key-type=ecdsa --outfile "$d/server-key.pem" 2>/dev/null &&
    certtool --generate-certificate --load-privkey "$d/server-key.pem" \
        --load-ca-certificate "$d/ca-cert.pem" --load-ca-privkey "$d/ca-key.pem" \
        --template "$d/server.info" --outfile "$d/server-cert.pem" 2>/dev/null
}

if want tls; then
    if [ "$has_hyperfine" -eq 1 ] && have certtool && make_pki; then
        pki=$tmp/pki
        # $uri is nbds+unix://...?socket=...: the client's CA goes after it.
        client="nbdcopy \"\$uri&tls-certificates=$pki\" null:"
        timed tls nbdcurld \
            "$NBDCURLD -r --tls=require --tls-certificates $pki $URL --run '$client'"
        if [ "$has_nbdkit" -eq 1 ]; then
            timed tls "nbdkit curl" \
                "nbdkit -r -U - --tls=require --tls-certificates $pki curl $URL --run '$client'"
            timed tls "nbdkit file" \
                "nbdkit -r -U - --tls=require --tls-certificates $pki file $image --run '$client'"
        else
            skipped tls "nbdkit curl" "nbdkit not installed"
            skipped tls "nbdkit file" "nbdkit not installed"
        fi
        report ""
        report "== tls: nbdcopy over NBD TLS (X.509, --tls=require) ($size_mib MiB; median of $runs runs) =="
        copy_table tls
    else
        report "" "== tls: skipped (hyperfine or certtool is not installed) =="
    fi
fi

# ---- a distant web server (tests/wan-proxy.c) ----

# wan_proxy NAME DELAY [RATE]: start tests/wan-proxy in front of the
# benchmark's nginx; sets WAN_PORT (and bg_pid).  With a cap, each
# direction of a connection queues twice bandwidth x delay (1 MiB at
# least), what such a link holds in flight: the proxy's default of
# 16 MiB, made for an uncapped link, let it read all of every body
# ahead into cold buffers, and with a few dozen connections it spent
# its CPU copying them (measured: 32 curl streams at 50 MB/s each got
# 121 MiB/s with the proxy at 80% of a CPU, mostly in copies; with
# 2 MiB queues a copy took a quarter of the proxy's CPU).
wan_proxy() {
    local name=$1 delay=$2 rate=${3:-} i queue=()
    rm -f "$tmp/$name.port"
    if [ -n "$rate" ]; then
        # rate MB/s x delay ms x 2 = rate x delay x 2000 bytes
        queue=(--queue-kib $(( rate * delay * 2000 / 1024 > 1024 ? rate * delay * 2000 / 1024 : 1024 )))
    fi
    "$WAN_PROXY" --listen 127.0.0.1:0 --target "127.0.0.1:$bench_port" \
        --delay-ms "$delay" ${rate:+--rate-mbps "$rate"} "${queue[@]}" \
        --port-file "$tmp/$name.port" </dev/null >"$tmp/$name.log" 2>&1 &
    bg_pid=$!
    bg_pids+=("$bg_pid")
    for i in $(seq 100); do
        [ -s "$tmp/$name.port" ] && { WAN_PORT=$(cat "$tmp/$name.port"); return 0; }
        kill -0 "$bg_pid" 2>/dev/null || break
        sleep 0.1
    done
    say "wan-proxy $name did not start: $(tail -n 3 "$tmp/$name.log")"
    return 1
}

# wan_section SECTION URL: nbdcopy through each server reading URL.
wan_section() {
    local section=$1 url=$2 q saved=$URL
    timed "$section" nbdcurld "$NBDCURLD -r $url --run 'nbdcopy \"\$uri\" null:'"
    if [ "$has_nbdkit" -eq 1 ]; then
        timed "$section" "nbdkit curl" \
            "nbdkit -r -U - curl $url --run 'nbdcopy \"\$uri\" null:'"
    else
        skipped "$section" "nbdkit curl" "nbdkit not installed"
    fi
    if [ "$has_multiconn" -eq 1 ]; then
        timed "$section" "nbdkit curl multi-conn" \
            "nbdkit -r -U - --filter=multi-conn curl $url multi-conn-mode=unsafe --run 'nbdcopy \"\$uri\" null:'"
    else
        skipped "$section" "nbdkit curl multi-conn" "not installed"
    fi
    if [ "$has_nbdkit_conns" -eq 1 ]; then
        timed "$section" "nbdkit curl connections=16" \
            "nbdkit -r -U - --filter=multi-conn curl $url connections=16 multi-conn-mode=unsafe --run 'nbdcopy \"\$uri\" null:'"
    fi
    if [ "$has_qemu" -eq 1 ]; then
        URL=$url
        if serve_qemu; then
            q=$bg_pid
            timed "$section" "qemu-nbd curl" "nbdcopy --requests=8 $buri null:"
            stop_bg "$q"
        else
            skipped "$section" "qemu-nbd curl" "did not start"
        fi
        URL=$saved
    else
        skipped "$section" "qemu-nbd curl" "not installed"
    fi
}

if want wan; then
    if [ "$has_hyperfine" -eq 1 ] && [ -x "$WAN_PROXY" ]; then
        if [ "$wan_bytes" -eq "$size_bytes" ]; then
            wan_file=disk.img
        else
            say "making a $wan_size image for the wan section"
            head -c "$wan_bytes" "$image" > "$tmp/www/wan.img" 2>/dev/null || true
            [ "$(stat -c %s "$tmp/www/wan.img")" -eq "$wan_bytes" ] ||
                { openssl enc -aes-128-ctr -nosalt -pbkdf2 -pass "pass:$RANDOM" \
                      -in /dev/zero 2>/dev/null || true; } |
                    head -c "$wan_bytes" > "$tmp/www/wan.img"
            wan_file=wan.img
        fi
        for kind in wan wan-cap; do
            if [ "$kind" = wan ]; then
                wan_proxy "$kind" "$wan_rtt" || continue
                what="RTT +$wan_rtt ms, no cap"
            else
                wan_proxy "$kind" "$wan_rtt" "$wan_cap" || continue
                what="RTT +$wan_rtt ms, $wan_cap MB/s per TCP connection"
            fi
            p=$bg_pid
            wan_section "$kind" "http://127.0.0.1:$WAN_PORT/$wan_file"
            stop_bg "$p"
            report ""
            report "== $kind: nbdcopy URI null: through tests/wan-proxy ($what; $(( wan_bytes / 1048576 )) MiB; median of $runs runs) =="
            copy_table "$kind" "$wan_bytes"
        done
    else
        report "" "== wan: skipped (hyperfine or tests/wan-proxy is missing: ninja -C build) =="
    fi
fi

# ---- https: nbdcurld against one curl stream ----

# https_nginx_conf PORT: a second nginx serving the image over https.
https_nginx_conf() {
    cat <<EOF2
$(nginx_head "$tmp/https" 2 1024)
http {
$(nginx_http_conf "$tmp/https")
    keepalive_requests 100000;
    keepalive_timeout 300s;
    server {
        listen 127.0.0.1:$1 ssl;
        ssl_certificate $tmp/pki/server-cert.pem;
        ssl_certificate_key $tmp/pki/server-key.pem;
        root $tmp/www;
    }
}
EOF2
}

# tree_cpu PID: CPU seconds of PID and all its descendants, with the
# children they have already reaped (a finished client's fetcher).
tree_cpu() {
    "$PY" - "$1" <<'EOF2'
import os, sys
root = int(sys.argv[1])
kids, stat = {}, {}
for d in os.listdir('/proc'):
    if not d.isdigit():
        continue
    try:
        s = open('/proc/%s/stat' % d).read()
    except OSError:
        continue
    f = s[s.rindex(')') + 2:].split()
    kids.setdefault(int(f[1]), []).append(int(d))
    stat[int(d)] = sum(int(x) for x in f[11:15])   # utime stime cutime cstime
out, i = [root], 0
while i < len(out):
    out += kids.get(out[i], [])
    i += 1
print('%.3f' % (sum(stat.get(p, 0) for p in out) / os.sysconf('SC_CLK_TCK')))
EOF2
}

if want https; then
    if [ "$has_hyperfine" -eq 1 ] && have certtool && { [ -d "$tmp/pki" ] || make_pki; }; then
        mkdir -p "$tmp/https"
        if nginx_launch "$tmp/https" https_nginx_conf; then
            https_pid=$NGINX_PID
            bg_pids+=("$https_pid")
            hurl=https://localhost:$NGINX_PORT/disk.img
            # nbdcurld started as root reads the CA in its fetchers, as
            # nobody: a world-readable copy in a directory of /tmp ($tmp
            # may sit in a private one, TMPDIR's, as in the smoke test).
            ca_dir=$(mktemp -d /tmp/nbdcurld-bench-ca.XXXXXX)
            cp "$tmp/pki/ca-cert.pem" "$ca_dir/"
            chmod 755 "$ca_dir"
            chmod 644 "$ca_dir/ca-cert.pem"
            ca=$ca_dir/ca-cert.pem
            timed https nbdcurld "$NBDCURLD -r --cainfo $ca $hurl --run 'nbdcopy \"\$uri\" null:'"
            if [ "$has_curl" -eq 1 ]; then
                timed https "curl -o /dev/null" "curl -sSf --cacert $ca -o /dev/null $hurl"
            else
                skipped https "curl -o /dev/null" "not installed"
            fi
            report ""
            report "== https: nbdcopy URI null: over https (nginx, ECDSA P-256 test certificate) ($size_mib MiB; median of $runs runs) =="
            copy_table https
            # Server CPU: every nbdcurld process, per copy; the median of
            # $runs copies (one copy's figure moved by a fifth between
            # runs on a shared machine).
            if start_bg nbdcurld-https "$tmp/nbdcurld-https.sock" "$NBDCURLD" -f -r \
                    --cainfo "$ca" -U "$tmp/nbdcurld-https.sock" "$hurl"; then
                hp=$bg_pid
                cpus=()
                for ((cpu_run = 1; cpu_run <= runs; cpu_run++)); do
                    c0=$(tree_cpu "$hp")
                    if ! timeout -k 10 "$copy_timeout" nbdcopy \
                            "nbd+unix:///?socket=$tmp/nbdcurld-https.sock" null:; then
                        report "nbdcurld over https: the copy FAILED"
                        broken+=("https: nbdcurld copy")
                        cpus=()
                        break
                    fi
                    c1=$(tree_cpu "$hp")
                    cpus+=("$(awk -v a="$c0" -v b="$c1" -v s="$size_bytes" \
                        'BEGIN { printf "%.3f", (b - a) * 1073741824 / s }')")
                done
                if [ "${#cpus[@]}" -gt 0 ]; then
                    report "$(printf '%s\n' "${cpus[@]}" | sort -n | awk '
                        { v[NR] = $1 }
                        END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                              printf "nbdcurld CPU per GiB over https (all its processes; median of %d %s, %.2f to %.2f): %.2f s (target <= 1.2 s: %s)", NR, (NR == 1) ? "copy" : "copies", v[1], v[NR], m, (m <= 1.2) ? "met" : "NOT met" }')"
                fi
                stop_bg "$hp"
            fi
            stop_bg "$https_pid"
        else
            report "" "== https: skipped (nginx did not start with ssl: $(tail -n 2 "$tmp/https/nginx-error.log" 2>/dev/null)) =="
        fi
    else
        report "" "== https: skipped (hyperfine or certtool is not installed) =="
    fi
fi

# ---- random reads (fio) ----

# fio_run URI JSON SECONDS: 4 KiB random reads at QD32; prints
# "IOPS P99_US IOS" or fails (timeout, error, nothing read).
fio_run() {
    local uri=$1 json=$2 secs=$3
    timeout -k 5 "$((secs + 30))" fio --name=randread --ioengine=nbd \
        --uri="$uri" --rw=randread --bs=4k --iodepth=32 --time_based \
        --runtime="$secs" --output-format=json --output="$json" \
        >/dev/null 2>>"$tmp/fio.log" || return 1
    "$PY" - "$json" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index('{'):])   # fio may print notes first
job = j['jobs'][0]
r = job['read']
if job['error'] or r['total_ios'] == 0:
    sys.exit(1)
p99 = r['clat_ns']['percentile']['99.000000'] / 1000
print('%.0f %.0f %d' % (r['iops'], p99, r['total_ios']))
EOF
}

if want random; then
    if [ "$has_fio" -eq 1 ]; then
        : > "$tmp/random.tsv"
        for server in nbdcurld nbdkit qemu file; do
            case $server in
                nbdcurld) name=nbdcurld ;;
                nbdkit) name="nbdkit curl"
                        [ "$has_nbdkit" -eq 1 ] || { printf '%s\tskipped: not installed\n' "$name" >> "$tmp/random.tsv"; continue; } ;;
                qemu) name="qemu-nbd curl"
                      [ "$has_qemu" -eq 1 ] || { printf '%s\tskipped: not installed\n' "$name" >> "$tmp/random.tsv"; continue; }
                      # Its curl driver hangs at QD32: it would cost
                      # the whole timeout.
                      [ "$smoke" -eq 0 ] || { printf '%s\tskipped in --smoke (its curl driver hangs at QD32)\n' "$name" >> "$tmp/random.tsv"; continue; } ;;
                file) name="nbdkit file"
                      [ "$has_nbdkit" -eq 1 ] || { printf '%s\tskipped: not installed\n' "$name" >> "$tmp/random.tsv"; continue; } ;;
            esac
            if ! "serve_$server"; then
                printf '%s\tfailed: did not start\n' "$name" >> "$tmp/random.tsv"
                [ "$server" != nbdcurld ] || broken+=("random: nbdcurld did not start")
                continue
            fi
            spid=$bg_pid
            results=()
            status=ok
            for i in $(seq "$runs"); do
                say "random: $name, run $i of $runs (${random_time}s)"
                if line=$(fio_run "$buri" "$tmp/fio-$server-$i.json" "$random_time"); then
                    results+=("$line")
                else
                    status="failed (run $i timed out or had errors)"
                    break
                fi
            done
            stop_bg "$spid"
            if [ "$status" = ok ]; then
                printf '%s\tok\t%s\n' "$name" "$(IFS=,; echo "${results[*]}")" >> "$tmp/random.tsv"
            else
                printf '%s\t%s\n' "$name" "$status" >> "$tmp/random.tsv"
                [ "$server" != nbdcurld ] || broken+=("random: nbdcurld $status")
            fi
        done
        report ""
        report "== random: fio nbd engine, 4 KiB random reads, QD32, 1 connection, ${random_time}s (median of $runs runs) =="
        "$PY" - "$tmp/random.tsv" <<'EOF' > "$tmp/table.txt"
import statistics, sys
rows = []
for line in open(sys.argv[1]):
    f = line.rstrip('\n').split('\t')
    if f[1] != 'ok':
        rows.append((f[0], f[1], None, None))
        continue
    runs = [tuple(float(x) for x in r.split()) for r in f[2].split(',')]
    rows.append((f[0], 'ok', statistics.median(r[0] for r in runs),
                 statistics.median(r[1] for r in runs)))
base = next((r for r in rows if r[0] == 'nbdcurld' and r[2]), None)
print('%-24s %9s %9s %14s %14s' % ('server', 'IOPS', 'p99 us', 'IOPS nbdc/peer', 'p99 nbdc/peer'))
for name, status, iops, p99 in rows:
    if iops is None:
        print('%-24s %s' % (name, status))
        continue
    if base and iops and p99:
        rel = '%14.2f %14.2f' % (base[2] / iops, base[3] / p99)
    else:
        rel = '%14s %14s' % ('-', '-')
    print('%-24s %9.0f %9.0f %s' % (name, iops, p99, rel))
peer = next((r for r in rows if r[0] == 'nbdkit curl' and r[2]), None)
if base and peer:
    ok = base[2] >= 1.5 * peer[2] and base[3] < peer[3]
    print('target nbdcurld IOPS >= 1.5 x nbdkit curl and lower p99: %.2f x, p99 %.0f vs %.0f us (%s)'
          % (base[2] / peer[2], base[3], peer[3], 'met' if ok else 'NOT met'))
else:
    print('target nbdcurld IOPS >= 1.5 x nbdkit curl: not measured')
EOF
        report_file "$tmp/table.txt"
    else
        report "" "== random: skipped (fio with the nbd engine is not installed) =="
    fi
fi

# ---- import: a compressed qcow2 disk image converted to raw ----

# What a cloud image's importer does (KubeVirt's CDI, virt-v2v): qemu-img
# reading a compressed qcow2 asks for one small read after another, each
# near where the last one ended, rarely exactly there, one in flight.

# import_fill DEST BYTES ROOT...: copy ordinary files of the ROOTs into
# DEST until about BYTES are there; prints "BYTES FILES".
import_fill() {
    "$PY" - "$@" <<'EOF'
import os, shutil, sys
dest, want, roots = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
# No single file may fill much of a small disk.
biggest = min(16 << 20, want // 8)
total = files = 0
def copy(src):
    global total, files
    if os.path.islink(src) or not os.path.isfile(src):
        return
    size = os.path.getsize(src)
    if size > biggest or total + size > want:
        return
    to = os.path.join(dest, os.path.relpath(src, '/'))
    os.makedirs(os.path.dirname(to), exist_ok=True)
    shutil.copyfile(src, to)
    total += size
    files += 1
def walk():
    for root in roots:
        for d, subdirs, names in os.walk(root):
            subdirs.sort()
            for n in sorted(names):
                try:
                    copy(os.path.join(d, n))
                except OSError:
                    continue
                # Close enough: the rest of the walk would only add crumbs.
                if total >= want * 0.99:
                    return
walk()
if files == 0:
    sys.exit('no files copied')
print(total, files)
EOF
}

# import_make: the section's disks, made once per --import-size and
# --import-fill and kept in $import_cache: an ext4 disk holding copies of
# this machine's files (.raw) and its compressed qcow2 (.qcow2), as a
# cloud image is shipped.  Sets import_raw, import_qcow2, import_files.
import_make() {
    local base=$import_cache/ext4-$import_bytes-$fill_bytes stage=$tmp/import-files
    import_raw=$base.raw import_qcow2=$base.qcow2
    if [ -s "$import_raw" ] && [ -s "$import_qcow2" ] && [ -s "$base.files" ]; then
        say "import: reusing $import_qcow2"
        import_files=$(cat "$base.files")
        return 0
    fi
    mkdir -p "$import_cache" || return 1
    say "import: copying $import_fill of /usr/lib and /usr/share"
    import_files=$(import_fill "$stage" "$fill_bytes" /usr/lib /usr/share) || return 1
    import_parts=("$base.raw.part" "$base.qcow2.part")
    rm -f "${import_parts[@]}"
    say "import: mkfs.ext4 -d of a $import_size disk"
    truncate -s "$import_bytes" "$base.raw.part" &&
        "$MKFS_EXT4" -q -F -d "$stage" "$base.raw.part" >&2 || return 1
    rm -rf "$stage"
    say "import: qemu-img convert -c to qcow2"
    qemu-img convert -c -f raw -O qcow2 "$base.raw.part" "$base.qcow2.part" || return 1
    mv "$base.raw.part" "$import_raw"
    mv "$base.qcow2.part" "$import_qcow2"
    printf '%s\n' "$import_files" > "$base.files"
    import_parts=()
}

# fetched_bytes: "REQUESTS BYTES" that nginx logged under /counted/
# since bytes.log was last emptied.
fetched_bytes() {
    # A request's line is written once its last byte is sent.
    sleep 0.3
    awk '{ n++; b += $1 } END { printf "%d %d\n", n, b }' "$tmp/bytes.log"
}

# timed_if HAS SECTION NAME COMMAND: timed when HAS is 1, else a row
# saying the tool is not installed.
timed_if() {
    if [ "$1" -eq 1 ]; then
        timed "$2" "$3" "$4"
    else
        skipped "$2" "$3" "not installed"
    fi
}

# import_ways SECTION URL: qemu-img convert -f qcow2 -O raw of the qcow2
# at URL through nbdcurld, through nbdkit plain and with its cache
# filter, through qemu-img's own curl driver, and with the whole file
# downloaded first.  Through the proxy --smoke times only nbdcurld and
# the download, what its targets compare.
import_ways() {
    local section=$1 url=$2 conv="qemu-img convert -f qcow2 -O raw" out=$tmp/out.raw
    local kit="nbdkit${nbdkit_ver:+ $nbdkit_ver} curl"
    # On the LAN, nbdcurld's row is timed in rounds with the local ones.
    [ "$section" = import-lan ] ||
        timed "$section" nbdcurld "$NBDCURLD -r $url --run '$conv \"\$uri\" $out'"
    if [ "$smoke" -eq 0 ] || [ "$section" = import-lan ]; then
        timed_if "$has_nbdkit" "$section" "$kit" \
            "nbdkit -r -U - curl $url --run '$conv \"\$uri\" $out'"
        timed_if "$has_nbdkit_cache" "$section" "$kit, cache filter" \
            "nbdkit -r -U - --filter=cache curl $url cache-on-read=true --run '$conv \"\$uri\" $out'"
        timed_if "$has_qemu_img_curl" "$section" "qemu-img curl driver, -m 1" \
            "$conv -m 1 'json:{\"file\":{\"driver\":\"http\",\"url\":\"$url\"}}' $out"
    fi
    timed_if "$has_curl" "$section" "curl -o, then convert" \
        "sh -c 'curl -sSf -o $tmp/scratch.qcow2 $url && $conv $tmp/scratch.qcow2 $out'"
}

# The raw rows' floor fetches the disk as this many range requests at
# once: as many web connections as nbdcurld and nbdkit 1.45 open by
# default, so it shows what the link gives a reader that keeps them all
# busy.
floor_streams=16

# curl_streams_script: writes $tmp/curl-streams, for hyperfine to time
# (it runs commands in a shell that knows none of our functions).
# curl-streams URL SIZE N fetches URL's SIZE bytes into /dev/null as N
# range requests of an equal share started at once, the last to the end,
# and fails when any of them does.
curl_streams_script() {
    cat > "$tmp/curl-streams" <<'EOF'
url=$1 size=$2 n=$3 i=0 pids="" rc=0
# timed's timeout stops this shell only: the streams go with it.
trap 'kill $pids 2>/dev/null; exit 143' TERM INT
while [ "$i" -lt "$n" ]; do
    first=$(( size * i / n )) last=$(( size * (i + 1) / n - 1 ))
    [ "$i" -lt $(( n - 1 )) ] || last=""
    curl -sSf -o /dev/null -r "$first-$last" "$url" &
    pids="$pids $!"
    i=$(( i + 1 ))
done
for p in $pids; do
    wait "$p" || rc=1
done
exit "$rc"
EOF
}

# import_raw_rows URL: qemu-img convert -f raw of the disk itself at URL
# (nbdcopy's kind of reader): nbdcurld against nbdkit, and the link's
# floor: the whole disk in parallel curl streams, no NBD, no qemu-img.
import_raw_rows() {
    local url=$1 conv="qemu-img convert -f raw -O raw" out=$tmp/out.raw
    timed import-raw nbdcurld "$NBDCURLD -r $url --run '$conv \"\$uri\" $out'"
    timed_if "$has_nbdkit" import-raw "nbdkit${nbdkit_ver:+ $nbdkit_ver} curl" \
        "nbdkit -r -U - curl $url --run '$conv \"\$uri\" $out'"
    curl_streams_script
    timed_if "$has_curl" import-raw "$floor_streams parallel curl streams, no NBD (the link's floor)" \
        "sh $tmp/curl-streams $url $(stat -c %s "$import_raw") $floor_streams"
}

# import_twice URL: two imports of URL (under /counted/) through one
# nbdcurld server, each timed, with the bytes nginx sent for it: with a
# read cache the second fetches nothing.
import_twice() {
    local url=$1 saved=$URL args=() what="no read cache" pid i t0 t1 n b line=""
    if "$NBDCURLD" --help 2>&1 | grep -q -- '--cache SIZE'; then
        args=(--cache="$(( $(stat -c %s "$import_qcow2") / 1048576 + 1 ))M")
        what=${args[0]}
    fi
    URL=$url
    serve_nbdcurld "${args[@]}" || {
        URL=$saved
        report "second import: nbdcurld did not start"
        broken+=("import: nbdcurld did not start")
        return 0
    }
    URL=$saved pid=$bg_pid
    for i in 1 2; do
        # The first import's last replies are logged before the second starts.
        sleep 0.5
        : > "$tmp/bytes.log"
        say "import: import $i of 2 through one nbdcurld ($what)"
        t0=$(date +%s.%N)
        if ! timeout -k 10 "$import_timeout" qemu-img convert -f qcow2 -O raw \
                "$buri" "$tmp/out.raw"; then
            report "second import: import $i FAILED"
            broken+=("import: nbdcurld import $i of 2 through one server")
            stop_bg "$pid"
            return 0
        fi
        t1=$(date +%s.%N)
        read -r n b < <(fetched_bytes)
        line+=$(awk -v i="$i" -v t="$t1" -v s="$t0" -v n="$n" -v b="$b" 'BEGIN {
            printf "%s import %.2f s, %.1f MiB in %d requests", (i == 1) ? "first" : "; second", t - s, b / 1048576, n }')
    done
    stop_bg "$pid"
    report "two imports through one nbdcurld ($what), WAN capped: $line (target: the second fetches 0 bytes: $([ "$b" -eq 0 ] && echo met || echo 'NOT met'))"
}

# import_client_reads: "READS BYTES" that qemu-img's import of the
# qcow2 asks for, counted by nbdkit's log filter over the local file
# (no extents, as over a web server).
import_client_reads() {
    nbdkit -r -U - --filter=log --filter=noextents file "$import_qcow2" \
        logfile="$tmp/import-reads.log" \
        --run "qemu-img convert -f qcow2 -O raw \"\$uri\" $tmp/out.raw" >&2 || return 1
    "$PY" - "$tmp/import-reads.log" <<'EOF'
import re, sys
n = b = 0
for line in open(sys.argv[1]):
    m = re.search(r' Read id=\d+ offset=0x[0-9a-f]+ count=(0x[0-9a-f]+) ', line)
    if m:
        n += 1
        b += int(m.group(1), 16)
print(n, b)
EOF
}

# per_byte WHAT CLIENT_BYTES DETAIL [LIMIT]: report the bytes logged
# since bytes.log was emptied per byte the client read.
per_byte() {
    local what=$1 client=$2 detail=$3 limit=${4:-} n b
    read -r n b < <(fetched_bytes)
    report "$(awk -v w="$what" -v c="$client" -v d="$detail" -v n="$n" -v b="$b" -v l="$limit" 'BEGIN {
        r = (c > 0) ? b / c : 0
        printf "bytes fetched per byte read, %s: %.3f (%.1f MiB fetched in %d requests for %.1f MiB read%s)", w, r, b / 1048576, n, c / 1048576, d
        if (l != "") printf " (target <= %s: %s)", l, (r <= l) ? "met" : "NOT met" }')"
}

# counted_run WHAT CLIENT_BYTES DETAIL LIMIT URL COMMAND: nbdcurld -r URL
# --run COMMAND, then per_byte of what it fetched.
counted_run() {
    local what=$1 client=$2 detail=$3 limit=$4 url=$5 cmd=$6
    : > "$tmp/bytes.log"
    say "import: counting the bytes of $what"
    if timeout -k 10 "$(( import_timeout + copy_timeout ))" \
            "$NBDCURLD" -r "$url" --run "$cmd" >&2; then
        per_byte "$what" "$client" "$detail" "$limit"
    else
        report "bytes fetched per byte read, $what: FAILED"
        broken+=("import: nbdcurld $what (bytes counted)")
    fi
}

# import_per_byte: bytes nginx sent per byte the client read, through
# nbdcurld on the LAN: qemu-img's import, fio's 4 KiB random reads and
# a sequential nbdcopy.
import_per_byte() {
    local base=http://127.0.0.1:$bench_port/counted reads saved=$URL line spid
    if [ "$has_nbdkit" -eq 1 ] && reads=$(import_client_reads); then
        counted_run "qemu-img import" "${reads#* }" " in ${reads% *} reads" "" \
            "$base/import.qcow2" "qemu-img convert -f qcow2 -O raw \"\$uri\" $tmp/out.raw"
    else
        report "bytes fetched per byte read, qemu-img import: not measured (nbdkit's log filter counts the reads)"
    fi
    if [ "$has_fio" -eq 1 ]; then
        URL=$base/disk.img
        serve_nbdcurld && spid=$bg_pid || spid=""
        URL=$saved
        : > "$tmp/bytes.log"
        say "import: counting the bytes of fio's 4 KiB random reads"
        if [ -n "$spid" ] && line=$(fio_run "$buri" "$tmp/fio-bytes.json" "$random_time"); then
            stop_bg "$spid"
            per_byte "fio 4 KiB random reads, QD32, ${random_time}s" "$(( ${line##* } * 4096 ))" "" 1.05
        else
            [ -z "$spid" ] || stop_bg "$spid"
            report "bytes fetched per byte read, fio random reads: the run FAILED"
            broken+=("import: nbdcurld random reads (bytes counted)")
        fi
    fi
    counted_run nbdcopy "$size_bytes" "" "" "$base/disk.img" 'nbdcopy "$uri" null:'
}

# The import table: medians, ratios against the local convert and
# against download-then-convert on the same link, and the targets.
import_table() {
    "$PY" - "$tmp/copy.tsv" <<'EOF' > "$tmp/table.txt"
import json, sys
rows = {}
for line in open(sys.argv[1]):
    sec, name, status, js = line.rstrip('\n').split('\t')
    if not sec.startswith('import-'):
        continue
    med = n = None
    if status == 'ok':
        r = json.load(open(js))['results'][0]
        med, n = r['median'], len(r['times'])
    rows.setdefault(sec, []).append((name, status, med, n))
def med(sec, pick):
    return next((r[2] for r in rows.get(sec, []) if pick(r[0]) and r[2]), None)
local = med('import-local', lambda n: n == 'qemu-img convert of a local copy')
links = [('import-local', 'local'), ('import-lan', 'LAN'), ('import-wan', 'WAN'),
         ('import-wan-cap', 'WAN capped'), ('import-raw', 'raw, WAN capped')]
# The floors' names are long: the column grows to the longest name.
width = max([34] + [len(r[0]) for sec, _ in links for r in rows.get(sec, [])])
print('%-16s %-*s %9s %5s %8s %11s' % ('link', width, 'way', 'median s', 'runs',
      'x local', 'x download'))
for sec, link in links:
    down = med(sec, lambda n: n == 'curl -o, then convert')
    for name, status, m, n in rows.get(sec, []):
        if m is None:
            print('%-16s %-*s %s' % (link, width, name, status))
            continue
        # The raw rows read another image: no qcow2 ratios.
        qcow2 = sec != 'import-raw'
        rl = '%8.2f' % (m / local) if local and qcow2 else '%8s' % '-'
        rd = '%11.2f' % (m / down) if down and qcow2 else '%11s' % '-'
        print('%-16s %-*s %9.2f %5d %s %s' % (link, width, name, m, n, rl, rd))
# floor: (what, median) of the way nothing on this machine beats, shown
# as a ratio to the same peer, so that a missed target reads as
# nbdcurld's fault or the machine's; out of reach when the floor itself
# misses the target.
def target(text, sec, peer, limit, floor=None, unit=''):
    base = med(sec, lambda n: n == 'nbdcurld')
    if not base or not peer:
        print('target %s: not measured' % text)
        return
    ratio = base / peer
    verdict = 'met' if ratio <= limit else 'NOT met'
    if floor and floor[1]:
        least = floor[1] / peer
        verdict += '; floor: %s = %.2f x %s' % (floor[0], least, unit)
        if least > limit:
            verdict += ', out of reach here'
    print('target %s: %.2f (%s)' % (text, ratio, verdict))
kitfile = ('nbdkit file over the local copy',
           med('import-local', lambda n: n == 'nbdkit file plugin over the local copy'))
target('LAN: nbdcurld <= 1.15 x local', 'import-lan', local, 1.15, kitfile, 'local')
target('WAN: nbdcurld <= 1.5 x local', 'import-wan', local, 1.5, kitfile, 'local')
target('WAN capped: nbdcurld <= 1.5 x local', 'import-wan-cap', local, 1.5,
       kitfile, 'local')
# Against the download, the floor is the local import over the wire's
# end (nbdkit file): no server over this link imports faster than that.
target('WAN capped: nbdcurld <= 0.5 x download-then-convert', 'import-wan-cap',
       med('import-wan-cap', lambda n: n == 'curl -o, then convert'), 0.5,
       kitfile, 'download-then-convert')
kit = next((r for r in rows.get('import-raw', []) if r[0].startswith('nbdkit') and r[2]), None)
streams = next((r for r in rows.get('import-raw', []) if 'curl streams, no NBD' in r[0]), None)
target('raw, WAN capped: nbdcurld <= 0.5 x %s' % (kit[0] if kit else 'nbdkit'),
       'import-raw', kit[2] if kit else None, 0.5,
       streams and ('%s curl streams' % streams[0].split()[0], streams[2]), 'nbdkit')
EOF
    report_file "$tmp/table.txt"
}

# megabytes BYTES: BYTES in MiB, for headings.
megabytes() { awk -v b="$1" 'BEGIN { printf "%.0f MiB", b / 1048576 }'; }

import_section() {
    local kind p cap_pid=""
    if [ "$has_hyperfine" -eq 0 ] || [ "$has_import" -eq 0 ]; then
        report "" "== import: skipped (hyperfine, mkfs.ext4 or qemu-img is not installed) =="
        return 0
    fi
    if ! import_make; then
        report "" "== import: skipped (the image could not be made: see stderr) =="
        return 0
    fi
    ln -sf "$import_qcow2" "$tmp/www/import.qcow2"
    ln -sf "$import_raw" "$tmp/www/import.raw"
    cat "$import_qcow2" "$import_raw" > /dev/null
    # The local convert, the same convert through an NBD server that reads
    # the same local file (what serving over NBD at one read in flight
    # costs by itself: the floor of every "x local" target) and nbdcurld
    # on the LAN, in rounds: the LAN target is a ratio of two of them.
    local conv="qemu-img convert -f qcow2 -O raw" lan=http://127.0.0.1:$bench_port/import.qcow2
    local -a rounds=(import-local "qemu-img convert of a local copy"
                     "$conv $import_qcow2 $tmp/out.raw")
    if [ "$has_nbdkit" -eq 1 ]; then
        rounds+=(import-local "nbdkit file plugin over the local copy"
                 "nbdkit -r -U - file $import_qcow2 --run '$conv \"\$uri\" $tmp/out.raw'")
    fi
    rounds+=(import-lan nbdcurld "$NBDCURLD -r $lan --run '$conv \"\$uri\" $tmp/out.raw'")
    timed_runs=$import_runs timed_limit=$import_timeout timed_rounds "${rounds[@]}"
    [ "$has_nbdkit" -eq 1 ] ||
        skipped import-local "nbdkit file plugin over the local copy" "not installed"
    timed_runs=$import_runs timed_warmup=0 timed_limit=$import_timeout \
        import_ways import-lan "$lan"
    for kind in wan wan-cap; do
        [ -x "$WAN_PROXY" ] || break
        if [ "$kind" = wan ]; then
            wan_proxy "import-$kind" "$wan_rtt" || continue
        else
            wan_proxy "import-$kind" "$wan_rtt" "$wan_cap" || continue
        fi
        p=$bg_pid
        timed_runs=$import_wan_runs timed_warmup=0 timed_limit=$import_timeout \
            import_ways "import-$kind" "http://127.0.0.1:$WAN_PORT/import.qcow2"
        if [ "$kind" = wan ]; then
            stop_bg "$p"
        else
            timed_runs=$import_wan_runs timed_warmup=0 timed_limit=$import_timeout \
                import_raw_rows "http://127.0.0.1:$WAN_PORT/import.raw"
            cap_pid=$p
        fi
    done
    report ""
    report "== import: qemu-img convert -f qcow2 -O raw of a compressed qcow2 ($(megabytes "$(stat -c %s "$import_qcow2")") for a $(megabytes "$import_bytes") ext4 disk holding $(megabytes "${import_files% *}") in ${import_files#* } files of this machine); local, nbdkit file and LAN nbdcurld: median of $import_runs round(s), each once a round; other LAN rows: median of $import_runs run(s); WAN: median of $import_wan_runs run(s), no warm-up; WAN: tests/wan-proxy, RTT +$wan_rtt ms, capped: $wan_cap MB/s per TCP connection =="
    [ -x "$WAN_PROXY" ] || report "WAN rows skipped: tests/wan-proxy is missing (ninja -C build)"
    import_table
    if [ -n "$cap_pid" ]; then
        import_twice "http://127.0.0.1:$WAN_PORT/counted/import.qcow2"
        stop_bg "$cap_pid"
    fi
    import_per_byte
    rm -f "$tmp/out.raw" "$tmp/scratch.qcow2"
}

if want import; then
    import_section
fi

# ---- sequential reads at queue depth 1 (readahead) ----

# fio_seq URI BS JSON SECONDS: sequential reads of BS at QD1 (wrapping
# round at the end of the image); prints "KIB_PER_S IOS" or fails.
fio_seq() {
    local uri=$1 bs=$2 json=$3 secs=$4
    timeout -k 5 "$((secs + 30))" fio --name=seqread --ioengine=nbd \
        --uri="$uri" --rw=read --bs="$bs" --iodepth=1 --time_based \
        --runtime="$secs" --output-format=json --output="$json" \
        >/dev/null 2>>"$tmp/fio.log" || return 1
    "$PY" - "$json" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index('{'):])   # fio may print notes first
job = j['jobs'][0]
r = job['read']
if job['error'] or r['total_ios'] == 0:
    sys.exit(1)
print('%d %d' % (r['bw'], r['total_ios']))
EOF
}

if want readahead; then
    if [ "$has_fio" -eq 1 ]; then
        : > "$tmp/readahead.tsv"
        seq_sizes="4k 64k 1m"
        for server in nbdcurld nbdkit_ra nbdkit; do
            case $server in
                nbdcurld) name=nbdcurld ;;
                nbdkit_ra) name="nbdkit curl readahead"
                    [ "$has_nbdkit_ra" -eq 1 ] || { printf '%s\tskipped: not installed\n' "$name" >> "$tmp/readahead.tsv"; continue; } ;;
                nbdkit) name="nbdkit curl"
                    [ "$has_nbdkit" -eq 1 ] || { printf '%s\tskipped: not installed\n' "$name" >> "$tmp/readahead.tsv"; continue; } ;;
            esac
            if ! "serve_$server"; then
                printf '%s\tfailed: did not start\n' "$name" >> "$tmp/readahead.tsv"
                [ "$server" != nbdcurld ] || broken+=("readahead: nbdcurld did not start")
                continue
            fi
            spid=$bg_pid
            fields=()
            status=ok
            for bs in $seq_sizes; do
                results=()
                for i in $(seq "$runs"); do
                    say "readahead: $name, $bs reads, run $i of $runs (${random_time}s)"
                    if line=$(fio_seq "$buri" "$bs" "$tmp/seq-$server-$bs-$i.json" "$random_time"); then
                        results+=("$line")
                    else
                        status="failed ($bs run $i timed out or had errors)"
                        break 2
                    fi
                done
                fields+=("$(IFS=,; echo "${results[*]}")")
            done
            stop_bg "$spid"
            if [ "$status" = ok ]; then
                printf '%s\tok\t%s\n' "$name" "$(IFS=$'\t'; echo "${fields[*]}")" >> "$tmp/readahead.tsv"
            else
                printf '%s\t%s\n' "$name" "$status" >> "$tmp/readahead.tsv"
                [ "$server" != nbdcurld ] || broken+=("readahead: nbdcurld $status")
            fi
        done
        report ""
        report "== readahead: fio nbd engine, sequential reads at QD1, 1 connection, ${random_time}s each (median of $runs runs) =="
        "$PY" - "$tmp/readahead.tsv" <<'EOF' > "$tmp/table.txt"
import statistics, sys
sizes = ['4 KiB', '64 KiB', '1 MiB']
rows = []
for line in open(sys.argv[1]):
    f = line.rstrip('\n').split('\t')
    if f[1] != 'ok':
        rows.append((f[0], f[1], None))
        continue
    mib = [statistics.median(float(r.split()[0]) / 1024 for r in col.split(','))
           for col in f[2:]]
    rows.append((f[0], 'ok', mib))
base = next((r for r in rows if r[0] == 'nbdcurld' and r[2]), None)
print('%-24s %s   %s' % ('server', ' '.join('%10s' % ('MiB/s ' + s.split()[0] + s.split()[1][0]) for s in sizes),
                           ' '.join('%9s' % ('nbdc/peer') for s in sizes)))
for name, status, mib in rows:
    if mib is None:
        print('%-24s %s' % (name, status))
        continue
    rel = ' '.join('%9.2f' % (b / m) if base and m else '%9s' % '-'
                   for b, m in zip(base[2] if base else mib, mib))
    print('%-24s %s   %s' % (name, ' '.join('%10.1f' % m for m in mib), rel))
EOF
        report_file "$tmp/table.txt"
    else
        report "" "== readahead: skipped (fio with the nbd engine is not installed) =="
    fi
fi

# ---- completion latency at queue depth 16 (latency) ----

# fio_lat URI JSON SECONDS JOB...: fio's nbd engine with the given job
# options (each "--name=..." starts a job; they all share the URI, one
# connection per job); prints one "NAME IOPS KIB_PER_S P50_US P99_US IOS"
# line per job, or fails (timeout, error, a job read nothing).
fio_lat() {
    local uri=$1 json=$2 secs=$3
    shift 3
    timeout -k 5 "$((secs + 30))" fio --ioengine=nbd --uri="$uri" \
        --time_based --runtime="$secs" --output-format=json \
        --output="$json" "$@" >/dev/null 2>>"$tmp/fio.log" || return 1
    "$PY" - "$json" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index('{'):])   # fio may print notes first
for job in j['jobs']:
    r = job['read']
    if job['error'] or r['total_ios'] == 0:
        sys.exit(1)
    p = r['clat_ns']['percentile']
    print('%s %.0f %d %.0f %.0f %d' % (job['jobname'], r['iops'], r['bw'],
          p['50.000000'] / 1000, p['99.000000'] / 1000, r['total_ios']))
EOF
}

# The latency cases: a label, then fio's job options.  Sequential reads
# at QD16 on one connection (what a guest's readahead or a copy tool
# queues), and a mixed case: a big sequential reader and a small random
# reader at once.  fio's nbd engine opens one connection per job, so the
# mixed case runs on two connections of one server (nbdcurld gives each
# its own fetcher; they share the front-end).
latency_cases() {
    local q="--rw=read --iodepth=16"
    printf '%s\n' \
        "seq4k|--name=seq $q --bs=4k" \
        "seq64k|--name=seq $q --bs=64k" \
        "seq256k|--name=seq $q --bs=256k" \
        "mixed|--name=big --rw=read --bs=1m --iodepth=8 --name=small --rw=randread --bs=4k --iodepth=8"
}

latency_section() {
    if [ "$has_fio" -ne 1 ]; then
        report "" "== latency: skipped (fio with the nbd engine is not installed) =="
        return 0
    fi
    local server name spid status case label opts i line results
    : > "$tmp/latency.tsv"
    for server in nbdcurld nbdkit; do
        case $server in
            nbdcurld) name=nbdcurld ;;
            nbdkit) name="nbdkit curl"
                [ "$has_nbdkit" -eq 1 ] || { printf '%s\tskipped: not installed\n' "$name" >> "$tmp/latency.tsv"; continue; } ;;
        esac
        if ! "serve_$server"; then
            printf '%s\tfailed: did not start\n' "$name" >> "$tmp/latency.tsv"
            [ "$server" != nbdcurld ] || broken+=("latency: nbdcurld did not start")
            continue
        fi
        spid=$bg_pid
        status=ok
        while IFS='|' read -r label opts; do
            for i in $(seq "$runs"); do
                say "latency: $name, $label, run $i of $runs (${random_time}s)"
                # shellcheck disable=SC2086 # opts are words on purpose
                if line=$(fio_lat "$buri" "$tmp/lat-$server-$label-$i.json" \
                              "$random_time" $opts); then
                    printf '%s\t%s\t%s\n' "$name" "$label" "${line//$'\n'/;}" >> "$tmp/latency.tsv"
                else
                    status="failed ($label run $i timed out or had errors)"
                    break 2
                fi
            done
        done < <(latency_cases)
        stop_bg "$spid"
        if [ "$status" != ok ]; then
            printf '%s\t%s\n' "$name" "$status" >> "$tmp/latency.tsv"
            [ "$server" != nbdcurld ] || broken+=("latency: nbdcurld $status")
        fi
    done
    report ""
    report "== latency: fio nbd engine, sequential reads at QD16 on 1 connection; mixed: 1 MiB sequential (QD8) and 4 KiB random (QD8) reads on 2 connections; ${random_time}s each (median of $runs runs) =="
    "$PY" - "$tmp/latency.tsv" <<'EOF' > "$tmp/table.txt"
import statistics, sys
cases = [('seq4k', 'seq', '4 KiB seq'), ('seq64k', 'seq', '64 KiB seq'),
         ('seq256k', 'seq', '256 KiB seq'), ('mixed', 'big', 'mixed: 1 MiB seq'),
         ('mixed', 'small', 'mixed: 4 KiB rand')]
runs, failed, servers = {}, {}, []
for line in open(sys.argv[1]):
    f = line.rstrip('\n').split('\t')
    if f[0] not in servers:
        servers.append(f[0])
    if len(f) == 2:
        failed[f[0]] = f[1]
        continue
    for job in f[2].split(';'):
        j = job.split()
        runs.setdefault((f[0], f[1], j[0]), []).append([float(x) for x in j[1:5]])
def med(server, case, job):
    r = runs.get((server, case, job))
    if not r:
        return None
    return [statistics.median(x[k] for x in r) for k in range(4)]
print('%-20s %-12s %9s %9s %9s %9s   %s' % ('case', 'server', 'IOPS', 'MiB/s',
      'p50 us', 'p99 us', 'nbdc/peer: IOPS p50 p99'))
for case, job, label in cases:
    base = med('nbdcurld', case, job)
    for s in servers:
        m = med(s, case, job)
        if m is None:
            print('%-20s %-12s %s' % (label, s, failed.get(s, 'no result')))
            continue
        rel = ''
        if base and s != 'nbdcurld' and all(m):
            rel = '%.2f %.2f %.2f' % (base[0] / m[0], base[2] / m[2], base[3] / m[3])
        print('%-20s %-12s %9.0f %9.1f %9.0f %9.0f   %s' % (label, s, m[0],
              m[1] / 1024, m[2], m[3], rel))
base, peer = med('nbdcurld', 'seq256k', 'seq'), med('nbdkit curl', 'seq256k', 'seq')
if base and peer:
    print('target 256 KiB seq QD16 p99 <= nbdkit curl: %.0f vs %.0f us (%s)'
          % (base[3], peer[3], 'met' if base[3] <= peer[3] else 'NOT met'))
else:
    print('target 256 KiB seq QD16 p99 <= nbdkit curl: not measured')
EOF
    report_file "$tmp/table.txt"
}

if want latency; then
    latency_section
fi

# ---- memory ----

# copy_sampled PID URI NAME: nbdcopy URI while sampling PID's tree;
# leaves the peaks in mem-NAME.json.
copy_sampled() {
    local pid=$1 uri=$2 name=$3 spid rc=0
    rm -f "$tmp/stop"
    "$PY" "$tmp/mem.py" sample "$pid" "$tmp/stop" "$tmp/mem-$name.json" &
    spid=$!
    timeout -k 10 "$copy_timeout" nbdcopy "$uri" null: || rc=$?
    touch "$tmp/stop"
    wait "$spid" || true
    return "$rc"
}

if want memory; then
    report ""
    report "== memory: nbdcopy URI null: (4 connections), sampled every 0.2 s =="
    if serve_nbdcurld; then
        npid=$bg_pid nuri=$buri
        say "memory: nbdcurld during a copy"
        if copy_sampled "$npid" "$nuri" nbdcurld; then
            n_pss=$(json_get "$tmp/mem-nbdcurld.json" pss)
            n_rss=$(json_get "$tmp/mem-nbdcurld.json" rss)
            n_procs=$(json_get "$tmp/mem-nbdcurld.json" procs)
            n_fe=$(json_get "$tmp/mem-nbdcurld.json" fe_pss)
            n_shm=$(json_get "$tmp/mem-nbdcurld.json" shmem)
            report "nbdcurld peak PSS, all processes ($n_procs):  $(mib "$n_pss") MiB (RSS sum $(mib "$n_rss") MiB, front-end PSS $(mib "$n_fe") MiB, data areas $(mib "$n_shm") MiB)"
        else
            report "nbdcurld: the copy FAILED"
            broken+=("memory: nbdcurld copy")
            n_pss=""
        fi
        for kind in nbdkit nbdkit_mc; do
            [ "$has_nbdkit" -eq 1 ] || break
            [ "$kind" = nbdkit ] || [ "$has_multiconn" -eq 1 ] || continue
            label="nbdkit curl"
            [ "$kind" = nbdkit ] || label="nbdkit curl multi-conn"
            "serve_$kind" || { report "$label: did not start"; continue; }
            kpid=$bg_pid
            say "memory: $label during a copy"
            if copy_sampled "$kpid" "$buri" "$kind"; then
                k_rss=$(json_get "$tmp/mem-$kind.json" rss)
                k_pss=$(json_get "$tmp/mem-$kind.json" pss)
                line="$label peak RSS: $(mib "$k_rss") MiB (PSS $(mib "$k_pss") MiB)"
                if [ -n "$n_pss" ]; then
                    line+="; nbdcurld PSS / $label RSS = $(awk -v a="$n_pss" -v b="$k_rss" 'BEGIN { printf "%.2f", a / b }')"
                    [ "$kind" = nbdkit ] &&
                        line+=" (target <= 1: $(awk -v a="$n_pss" -v b="$k_rss" 'BEGIN { print (a <= b) ? "met" : "NOT met" }'))"
                fi
                report "$line"
            else
                report "$label: the copy failed"
            fi
            stop_bg "$kpid"
        done

        # Many clients connected at once.
        if [ "$has_pynbd" -eq 1 ]; then
            s=$("$PY" "$tmp/mem.py" once "$npid")
            idle_fe_pss=$(printf '%s' "$s" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["fe_pss"])')
            idle_fe_rss=$(printf '%s' "$s" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["fe_rss"])')
            rm -f "$tmp/ready" "$tmp/stop"
            say "memory: $mem_clients clients connected"
            "$PY" "$tmp/clients.py" "$nuri" "$mem_clients" "$tmp/ready" "$tmp/stop" \
                2>"$tmp/clients.log" &
            cpid=$!
            for i in $(seq 600); do
                [ -e "$tmp/ready" ] && break
                kill -0 "$cpid" 2>/dev/null || break
                sleep 0.1
            done
            if [ -e "$tmp/ready" ]; then
                sleep 0.5
                s=$("$PY" "$tmp/mem.py" once "$npid")
                read -r fe_pss fe_rss all_pss procs < <(printf '%s' "$s" |
                    "$PY" -c 'import json,sys; j = json.load(sys.stdin); print(j["fe_pss"], j["fe_rss"], j["pss"], j["procs"])')
                report "front-end with $mem_clients clients connected: PSS $(mib "$fe_pss") MiB, RSS $(mib "$fe_rss") MiB (idle: PSS $(mib "$idle_fe_pss") MiB, RSS $(mib "$idle_fe_rss") MiB); all $procs processes: PSS $(mib "$all_pss") MiB"
            else
                report "front-end with $mem_clients clients connected: the clients could not connect ($(tail -n 1 "$tmp/clients.log"))"
                broken+=("memory: $mem_clients clients could not connect")
            fi
            touch "$tmp/stop"
            wait "$cpid" || true
        else
            report "front-end with $mem_clients clients: skipped (python3-libnbd not installed)"
        fi

        # Growth with the number of requests served: the same server,
        # after 1 copy and after $growth_copies.
        say "memory: front-end after 1 and after $growth_copies copies"
        fresh_ok=1
        serve_nbdcurld && gpid=$bg_pid guri=$buri || fresh_ok=0
        if [ "$fresh_ok" -eq 1 ]; then
            for i in $(seq "$growth_copies"); do
                if ! timeout -k 10 "$copy_timeout" nbdcopy "$guri" null:; then
                    fresh_ok=0
                    break
                fi
                if [ "$i" -eq 1 ] || [ "$i" -eq "$growth_copies" ]; then
                    s=$("$PY" "$tmp/mem.py" once "$gpid")
                    read -r g_rss g_pss < <(printf '%s' "$s" |
                        "$PY" -c 'import json,sys; j = json.load(sys.stdin); print(j["fe_rss"], j["fe_pss"])')
                    eval "g_rss_$i=$g_rss g_pss_$i=$g_pss"
                fi
            done
            stop_bg "$gpid"
        fi
        if [ "$fresh_ok" -eq 1 ]; then
            eval "last_rss=\$g_rss_$growth_copies last_pss=\$g_pss_$growth_copies"
            report "front-end RSS after 1 copy: $(mib "$g_rss_1") MiB, after $growth_copies: $(mib "$last_rss") MiB (PSS $(mib "$g_pss_1") -> $(mib "$last_pss") MiB; growth $(( last_rss - g_rss_1 )) KiB)"
        else
            report "front-end growth: a copy FAILED"
            broken+=("memory: nbdcurld copy (growth)")
        fi
        stop_bg "$npid"
    else
        report "nbdcurld did not start"
        broken+=("memory: nbdcurld did not start")
    fi

    # The price of less memory: the same copy with smaller per-client
    # budgets (--client-memory), each timed once while sampled.
    for cm in 16M 4M 1M; do
        if [ "$cm" = 16M ]; then
            args=() label="default (16M)"
        else
            args=(--client-memory="$cm") label="--client-memory=$cm"
        fi
        serve_nbdcurld "${args[@]}" || { report "nbdcurld $label: did not start"; continue; }
        cpid=$bg_pid
        say "memory: nbdcurld $label during a copy"
        if copy_sampled "$cpid" "$buri" "cm-$cm"; then
            : > "$tmp/cm-times"
            for i in $(seq "$runs"); do
                t0=$(date +%s.%N)
                timeout -k 10 "$copy_timeout" nbdcopy "$buri" null: || break
                t1=$(date +%s.%N)
                awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >> "$tmp/cm-times"
            done
            med=$(sort -n "$tmp/cm-times" | awk '{ t[NR] = $1 } END { if (NR) printf "%.2f", t[int((NR + 1) / 2)]; else print "?" }')
            report "nbdcurld $label: copy median $med s of $runs, peak PSS $(mib "$(json_get "$tmp/mem-cm-$cm.json" pss)") MiB (data areas $(mib "$(json_get "$tmp/mem-cm-$cm.json" shmem)") MiB)"
        else
            report "nbdcurld $label: the copy FAILED"
            broken+=("memory: nbdcurld $label copy")
        fi
        stop_bg "$cpid"
    done
fi

# ---- stalls ----

if want stall; then
    report ""
    report "== stall: $stall_copies full copies and $stall_random random-read runs (${random_time}s each) against one nbdcurld =="
    if serve_nbdcurld; then
        spid=$bg_pid
        ok=0 failed=0 timedout=0
        : > "$tmp/stall-times"
        for i in $(seq "$stall_copies"); do
            say "stall: copy $i of $stall_copies"
            t0=$(date +%s.%N)
            rc=0
            timeout -k 10 "$copy_timeout" nbdcopy "$buri" null: 2>>"$tmp/stall.log" || rc=$?
            t1=$(date +%s.%N)
            awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >> "$tmp/stall-times"
            case $rc in
                0) ok=$((ok + 1)) ;;
                124|137) timedout=$((timedout + 1)) ;;
                *) failed=$((failed + 1)) ;;
            esac
        done
        times=$(sort -n "$tmp/stall-times" | awk '{ t[NR] = $1 } END {
            printf "min %.2f s, median %.2f s, max %.2f s", t[1], t[int((NR + 1) / 2)], t[NR] }')
        report "copies: $ok finished, $failed failed, $timedout timed out (>${copy_timeout}s); $times"
        [ $((failed + timedout)) -eq 0 ] ||
            broken+=("stall: $failed copies failed, $timedout timed out")
        if [ "$has_fio" -eq 1 ]; then
            rok=0 rfail=0 ios=0
            for i in $(seq "$stall_random"); do
                say "stall: random-read run $i of $stall_random"
                if line=$(fio_run "$buri" "$tmp/stall-fio.json" "$random_time"); then
                    rok=$((rok + 1))
                    ios=$((ios + ${line##* }))
                else
                    rfail=$((rfail + 1))
                fi
            done
            report "random-read runs: $rok finished, $rfail failed or timed out; $ios requests answered"
            [ "$rfail" -eq 0 ] || broken+=("stall: $rfail random-read runs failed")
        else
            report "random-read runs: skipped (fio with the nbd engine is not installed)"
        fi
        if kill -0 "$spid" 2>/dev/null; then
            report "nbdcurld still running afterwards: yes"
        else
            report "nbdcurld still running afterwards: NO"
            broken+=("stall: nbdcurld exited")
        fi
        stop_bg "$spid"
    else
        report "nbdcurld did not start"
        broken+=("stall: nbdcurld did not start")
    fi
fi

# ---- machine ----

first() { "$@" 2>&1 | head -n 1 || true; }
report ""
report "== machine =="
report "$(nproc) CPUs: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1); kernel $(uname -r); $(awk '/MemTotal/ { printf "%.0f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
report "nbdcurld: $(first "$NBDCURLD" --version) ($NBDCURLD, git $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?'))"
versions="$(first nbdcopy --version); $(first /usr/sbin/nginx -v)"
[ "$has_nbdkit" -eq 0 ] || versions+="; $(first nbdkit --version)"
[ "$has_qemu" -eq 0 ] || versions+="; $(first qemu-nbd --version)"
[ "$has_curl" -eq 0 ] || versions+="; $(curl --version | head -n 1 | grep -o 'libcurl/[^ ]*')"
[ "$has_hyperfine" -eq 0 ] || versions+="; $(first hyperfine --version)"
[ "$has_fio" -eq 0 ] || versions+="; $(first fio --version)"
report "$versions"
report "image: $image_desc, served by nginx on 127.0.0.1 (sendfile, keep-alive), page cache warm"
for t in "${missing_tools[@]}"; do
    report "not installed, skipped: $t"
done
report ""
report "Note: a benchmark on a shared or busy machine is noisy; compare ratios"
report "from one run rather than times across runs.  qemu-nbd runs in the"
report "background with readahead 0 and is timed through nbdcopy --requests=8"
report "(its curl driver hangs with more requests in flight)."

if [ ${#broken[@]} -gt 0 ]; then
    report ""
    for b in "${broken[@]}"; do
        report "nbdcurld FAILED: $b"
    done
    exit 1
fi
exit 0
