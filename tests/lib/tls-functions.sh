# tls-functions.sh: what the NBD TLS tests (tests/tls/test-tls-*.sh) share,
# on top of tests/lib/functions.sh, which it sources.  Each such test starts
# with
#     source "$(dirname "$0")/../lib/tls-functions.sh"
#
# Keys and certificates are made at test time by tests/lib/make-tls-keys.sh in
# $PKI (see that script for the layout: client directories $PKI/client1,
# $PKI/client2, ..., PSK files $PKI/keys.psk, ...).
#
# URIs (libnbd's syntax):
#   nbds+unix:///EXPORT?socket=SOCK&tls-certificates=DIR   X.509
#   nbds+unix://USER@/EXPORT?socket=SOCK&tls-psk-file=FILE  PSK
#   nbds://127.0.0.1:PORT/EXPORT?tls-certificates=DIR       over TCP
# libnbd checks the server's certificate (CA and name) only over TCP: over
# a Unix socket it has no name to check it against, so tests of the
# server's certificate run over TCP.

source "$(dirname "${BASH_SOURCE[0]}")/functions.sh"

# make_tls_keys [--key-type ecdsa|rsa]: the keys and certificates in $PKI.
make_tls_keys() {
    requires certtool psktool
    PKI=$tmp/pki
    "$srcdir/lib/make-tls-keys.sh" "$@" "$PKI" > "$tmp/make-tls-keys.log" 2>&1 ||
        fail "make-tls-keys.sh failed: $(tail -n 5 "$tmp/make-tls-keys.log")"
}

# start_nbdcurld_tcp ARGS...: as start_nbdcurld, but listening on
# $NBD_HOST (default 127.0.0.1; ::1 works too) and a free port, $NBD_PORT.
# A port free a moment ago may be taken before nbdcurld binds it: then
# another is tried.
start_nbdcurld_tcp() {
    local _ i host=${NBD_HOST:-127.0.0.1}
    NBDCURLD_LOG=$tmp/nbdcurld.log
    for _ in 1 2 3 4 5; do
        NBD_PORT=$(free_port)
        "$NBDCURLD" -f -i "$host" -p "$NBD_PORT" "$@" 2>>"$NBDCURLD_LOG" &
        NBDCURLD_PID=$!
        for i in $(seq $((10 * POLLS_PER_SECOND))); do
            kill -0 "$NBDCURLD_PID" 2>/dev/null || break
            if (exec 3<>"/dev/tcp/$host/$NBD_PORT") 2>/dev/null; then
                kill_on_exit "$NBDCURLD_PID"
                return 0
            fi
            sleep "$POLL_SECONDS"
        done
        stop_pid "$NBDCURLD_PID"
    done
    fail "nbdcurld did not start on TCP: $NBDCURLD $*"
}

# x509_uri DIR [EXPORT]: the URI of EXPORT of the nbdcurld started last on
# a Unix socket, for a client whose tls-certificates directory is DIR.
x509_uri() { echo "nbds+unix:///${2:-}?socket=$NBD_SOCK&tls-certificates=$1"; }

# psk_uri USER FILE [EXPORT]: the same with PSK: USER's key in FILE.
psk_uri() { echo "nbds+unix://$1@/${3:-}?socket=$NBD_SOCK&tls-psk-file=$2"; }

# x509_tcp_uri DIR [EXPORT [HOST]]: over TCP (started by start_nbdcurld_tcp).
x509_tcp_uri() {
    echo "nbds://${3:-127.0.0.1}:$NBD_PORT/${2:-}?tls-certificates=$1"
}

# psk_tcp_uri USER FILE [EXPORT]
psk_tcp_uri() { echo "nbds://$1@127.0.0.1:$NBD_PORT/${3:-}?tls-psk-file=$2"; }

# Clients never wait for ever: a server that stops answering fails the test
# instead of hanging it.
CLIENT_TIMEOUT=${CLIENT_TIMEOUT:-30}

# client CMD...: run a client with a deadline; output in $tmp/client.out.
client() {
    timeout "$CLIENT_TIMEOUT" "$@" > "$tmp/client.out" 2>&1
}

# expect_works WHAT CMD...: the client must succeed.
expect_works() {
    local what=$1 status=0
    shift
    client "$@" || status=$?
    [ "$status" -eq 0 ] ||
        fail "$what: failed (status $status): $* :: $(tail -n 5 "$tmp/client.out")"
}

# expect_tls_info WHAT URI: nbdinfo --json URI works and reports TLS; its
# output stays in $tmp/client.out.
expect_tls_info() {
    expect_works "$1" nbdinfo --json "$2"
    grep -q '"TLS": true' "$tmp/client.out" ||
        fail "$1: nbdinfo does not report TLS: $(cat "$tmp/client.out")"
}

# expect_refused WHAT CMD...: the client must fail by itself (not time out,
# not die by a signal).  Whatever it printed is in $tmp/client.out.
expect_refused() {
    local what=$1 status=0
    shift
    client "$@" || status=$?
    case "$status" in
        0) fail "$what: succeeded, expected a refusal: $*" ;;
        124) fail "$what: no answer within ${CLIENT_TIMEOUT}s: $*" ;;
    esac
    if [ "$status" -gt 128 ]; then
        fail "$what: killed by signal $((status - 128)): $*"
    fi
    return 0
}

# same_bytes A B WHAT: the two files are identical.
same_bytes() { cmp -s "$1" "$2" || fail "$3: $1 and $2 differ"; }

# export_list URI: the export names nbdinfo --list shows, one a line, sorted
# (fails the test if nbdinfo fails).
export_list() {
    client nbdinfo --list --json "$1" ||
        fail "nbdinfo --list $1: $(tail -n 5 "$tmp/client.out")"
    $PY -c 'import json, sys
for e in json.load(open(sys.argv[1]))["exports"]:
    print(e["export-name"])' "$tmp/client.out" | sort
}

# expect_list WHO URI "a b ": nbdinfo --list of URI shows exactly those
# exports (sorted, each followed by a space); WHO names the client.
expect_list() {
    local got
    got=$(export_list "$2" | tr '\n' ' ')
    [ "$got" = "$3" ] || fail "$1: listed \"$got\", expected \"$3\""
}

# check_no_leftovers: nothing nbdcurld started is still running.
check_no_leftovers() {
    sleep 0.2
    [ -z "$(leftover_processes)" ] || fail "processes left: $(leftover_processes)"
}
