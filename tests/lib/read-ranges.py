#!/usr/bin/python3
# read-ranges.py: read ranges of an NBD export one after the other (libnbd)
# and say, per read, whether it returned the right bytes.
#
#   read-ranges.py URI FILE OFFSET:COUNT...
#
# FILE holds what the export should hold.  One line per read on stdout:
#   OFFSET COUNT ok|EIO SECONDS
# A read that returns other bytes ("WRONG DATA") or fails with another
# errno than EIO (the server's trouble, not the request's) ends the script
# with exit status 1; a failed connection, with 2.  The caller decides
# which reads had to fail.
import sys
import time

import nbd

uri, path = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    data = f.read()
h = nbd.NBD()
try:
    h.connect_uri(uri)
except nbd.Error as e:
    print("%s: connect failed: %s" % (uri, e), file=sys.stderr)
    sys.exit(2)
for arg in sys.argv[3:]:
    offset, count = (int(x) for x in arg.split(":"))
    start = time.monotonic()
    try:
        got = h.pread(count, offset)
        what = "ok" if got == data[offset:offset + count] else "WRONG"
    except nbd.Error as e:
        what = e.errno or str(e)
    print("%d %d %s %.1f" % (offset, count, what, time.monotonic() - start), flush=True)
    if what == "WRONG":
        sys.exit("%s: WRONG DATA for %d bytes at %d" % (uri, count, offset))
    if what not in ("ok", "EIO"):
        sys.exit("%s: read of %d bytes at %d failed with %s, not EIO" % (uri, count,
                                                                       offset, what))
