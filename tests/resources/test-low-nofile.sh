#!/usr/bin/env bash
# Under a low limit on open files nbdcurld starts, says how many clients
# fit, and serves them: the children's descriptors are placed at low
# fixed numbers before exec (child_place_fds), never at a number such as
# 100, which does not exist under `ulimit -n 100` or less (the URL checker
# would fail with status 127 and nbdcurld would not start).
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires nbdcopy

make_image disk.img 1M
sum=$(md5_of disk.img)

for limit in 64 40; do
    rm -f out.img
    (ulimit -n "$limit"
     exec "$NBDCURLD" -r --max-clients 8 "file://$tmp/disk.img" \
          --run 'nbdcopy --connections=1 "$uri" out.img') 2> err.log ||
        fail "ulimit -n $limit: nbdcurld failed: $(cat err.log)"
    [ "$(md5_of out.img)" = "$sum" ] || fail "ulimit -n $limit: the copy differs"
    # 40 descriptors hold 16 + 1 listener + 4 x 5 clients, not 8: said at start.
    if [ "$limit" = 40 ]; then
        grep -q "serving 5 clients at once, not 8" err.log ||
            fail "ulimit -n 40: no warning about the clients that fit: $(cat err.log)"
    fi
done

# Fewer descriptors than one client needs: a clear error at start.
(ulimit -n 20
 exec "$NBDCURLD" -r "file://$tmp/disk.img" --run 'sleep 2') 2> err.log &&
    fail "ulimit -n 20: nbdcurld started"
grep -q "for one client" err.log || fail "ulimit -n 20: unclear error: $(cat err.log)"
echo "ok"
