# functions.sh: shared helpers for nbdcurld's shell tests (bash).
#
# Every test (in a folder beside lib/) starts with
#     source "$(dirname "$0")/../lib/functions.sh"
# and exits 0 (pass), 1 (fail) or 77 (skip, meson's code).  Each test gets
# a private directory $tmp as its working directory; on exit every process
# the test started through these helpers is killed and $tmp is removed.

# Run each test in its own session, so that leftover_processes sees only
# this test's processes.  meson already does this; by hand, do it here.
if [ "$(ps -o sid= -p $$ | tr -d ' ')" != "$$" ]; then
    exec setsid -w bash "$0" "$@"
fi

# $srcdir is tests/, the folder above this one, as meson's environment has it.
srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# What every private nginx shares (nginx_launch, free_port), and stop_pid.
source "$srcdir/lib/nginx.sh"

# meson passes NBDCURLD; by hand, use the usual build directory.
NBDCURLD=${NBDCURLD:-$srcdir/../build/src/nbdcurld}
NBDCURLD=$(realpath "$NBDCURLD")
if [ ! -x "$NBDCURLD" ]; then
    echo "$0: nbdcurld not found at $NBDCURLD (build it, or set NBDCURLD)" >&2
    exit 1
fi
export NBDCURLD

# Debian's python has the nbd module; a python3 earlier on PATH (pyenv)
# may not, and nbdsh runs whatever "python3" PATH gives it.
PY=/usr/bin/python3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nbdcurld-test.XXXXXX")
mkdir "$tmp/bin"
ln -s "$PY" "$tmp/bin/python3"
export PATH="$tmp/bin:$PATH"
cd "$tmp"

# ---- cleanup ----

# Commands run at exit, last registered first (like nbdkit's cleanup_fn).
_cleanup_fns=()
cleanup_fn() { _cleanup_fns+=("$*"); }

# Kill PID at exit: TERM, then KILL if it is still there after 5 s.
kill_on_exit() { cleanup_fn stop_pid "$1"; }

_cleanup() {
    local status=$? i
    set +e
    trap '' HUP INT PIPE TERM   # finish cleaning up whatever happens
    for (( i = ${#_cleanup_fns[@]} - 1; i >= 0; i-- )); do
        eval "${_cleanup_fns[i]}"
    done
    # On failure, the server logs are the first thing anyone wants.
    if [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then
        for f in "$tmp"/*.log; do
            [ -s "$f" ] || continue
            echo "---- $(basename "$f") (last 40 lines) ----" >&2
            tail -n 40 "$f" >&2
        done
    fi
    cd /
    rm -rf "$tmp"
    exit "$status"
}
trap _cleanup EXIT
# Signals run the EXIT trap too (a closed stdout pipe included).
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 141' PIPE
trap 'exit 143' TERM

# ---- small helpers ----

fail() { echo "$0: FAIL: $*" >&2; exit 1; }

# Skip the test (exit 77) unless every program named is available.
requires() {
    local cmd
    for cmd in "$@"; do
        if ! command -v "$cmd" >/dev/null 2>&1; then
            echo "$0: SKIP: $cmd is not installed" >&2
            exit 77
        fi
    done
}

# Skip unless Debian's python has libnbd's bindings (python3-libnbd).
requires_python_nbd() {
    if ! $PY -c 'import nbd' 2>/dev/null; then
        echo "$0: SKIP: $PY cannot import nbd (python3-libnbd)" >&2
        exit 77
    fi
}

# Succeeds only if the command fails (and does not crash with a signal).
expect_fail() {
    local status=0
    "$@" || status=$?
    if [ "$status" -eq 0 ]; then
        fail "expected failure, but it succeeded: $*"
    fi
    if [ "$status" -gt 128 ] && [ "$status" -ne 255 ]; then
        fail "killed by signal $((status - 128)): $*"
    fi
    return 0
}

# The waits below for a server to start (its socket, its port, its pid
# file), a check that costs next to nothing, look every POLL_SECONDS, so
# that a test goes on soon after the server is up; each still gives up
# after as many seconds as it says.
POLL_SECONDS=0.02
POLLS_PER_SECOND=50

# eventually SECONDS COMMAND...: run COMMAND every 0.1 s until it
# succeeds (status 0) or SECONDS have passed (status 1).  For what another
# process does in its own time: a log line, a request the web server saw.
eventually() {
    local tries=$(($1 * 10))
    shift
    while ! "$@"; do
        tries=$((tries - 1))
        [ "$tries" -gt 0 ] || return 1
        sleep 0.1
    done
}

md5_of() { md5sum < "$1" | cut -d' ' -f1; }

# make_image FILE SIZE: SIZE in bytes or with head's suffixes (10M = 10 MiB).
make_image() { head -c "$2" /dev/urandom > "$1"; }

# ---- web servers ----

# start_nginx DIR [LISTEN_OPTIONS [SERVER_LINES]]: serve DIR at $NGINX_URL
# (http://127.0.0.1:$NGINX_PORT).  LISTEN_OPTIONS (e.g. "ssl") go on the
# listen line and SERVER_LINES (e.g. certificate lines) into the server
# block; a TLS caller builds its own URL from $NGINX_PORT.
start_nginx() {
    _nginx_dir=$1 _nginx_listen_options=${2:-} _nginx_server_lines=${3:-}
    requires /usr/sbin/nginx
    nginx_launch "$tmp" _nginx_conf ||
        fail "nginx did not start: $(tail -n 5 "$tmp/nginx-error.log" 2>/dev/null)"
    kill_on_exit "$NGINX_PID"
    NGINX_URL=http://127.0.0.1:$NGINX_PORT
}

# start_nginx_self_signed DIR SAN: start_nginx DIR over https, with a
# certificate for localhost signed by its own key, whose subjectAltName
# is SAN ("DNS:localhost, IP:127.0.0.1"); key and certificate in
# private/ (mode 0700).  The caller builds its URL from $NGINX_PORT.
start_nginx_self_signed() {
    mkdir -p private
    chmod 700 private
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
        -addext "subjectAltName = $2" \
        -keyout private/key.pem -out private/cert.pem 2>openssl.err ||
        fail "cannot make a self-signed certificate: $(cat openssl.err)"
    start_nginx "$1" ssl "ssl_certificate $tmp/private/cert.pem;
        ssl_certificate_key $tmp/private/key.pem;"
}
_nginx_conf() {
    cat <<EOF
$(nginx_head "$tmp" 1 256)
http {
$(nginx_http_conf "$tmp")
    types { application/octet-stream img; }
    sendfile on;
    server {
        listen 127.0.0.1:$1 $_nginx_listen_options;
        root $_nginx_dir;
        $_nginx_server_lines
    }
}
EOF
}

# port_from FILE WHAT: the port a server started in the background prints
# as the first line of FILE once it listens (waits up to 10 s).
port_from() {
    local file=$1 what=$2 i
    for i in $(seq $((10 * POLLS_PER_SECOND))); do
        [ -s "$file" ] && break
        sleep "$POLL_SECONDS"
    done
    [ -s "$file" ] || fail "$what did not start"
    head -n 1 "$file"
}

# server_cert_ext FILE: openssl x509 -extfile lines for a test server's
# certificate: for localhost and 127.0.0.1, TLS server use only.
server_cert_ext() {
    cat > "$1" <<'EOF'
basicConstraints = CA:FALSE
keyUsage = digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
EOF
}

# start_web_server DIR: serve DIR with tests/lib/web-server.py at $WEB_URL
# (paths /MODE/FILE, see web-server.py); its request log is $WEB_LOG.
start_web_server() {
    local dir=$1 i
    WEB_LOG=$tmp/web-server.log
    # Made first, so the loop below never reads a file the shell has not
    # created yet.
    : > "$tmp/web.port"
    $PY "$srcdir/lib/web-server.py" --log "$WEB_LOG" "$dir" > "$tmp/web.port" &
    local pid=$!
    kill_on_exit "$pid"
    # It prints its port once it listens.
    for i in $(seq $((10 * POLLS_PER_SECOND))); do
        WEB_PORT=$(head -n1 "$tmp/web.port" 2>/dev/null || true)
        [ -n "$WEB_PORT" ] && break
        kill -0 "$pid" 2>/dev/null || fail "web-server.py did not start"
        sleep "$POLL_SECONDS"
    done
    [ -n "$WEB_PORT" ] || fail "web-server.py did not print its port"
    WEB_URL=http://127.0.0.1:$WEB_PORT
}

# start_wan_proxy NAME TARGET_PORT DELAY_MS [RATE_MBPS]: tests/wan-proxy.c
# on a free port of 127.0.0.1 in front of 127.0.0.1:TARGET_PORT, adding
# DELAY_MS to every round trip and, with RATE_MBPS, capping each
# connection at RATE_MBPS * 10^6 bytes/s; sets WAN_PORT.  Its log is
# NAME.log.
start_wan_proxy() {
    local name=$1 target=$2 delay=$3 rate=${4:-} pid
    local proxy=${WAN_PROXY:-$srcdir/../build/tests/wan-proxy}
    [ -x "$proxy" ] || fail "wan-proxy not found at $proxy (build it, or set WAN_PROXY)"
    "$proxy" --listen 127.0.0.1:0 --target "127.0.0.1:$target" --delay-ms "$delay" \
        ${rate:+--rate-mbps "$rate"} --port-file "$tmp/$name.port" \
        </dev/null >"$tmp/$name.log" 2>&1 &
    pid=$!
    kill_on_exit "$pid"
    WAN_PORT=$(port_from "$tmp/$name.port" "wan-proxy $name")
}

# start_tinyproxy NAME [CONFIG LINES]: Debian's tinyproxy on a free port of
# 127.0.0.1, its configuration NAME.conf and log NAME-proxy.log in the
# current directory; sets PROXY_PORT (tests/web/test-proxy.sh,
# test-nbdkit-command-lines.sh).
start_tinyproxy() {
    local name=$1 extra=${2:-} port i user=""
    # Unprivileged: as root, tinyproxy becomes nobody (its log is made
    # writable for that).
    [ "$(id -u)" -ne 0 ] || user=$'User nobody\nGroup nogroup'
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        cat > "$name.conf" <<EOF
Port $port
Listen 127.0.0.1
Timeout 60
LogFile "$tmp/$name-proxy.log"
LogLevel Info
MaxClients 64
Allow 127.0.0.1
$user
$extra
EOF
        : > "$name-proxy.log"
        chmod 666 "$name-proxy.log"
        tinyproxy -d -c "$name.conf" > "$name-proxy.out" 2>&1 &
        local pid=$!
        kill_on_exit "$pid"
        for i in $(seq $((5 * POLLS_PER_SECOND))); do
            if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                PROXY_PORT=$port
                return 0
            fi
            kill -0 "$pid" 2>/dev/null || break
            sleep "$POLL_SECONDS"
        done
        stop_pid "$pid"
    done
    fail "tinyproxy did not start: $(tail -n 5 "$name-proxy.out")"
}

# copy_checked NAME ARGS...: nbdcurld -v -r ARGS serves an export while
# nbdcopy copies it to NAME.img, which must match $sum; nbdcurld's stderr
# goes to NAME.log (tests/web/test-proxy.sh, test-unix-socket.sh,
# test-cookies.sh).
copy_checked() {
    local name=$1
    shift
    echo "== $name"
    rm -f "$name.img"
    "$NBDCURLD" -v -r --run "nbdcopy \"\$uri\" $name.img" "$@" 2>"$name.log" </dev/null ||
        fail "$name: nbdcurld $* failed: $(tail -n 5 "$name.log")"
    [ "$(md5_of "$name.img")" = "$sum" ] || fail "$name: the copy differs"
    sleep 0.2       # servers log a request once its reply is out
}

# copy_export NAME: nbdcopy copies export NAME of the running nbdcurld
# (start_nbdcurld) to NAME.img, which must match $sum.
copy_export() {
    echo "== $1"
    rm -f "$1.img"
    nbdcopy "$(nbd_uri "$1")" "$1.img" || fail "$1: the copy failed"
    [ "$(md5_of "$1.img")" = "$sum" ] || fail "$1: the copy differs"
    sleep 0.1       # the web server logs a request once it has answered it
}

# refused_at_start NAME PATTERN ARGS...: nbdcurld -r ARGS fails at start
# (--run's command never runs) with a message matching PATTERN (grep -iE),
# in refused-NAME.log (tests/web/test-http-version.sh, test-unix-socket.sh,
# test-proxy.sh, test-cookies.sh).
refused_at_start() {
    local name=$1 pattern=$2 rc=0
    shift 2
    echo "== refused $name"
    rm -f "$tmp/ran"
    "$NBDCURLD" -r --run "touch '$tmp/ran'" "$@" </dev/null >"refused-$name.log" 2>&1 || rc=$?
    [ "$rc" -ne 0 ] || fail "$name: accepted: nbdcurld $*"
    [ "$rc" -lt 128 ] || fail "$name: killed by signal $((rc - 128))"
    [ ! -e ran ] || fail "$name: refused only after serving"
    grep -qiE -- "$pattern" "refused-$name.log" ||
        fail "$name: the message does not match /$pattern/: $(cat "refused-$name.log")"
}

# ---- nbdcurld ----

# start_nbdcurld ARGS...: run nbdcurld in the foreground on the Unix socket
# $NBD_SOCK, log in $NBDCURLD_LOG, and set NBD_URI (append an export name
# as "${NBD_URI%%\?*}NAME?socket=..." or use nbd_uri NAME).
start_nbdcurld() {
    local i
    NBD_SOCK=$tmp/nbd.sock
    NBDCURLD_LOG=$tmp/nbdcurld.log
    rm -f "$NBD_SOCK"
    "$NBDCURLD" -f --unix "$NBD_SOCK" "$@" 2>>"$NBDCURLD_LOG" &
    NBDCURLD_PID=$!
    # Killing the supervisor takes its children with it.
    kill_on_exit "$NBDCURLD_PID"
    for i in $(seq $((10 * POLLS_PER_SECOND))); do
        [ -S "$NBD_SOCK" ] && break
        kill -0 "$NBDCURLD_PID" 2>/dev/null ||
            fail "nbdcurld exited at start: $NBDCURLD $*"
        sleep "$POLL_SECONDS"
    done
    [ -S "$NBD_SOCK" ] || fail "nbdcurld did not create $NBD_SOCK"
    NBD_URI="nbd+unix:///?socket=$NBD_SOCK"
}

# wait_started SOCKET PIDFILE LOG: wait up to 10 s for an nbdcurld started
# by hand to have made SOCKET and written PIDFILE; fail with LOG's end.
wait_started() {
    local i
    for i in $(seq $((10 * POLLS_PER_SECOND))); do
        [ -S "$1" ] && [ -s "$2" ] && return 0
        sleep "$POLL_SECONDS"
    done
    fail "nbdcurld did not start: $(tail -n 5 "$3" 2>/dev/null)"
}

# nbd_uri NAME: the URI of export NAME of the running nbdcurld.
nbd_uri() { echo "nbd+unix:///$1?socket=$NBD_SOCK"; }

# Stop the nbdcurld started last (e.g. to restart it with other options).
stop_nbdcurld() { stop_pid "$NBDCURLD_PID"; }

# Processes named like nbdcurld's in this session (meson gives every test
# its own session): anything listed after a server was stopped was leaked.
leftover_processes() {
    pgrep -s 0 -l '^nbdcurld' || true
}

# read_ranges URI FILE OFFSET:COUNT...: read those ranges of URI one after
# the other and print "OFFSET COUNT ok|EIO SECONDS" for each; fails on
# wrong data or another errno (tests/lib/read-ranges.py).
read_ranges() { $PY "$srcdir/lib/read-ranges.py" "$@"; }

# start_two_origins DIR FIRST_LOG SECOND_LOG: two tests/lib/web-server.py
# serving DIR on one port (a fetcher's sandbox allows only the URL's
# port), on 127.0.0.1 and 127.0.0.2: another origin a redirect of the
# first (/redirect-to/127.0.0.2:PORT/...) can lead to.  Sets TWO_ORIGINS_PORT.
start_two_origins() {
    $PY "$srcdir/lib/web-server.py" --bind 127.0.0.2 --log "$tmp/$3" "$1" > second.port &
    kill_on_exit $!
    TWO_ORIGINS_PORT=$(port_from second.port "the web server on 127.0.0.2")
    $PY "$srcdir/lib/web-server.py" --bind 127.0.0.1 --port "$TWO_ORIGINS_PORT" \
        --log "$tmp/$2" "$1" > first.port &
    kill_on_exit $!
    port_from first.port "the web server on 127.0.0.1:$TWO_ORIGINS_PORT" > /dev/null
}

# web_requests NAME: the web server's log lines for NAME.img (in any mode).
web_requests() { grep -E "^[A-Z]+ /[^ /]+/$1\.img[ ?]" "$WEB_LOG" || true; }

# web_every NAME STRING...: requests for NAME.img reached the web server,
# a range read among them, and every one of their log lines contains
# every STRING.
web_every() {
    local name=$1 lines s bad
    shift
    lines=$(web_requests "$name")
    [ -n "$lines" ] || fail "$name: no request reached the web server"
    grep -q '^GET .* range=bytes=[0-9]' <<<"$lines" ||
        fail "$name: no range read reached the web server: $lines"
    for s in "$@"; do
        bad=$(grep -vF -- "$s" <<<"$lines" || true)
        [ -z "$bad" ] || fail "$name: requests without '$s': $(head -n 3 <<<"$bad")"
    done
}

# www_image SIZE: a random image www/disk.img of SIZE, its directory made
# if need be, and $sum set to its MD5 (what a copy must match).
www_image() {
    mkdir -p www
    make_image www/disk.img "$1"
    sum=$(md5_of www/disk.img)
}

# serve_image SIZE: a random image www/disk.img of SIZE (as make_image),
# served by tests/lib/web-server.py at $WEB_URL/MODE/disk.img.
serve_image() {
    mkdir -p "$tmp/www"
    make_image "$tmp/www/disk.img" "$1"
    start_web_server "$tmp/www"
}

# serve_token_image SIZE LIFETIME DELAY: a random image www/disk.img of
# SIZE served by tests/lib/web-server.py at $WEB_URL/token/disk.img, only to
# requests with the current token (web-server.py, /token/): it changes
# every LIFETIME seconds (0: never) and is written to $pub/token; every
# GET waits DELAY seconds.  $pub is a directory scripts may read and
# write also as --user (nobody, when the tests run as root): $tmp is
# opened for traversal only.
serve_token_image() {
    local i
    chmod 711 "$tmp"
    pub=$tmp/pub
    mkdir -p "$tmp/www" "$pub"
    chmod 1777 "$pub"
    make_image "$tmp/www/disk.img" "$1"
    WEB_LOG=$tmp/web-server.log
    : > "$tmp/web.port"
    $PY "$srcdir/lib/web-server.py" --log "$WEB_LOG" --token-file "$pub/token" \
        --token-lifetime "$2" --token-delay "$3" "$tmp/www" > "$tmp/web.port" &
    kill_on_exit $!
    WEB_PORT=$(port_from "$tmp/web.port" "web-server.py")
    WEB_URL=http://127.0.0.1:$WEB_PORT
}

# check_direct_modes MODES PREPARED WHICH FALLBACK: what nbdcurld's log
# says of the direct path for each export of the associative array named
# MODES (export name -> "direct", or the words its reads fall back to
# libcurl with).  PREPARED is the log's text after 'export "NAME": ' that
# says the path is ready, required of every export (WHICH=all) or of the
# direct ones only (WHICH=direct); FALLBACK, an extended regular
# expression after the same prefix, must precede the fallback's words for
# the others, and must never appear for the direct ones (as "reads go
# through libcurl from now on").  Servers that behave give no warning.
check_direct_modes() {
    local -n _modes=$1
    local prepared=$2 which=$3 fallback=$4 m
    for m in "${!_modes[@]}"; do
        if [ "$which" = all ] || [ "${_modes[$m]}" = direct ]; then
            grep -q "export \"$m\": $prepared" "$NBDCURLD_LOG" ||
                fail "$m: the direct path was not prepared"
        fi
        if [ "${_modes[$m]}" = direct ]; then
            ! grep -q "export \"$m\": reads go through libcurl from now on" "$NBDCURLD_LOG" ||
                fail "$m: reads went back to libcurl: $(grep "export \"$m\"" "$NBDCURLD_LOG" | tail -1)"
        else
            grep -Eq "export \"$m\": $fallback: .*${_modes[$m]}" "$NBDCURLD_LOG" ||
                fail "$m: no fallback to libcurl saying '${_modes[$m]}'"
        fi
    done
    ! grep -q 'warning' "$NBDCURLD_LOG" ||
        fail "warnings for servers that behave: $(grep warning "$NBDCURLD_LOG" | head -3)"
}
