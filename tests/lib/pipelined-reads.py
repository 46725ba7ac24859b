#!/usr/bin/python3
"""pipelined-reads.py URI FILE READS MAX_LENGTH: READS reads at random
offsets and lengths (1 to MAX_LENGTH bytes) of the NBD export at URI, from
4 connections at once, up to 64 in flight; each must be FILE's bytes.
The offsets follow from URI, so a failure repeats.  Exits non-zero on
wrong data (and on an error, which libnbd raises)."""

import random
import sys

import nbd


def main():
    uri, path, reads, max_length = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with open(path, "rb") as f:
        data = f.read()
    size = len(data)
    rnd = random.Random(uri)
    handles = []
    for _ in range(4):
        h = nbd.NBD()
        h.connect_uri(uri)
        handles.append(h)
    pending = []
    for i in range(reads):
        h = handles[i % 4]
        offset = rnd.randrange(size)
        count = rnd.randint(1, min(size - offset, max_length))
        buf = nbd.Buffer(count)
        pending.append((h, h.aio_pread(buf, offset), buf, offset, count))
        if len(pending) >= 64 or i == reads - 1:
            for h, cookie, buf, offset, count in pending:
                while not h.aio_command_completed(cookie):
                    h.poll(-1)
                if buf.to_bytearray() != data[offset:offset + count]:
                    sys.exit("%s: wrong data for %d bytes at %d" % (uri, count, offset))
            pending = []


if __name__ == "__main__":
    main()
