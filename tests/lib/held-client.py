#!/usr/bin/python3
# held-client.py URI IMAGE FIFO: a client that keeps its connection open,
# so that its fetcher lives, while a test does something to the server's
# processes.  It reads 4 KiB at 0 and prints "connected", waits until
# FIFO is written to, then reads 64 KiB at 512 KiB and prints "read after
# the wait: ok".  IMAGE (at least 576 KiB) is what the export holds; a
# read that returns other bytes fails the script.
import sys

import nbd

uri, path, fifo = sys.argv[1:4]
image = open(path, "rb").read()
h = nbd.NBD()
h.connect_uri(uri)
assert h.pread(4096, 0) == image[:4096], "wrong data at 0"
print("connected", flush=True)
open(fifo).read()
assert h.pread(65536, 512 * 1024) == image[512 * 1024:576 * 1024], "wrong data at 512 KiB"
h.shutdown()
print("read after the wait: ok", flush=True)
