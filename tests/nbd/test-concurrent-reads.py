#!/usr/bin/python3
"""Many clients, many pipelined reads at once, byte-exact.

Eight clients connect to one nbdcurld serving an image over HTTP (the
project's web server, so coalesced ranges and out-of-order replies are
exercised) and over file:, and each keeps up to 64 reads in flight with
libnbd's asynchronous API: odd sizes (1 byte to 1 MiB), odd offsets,
overlapping ranges, the first and last bytes.  Every buffer is compared
with the image.  The data area, the coalescing of sequential reads and the
front-end's reply queues are all under load here at once.
TAP output.
"""

import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import nbdraw as N                                       # noqa: E402

nbd = N.import_nbd()

SIZE = 48 * 1024 * 1024 + 4097            # odd on purpose
CLIENTS = 8
READS_PER_CLIENT = 400
IN_FLIGHT = 64


def plan(seed):
    """A mix of reads: sequential runs (which the fetcher coalesces),
    random odd ones, overlapping ones, and the edges."""
    rnd = random.Random(seed)
    reads = [(0, 1), (SIZE - 1, 1), (SIZE - 4097, 4097)]
    pos = rnd.randrange(0, SIZE // 2)
    while len(reads) < READS_PER_CLIENT:
        kind = rnd.random()
        if kind < 0.4:                       # sequential run
            ln = rnd.choice([4096, 65536, 262144, 1000003])
            if pos + ln > SIZE:
                pos = 0
            reads.append((pos, ln))
            pos += ln
        elif kind < 0.8:                     # anywhere, any size
            ln = rnd.randint(1, 1 << 20)
            reads.append((rnd.randrange(0, SIZE - ln + 1), ln))
        else:                                # overlapping the previous one
            off, ln = reads[-1]
            o2 = max(0, off + ln // 2 - 777)
            l2 = min(SIZE - o2, rnd.randint(1, 300000))
            reads.append((o2, l2))
    return reads


def clients_read_right(sock, image):
    # Clients run interleaved from one process: each poll serves one; the
    # server sees all eight connections busy at once.
    handles = []
    for i in range(CLIENTS):
        h = nbd.NBD()
        h.connect_unix(sock)
        handles.append({"h": h, "todo": plan(i), "pending": {}, "wrong": 0})
    while any(c["todo"] or c["pending"] for c in handles):
        for c in handles:
            h = c["h"]
            while c["todo"] and len(c["pending"]) < IN_FLIGHT:
                off, ln = c["todo"].pop()
                buf = nbd.Buffer(ln)
                c["pending"][h.aio_pread(buf, off)] = (buf, off, ln)
            if c["pending"]:
                h.poll(10)
            for cookie in [k for k in c["pending"] if h.aio_command_completed(k)]:
                buf, off, ln = c["pending"].pop(cookie)
                if buf.to_bytearray() != image[off:off + ln]:
                    c["wrong"] += 1
    for c in handles:
        c["h"].shutdown()
    return sum(c["wrong"] for c in handles)


def main():
    N.require_binary()
    N.watchdog(300)
    tmp = N.tmpdir()
    www = os.path.join(tmp, "www")
    os.mkdir(www)
    img = os.path.join(www, "img")
    N.make_image(img, SIZE)
    with open(img, "rb") as f:
        image = f.read()
    web = subprocess.Popen(["/usr/bin/python3", os.path.join(N.LIB, "web-server.py"), www],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           preexec_fn=N._pdeathsig)
    port = int(web.stdout.readline())
    failures = 0
    cases = [("http", "http://127.0.0.1:%d/good/img" % port), ("file", "file://" + img)]
    print("1..%d" % len(cases))
    try:
        for n, (name, url) in enumerate(cases, 1):
            srv = N.Server(["-r", url], tmp, name).start()
            try:
                wrong = clients_read_right(srv.sock, image)
                ok = wrong == 0 and srv.alive()
            except nbd.Error as e:
                ok, wrong = False, str(e)
            finally:
                srv.stop()
            print("%s %d - %s: %d clients x %d pipelined odd reads byte-exact%s" %
                  ("ok" if ok else "not ok", n, name, CLIENTS, READS_PER_CLIENT,
                   "" if ok else " (wrong: %s)" % wrong), flush=True)
            if not ok:
                failures += 1
                N.diag(srv.log_text()[-3000:])
    finally:
        web.kill()
        web.wait()
        N.rmtree(tmp)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
