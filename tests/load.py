#!/usr/bin/python3
"""load.py: nbdcurld under load, in figures.  Not a test.

    tests/load.py [--only SECTIONS] [--peers LIST] [--serial N] [--clients N]
                  [--idle N] [--disconnects N] [--size MIB] [--read-kib K]

Serves a random image (--size MiB, default 256) with a private nginx on
127.0.0.1 (tests/lib/web-server.py when nginx is missing) and measures, for
nbdcurld -r and, where installed, nbdkit -r curl side by side:

  serial   --serial (100) clients one after the other, 50 ms apart (as
           users, scripts and nbdcopy's reconnections come): each
           connects, negotiates, GOes and reads 4 KiB: the GO-to-first-
           byte latency (p50 p90) and the server's CPU time per
           connection (every process of it, fetchers included); nbdcurld
           as by default (fetchers forked by its launcher), with every
           fetcher executed anew (--exec-fetchers, peer nbdcurld-exec),
           and with 4 spare fetchers (--spare-fetchers 4, peer
           nbdcurld-spares)
  many     --clients (256) raw clients connect, then all at once negotiate,
           GO and read --read-kib (1024) KiB each at their own offset,
           byte-exact: how many were served, the wall time, GO-to-first-
           byte latency percentiles (GO sent to the read's reply complete:
           p50 p90 p99 max), and the peak memory while it ran: the
           front-end's RSS (nbdkit: the process) and the PSS and RSS
           summed over every nbdcurld process (sampled every 0.25 s, and
           once when every client has read and none has closed yet)
  idle     --idle (500) TCP connections from 127.0.0.1 that never send a
           byte, then a good client (handshake, GO, 64 KiB read): the time
           until it is served (gives up after 40 s)
  abrupt   --disconnects (200) clients over TCP, 8 at a time, reset
           (SO_LINGER 0) right after GO or with four 1 MiB reads in
           flight: the front-end's descriptors, the server's processes and
           the front-end's RSS before, just after, and once settled (5 s)
  unread   two nbdcopy copies of the image at once, byte-exact: MB/s of
           each alone and next to a client that sends 64 reads of 32 MiB
           and never reads a reply

Runs from any directory; uses build/src/nbdcurld or $NBDCURLD.  Prints
plain text on stdout; exit status 1 only when nbdcurld failed a section
outright (a wrong byte or a crash), 2 on usage errors.  Takes about a
minute or two on two CPUs; expect a loaded machine to change the figures.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import nbdraw as N                                       # noqa: E402

MIB = 1024 * 1024
SECTIONS = ["serial", "many", "idle", "abrupt", "unread"]


class Nbdkit(N.Server):
    """nbdkit -f -r (listening as nbdcurld would) curl URL: one process."""

    def __init__(self, url, tmpdir, name, tcp=False):
        super().__init__([], tmpdir, name, tcp=tcp)
        self.args = ["nbdkit"] + self.args[1:] + ["-r", "curl", url]

    def frontend(self):
        return self.pid if self.alive() else None

    def processes(self):
        return [self.pid] if self.alive() else []


def start_nginx(tmp, www):
    """A private nginx (tests/lib/nginx.sh) serving www; returns (pid, port) or
    None."""
    if not os.access("/usr/sbin/nginx", os.X_OK):
        return None
    script = r'''
source "$1/lib/nginx.sh"
d=$2 www=$3
conf() {
    nginx_main_conf "$d"
    echo "worker_processes 1;"
    [ "$(id -u)" -eq 0 ] && echo "user root;"
    echo "events { worker_connections 8192; }"
    echo "http {"
    nginx_http_conf "$d"
    echo "sendfile on; keepalive_requests 100000;"
    echo "server { listen 127.0.0.1:$1; root $www; } }"
}
nginx_launch "$d" conf && echo "$NGINX_PID $NGINX_PORT"
'''
    out = subprocess.run(["bash", "-c", script, "bash", HERE, tmp, www],
                         stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         text=True).stdout.split()
    return (int(out[0]), int(out[1])) if len(out) == 2 else None


def stop_web_servers(nginx, web):
    """Stop whichever of the two was started."""
    if nginx:
        os.kill(nginx[0], signal.SIGTERM)
        if not N.wait_until(lambda: not N.pid_alive(nginx[0]), 5):
            os.kill(nginx[0], signal.SIGKILL)
    if web:
        web.kill()
        web.wait()


class Sampler:
    """Peak memory of a server while something runs (every 0.25 s)."""

    def __init__(self, srv):
        self.srv = srv
        self.peak = {"fe_rss": 0, "pss": 0, "rss": 0, "procs": 0}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def sample(self):
        pids = self.srv.processes()
        fe = self.srv.frontend()
        now = {"fe_rss": N.rss_kib(fe) if fe else 0,
               "pss": sum(N.pss_kib(p) for p in pids),
               "rss": sum(N.rss_kib(p) for p in pids), "procs": len(pids)}
        for k, v in now.items():
            self.peak[k] = max(self.peak[k], v)

    def run(self):
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(0.25)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def state(srv):
    fe = srv.frontend()
    return {"fds": N.fd_count(fe) if fe else None,
            "procs": len(srv.processes()),
            "rss": N.rss_kib(fe) if fe else 0}


def fmt_state(s):
    return "%s fds, %d procs, RSS %.1f MiB" % (s["fds"], s["procs"],
                                               s["rss"] / 1024)


def cpu_seconds(pid, children=False):
    """utime + stime of pid (plus its reaped children's), in seconds."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def server_cpu(srv):
    """CPU time of the server so far: every live process, and the
    processes its supervisor (or nbdkit) reaped."""
    root = srv.proc.pid
    return cpu_seconds(root, children=True) + sum(
        cpu_seconds(p) for p in srv.processes() if p != root)


def section_serial(name, srv, ctx, args):
    image = ctx["image"]
    time.sleep(1)               # spares (nbdcurld-spares) have started
    lat, bad = [], 0
    cpu0 = server_cpu(srv)
    for i in range(args.serial):
        off = (i * 7919 * 4096) % (len(image) - 4096)
        c = N.Conn(srv.sock, 30)
        try:
            c.start()
            c.structured_reply()
            t0 = time.monotonic()
            c.go()
            r = c.read(off, 4096)
            lat.append(time.monotonic() - t0)
            if r.error or r.data != image[off:off + 4096]:
                bad += 1
        finally:
            c.close()
        time.sleep(0.05)
    time.sleep(0.5)             # the last fetchers are reaped
    cpu = (server_cpu(srv) - cpu0) / args.serial
    p = N.percentiles(lat)
    print("  %-8s %d/%d byte-exact; GO to first byte p50 %.2f ms p90 %.2f ms; "
          "server CPU %.1f ms per connection" % (
              name, args.serial - bad, args.serial, p[50] * 1e3, p[90] * 1e3,
              cpu * 1e3))
    return bad == 0


def section_many(name, srv, ctx, args):
    image = ctx["image"]
    with Sampler(srv) as smp:
        t0 = time.monotonic()
        res = N.clients_at_once(srv.sock, args.clients, image,
                                length=args.read_kib * 1024, timeout=90,
                                at_peak=smp.sample)
        took = time.monotonic() - t0
    ok = [r for r in res if r["ok"]]
    why = {}
    for r in res:
        if not r["ok"]:
            why[r["why"][:60]] = why.get(r["why"][:60], 0) + 1
    lat = N.percentiles([r["first"] - r["go"] for r in ok])
    print("  %-8s %d/%d byte-exact in %.1f s; GO to first byte %s" % (
        name, len(ok), len(res), took,
        " ".join("%s %.3f s" % (("p%d" % k) if k != "max" else k, v)
                 for k, v in lat.items()) or "-"))
    print("  %-8s peak: front-end RSS %.1f MiB; all %d processes PSS %.1f MiB, "
          "RSS %.1f MiB" % ("", smp.peak["fe_rss"] / 1024, smp.peak["procs"],
                            smp.peak["pss"] / 1024, smp.peak["rss"] / 1024))
    if why:
        print("  %-8s failures: %s" % ("", "; ".join(
            "%d x %s" % (n, w) for w, n in sorted(why.items(), key=lambda x: -x[1])[:4])))
    return len(ok) == len(res)


def section_idle(name, srv, ctx, args):
    conns = []
    try:
        for _ in range(args.idle):
            conns.append(N.Conn(srv.sock, timeout=5))
        time.sleep(0.5)
        took = N.time_to_serve(srv.sock, ctx["img"], 40)
    finally:
        for c in conns:
            c.close()
    print("  %-8s %d idle connections: a good client served %s" % (
        name, args.idle, "in %.3f s" % took if took is not None else
        "not within 40 s"))
    return True


def section_abrupt(name, srv, ctx, args):
    N.time_to_serve(srv.sock, ctx["img"], 10)       # warm-up
    N.wait_until(lambda: state(srv)["procs"] <= 2, 10)
    before = state(srv)
    errors = []

    def worker(k):
        for i in range(k, args.disconnects, 8):
            try:
                N.abrupt_client(srv.sock, i, ctx["size"], 10)
            except Exception as e:
                errors.append(e)

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - t0
    just = state(srv)
    N.wait_until(lambda: state(srv)["fds"] == before["fds"] and
                 state(srv)["procs"] == before["procs"], 5, step=0.2)
    settled = state(srv)
    print("  %-8s %d resets in %.1f s (%d failed before their reset)" % (
        name, args.disconnects, took, len(errors)))
    print("  %-8s before %s; just after %s; settled %s" % (
        "", fmt_state(before), fmt_state(just), fmt_state(settled)))
    return srv.alive()


def section_unread(name, srv, ctx, args):
    mb = 2 * ctx["size"] / 1e6
    N.timed_copies(srv.uri(), ctx["img"], ctx["tmp"], 2, 300)     # warm-up
    alone = N.timed_copies(srv.uri(), ctx["img"], ctx["tmp"], 2, 300)
    bad = N.unread_client(srv.sock, ctx["size"], 64, min(32 * MIB, ctx["size"]))
    try:
        time.sleep(1)
        loaded = N.timed_copies(srv.uri(), ctx["img"], ctx["tmp"], 2, 300)
    finally:
        bad.close()
    print("  %-8s 2 copies at once: %.0f MB/s alone, %.0f MB/s next to a client "
          "that never reads (%.2f s, %.2f s)" % (name, mb / alone, mb / loaded,
                                                  alone, loaded))
    return True


RUN = {"serial": section_serial, "many": section_many, "idle": section_idle, "abrupt": section_abrupt,
       "unread": section_unread}
TCP = {"idle", "abrupt"}


def main():
    ap = argparse.ArgumentParser(description="nbdcurld under load, in figures")
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help="comma-separated sections: " + ",".join(SECTIONS))
    ap.add_argument("--peers", default="nbdcurld,nbdcurld-exec,nbdcurld-spares,nbdkit",
                    help="servers to measure: nbdcurld,nbdcurld-exec,"
                    "nbdcurld-spares,nbdkit")
    ap.add_argument("--clients", type=int, default=256)
    ap.add_argument("--serial", type=int, default=100)
    ap.add_argument("--idle", type=int, default=500)
    ap.add_argument("--disconnects", type=int, default=200)
    ap.add_argument("--size", type=int, default=256, help="image size in MiB")
    ap.add_argument("--read-kib", type=int, default=1024)
    args = ap.parse_args()
    only = args.only.split(",")
    peers = args.peers.split(",")
    if any(s not in SECTIONS for s in only) or \
            any(p not in ("nbdcurld", "nbdkit", "nbdcurld-exec", "nbdcurld-spares")
                for p in peers) \
            or args.size < 64:
        ap.print_usage(sys.stderr)
        return 2
    if not os.access(N.nbdcurld_path(), os.X_OK):
        # The build next to this script, unless $NBDCURLD says otherwise.
        os.environ["NBDCURLD"] = os.path.join(HERE, "..", "build", "src", "nbdcurld")
    N.require_binary()
    N.raise_nofile(4 * max(args.clients, args.idle) + 256)
    if "nbdkit" in peers and (not shutil.which("nbdkit") or subprocess.call(
            ["nbdkit", "curl", "--dump-plugin"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL) != 0):
        print("# nbdkit with its curl plugin is not installed: skipped")
        peers.remove("nbdkit")
    if "unread" in only and not shutil.which("nbdcopy"):
        print("# nbdcopy is not installed: section unread skipped")
        only.remove("unread")

    tmp = N.tmpdir()
    www = os.path.join(tmp, "www")
    os.mkdir(www)
    img = os.path.join(www, "img")
    N.make_image(img, args.size * MIB)
    with open(img, "rb") as f:
        image = f.read()
    ctx = {"tmp": tmp, "img": img, "image": image, "size": args.size * MIB}
    nginx = start_nginx(tmp, www)
    web = None
    if nginx:
        url = "http://127.0.0.1:%d/img" % nginx[1]
        served_by = "nginx"
    else:
        web, port = N.start_web_server(www)
        url = "http://127.0.0.1:%d/good/img" % port
        served_by = "tests/lib/web-server.py"
    print("nbdcurld load figures: %s; %d MiB image served by %s; %d CPUs; "
          "load average %s" % (N.nbdcurld_path(), args.size, served_by,
                               os.cpu_count(), os.getloadavg()[0]))
    failed = False
    try:
        for sec in only:
            print("\n%s" % sec)
            for peer in peers:
                tcp = sec in TCP
                if peer == "nbdcurld":
                    srv = N.Server(["-r", url], tmp, "nbdcurld-" + sec, tcp=tcp)
                elif peer == "nbdcurld-exec":
                    srv = N.Server(["-r", "--exec-fetchers", url], tmp,
                                   "nbdcurld-exec-" + sec, tcp=tcp)
                elif peer == "nbdcurld-spares":
                    srv = N.Server(["-r", "--spare-fetchers", "4", url], tmp,
                                   "nbdcurld-spares-" + sec, tcp=tcp)
                else:
                    srv = Nbdkit(url, tmp, "nbdkit-" + sec, tcp=tcp)
                try:
                    srv.start()
                    N.wait_until(srv.frontend, 5)
                    ok = RUN[sec](peer, srv, ctx, args)
                    if not srv.alive():
                        print("  %-8s the server DIED: %s" % (
                            peer, srv.log_text()[-300:].strip()))
                        ok = False
                except Exception as e:
                    print("  %-8s FAILED: %s: %s" % (peer, type(e).__name__, e))
                    ok = False
                finally:
                    srv.stop()
                if peer.startswith("nbdcurld") and not ok:
                    failed = True
                sys.stdout.flush()
    finally:
        stop_web_servers(nginx, web)
        N.rmtree(tmp)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
