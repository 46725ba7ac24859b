#!/usr/bin/env bash
# A direct read whose reply passed its checks and then handed the range to
# libcurl (the body came in one-byte segments, which fill the data pipe)
# gets the reply libcurl receives checked like any other: a 500 error
# page, another range, or a replaced object (another ETag), each with a
# body as long as the range, gives EIO and never those bytes (the reply
# checker, src/fetcher/web-reply.c, starts afresh for libcurl's request).
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires_python_nbd

serve_image 1M

# mode of tests/lib/web-server.py, and what nbdcurld's log says about the
# reply libcurl got.
declare -A says=(
    [fallback-500]='HTTP status 500'
    [fallback-range]='does not match the requested'
    [fallback-etag]='ETag "replaced"'
)
args=()
for m in "${!says[@]}"; do
    args+=(--export "$m=$WEB_URL/$m/disk.img")
done
# A 500 is worth a retry, and every retry's reply (the same error page)
# is checked again: still EIO, and quickly with short delays.  The other
# two are wrong data: never retried.
start_nbdcurld -r -v --retry-delay 0.01 "${args[@]}"

# 2 KiB reads: the data pipe takes them however small the kernel made it
# (two pages, past fs.pipe-user-pages-soft).  The first not at offset 0:
# a read there, then one further on in the first MiB, would fetch the
# rest of that MiB into the store, straight from the socket, one-byte
# segments or not.
for m in "${!says[@]}"; do
    echo "== $m"
    read_ranges "$(nbd_uri "$m")" www/disk.img 512:2048 65536:2048 520000:2048 \
        > "$m.out" || fail "$m: $(cat "$m.out")"
    cat "$m.out"
    [ "$(grep -c ' EIO ' "$m.out")" -eq 3 ] || fail "$m: a read did not fail"
    # Each read went direct, then to libcurl; otherwise this proves nothing.
    [ "$(grep -c "export \"$m\": a read goes through libcurl: .*pieces too small" \
          "$NBDCURLD_LOG")" -eq 3 ] ||
        fail "$m: not every read was handed from the direct path to libcurl"
    [ "$(grep -c "export \"$m\".*failed: .*${says[$m]}" "$NBDCURLD_LOG")" -eq 3 ] ||
        fail "$m: nbdcurld did not log '${says[$m]}' for every read"
    if [ "$m" = fallback-500 ]; then
        [ "$(grep -c "export \"$m\".*failed: .*(after 5 retries)" "$NBDCURLD_LOG")" -eq 3 ] ||
            fail "$m: not every read was retried 5 times"
    elif grep -q "export \"$m\".*retry 1 of" "$NBDCURLD_LOG"; then
        fail "$m: a reply with wrong data was retried"
    fi
done
