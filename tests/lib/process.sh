# process.sh: stopping a background process, shared by tests/lib/functions.sh
# and tests/benchmark.sh.  Sourced.

# stop_pid PID: SIGTERM, up to 5 s to exit (looked at every 20 ms, so
# that a stop is over soon after the process is), then SIGKILL (qemu-nbd
# stuck in its curl driver ignores SIGTERM), and reap it if it is our
# child.  Always returns 0, so it is safe under set -e.
stop_pid() {
    local pid=$1 i
    if kill "$pid" 2>/dev/null; then
        for i in $(seq 250); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.02
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    return 0
}
