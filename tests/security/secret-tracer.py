#!/usr/bin/python3
"""secret-tracer.py: what another program of nbdcurld's user could read.

Started as root, it becomes --uid (and that user's group, no others), and
then, until --seconds have passed, goes round /proc in a tight loop over
every process of its own session whose command line starts with
"nbdcurld" (the supervisor and every child, from its exec on).  For each it tries what a process of
the same user may try:

  - PTRACE_SEIZE; a seized process is then stopped at each of its system
    calls (PTRACE_SYSCALL) and read at each stop, for as long as it can
    be read; after that it runs on, still traced, until this program
    exits and the kernel lets it go,
  - process_vm_readv of every private writable mapping in /proc/PID/maps,
  - opening /proc/PID/mem and reading the same mappings through it.

It looks for each secret given with --secret (hexadecimal bytes) and
writes one line per finding to --out ("found PID COMM HOW SECRET#"; a
finding through a /proc/PID/mem descriptor opened while the process was
dumpable, made when it no longer is, is "residual PID COMM ..."), one
"seized PID COMM" line per successful PTRACE_SEIZE, and at the end a
summary line ("summary passes N processes N readable N").

With --ready FILE it makes FILE once it is that user and about to start,
so that the caller starts nbdcurld under its eyes without guessing how long
Python takes to get there.  With --until FILE it ends before --seconds
once FILE exists (the caller makes it when the server it watches has
exited) and a whole pass after that has found no nbdcurld process left,
so that it has watched every process from its exec to its exit.

Each pass opens /proc/PID/mem anew and closes it at the end of the pass
(--keep-mem: keeps it).  A descriptor opened in the moment right after a
process's exec keeps reading that process after it goes undumpable
(SECURITY.md, "Other programs of the same user": the residual that a
user of nbdcurld's own removes); such findings are told apart.
"""

import argparse
import ctypes
import os
import signal
import sys
import time

PTRACE_CONT = 7
PTRACE_SYSCALL = 24
PTRACE_SETOPTIONS = 0x4200
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
PTRACE_O_TRACESYSGOOD = 1
WALL = 0x40000000
# Read at most this much of one process per pass: the heap and data
# segments hold the secrets; the data areas are shared mappings, skipped.
MAX_BYTES_PER_PROCESS = 64 * 1024 * 1024

libc = ctypes.CDLL(None, use_errno=True)


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


libc.process_vm_readv.restype = ctypes.c_ssize_t
libc.process_vm_readv.argtypes = [ctypes.c_int, ctypes.POINTER(IoVec), ctypes.c_ulong,
                                  ctypes.POINTER(IoVec), ctypes.c_ulong, ctypes.c_ulong]
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]


def session_of(pid):
    with open("/proc/%d/stat" % pid) as f:
        # The fields after the command name, which may hold spaces.
        return int(f.read().rsplit(")", 1)[1].split()[3])


def nbdcurld_pids(me):
    """nbdcurld's processes of our own session only: tests running beside
    this one have sessions of their own (tests/lib/functions.sh)."""
    session = os.getsid(0)
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        try:
            if session_of(pid) != session:
                continue
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                argv0 = f.read(64).split(b"\0")[0]
        except OSError:
            continue
        if os.path.basename(argv0).startswith(b"nbdcurld"):
            yield pid


def comm_of(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return "?"


def private_writable(pid):
    """[(start, length)] of the private writable mappings, or None."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    out = []
    for line in lines:
        fields = line.split()
        perms = fields[1]
        if perms[1] != "w" or perms[3] != "p":
            continue
        if len(fields) > 5 and fields[5] in ("[vvar]", "[vvar_vclock]", "[vsyscall]"):
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        out.append((start, end - start))
    return out


def read_vm(pid, start, length):
    buf = ctypes.create_string_buffer(length)
    local = IoVec(ctypes.cast(buf, ctypes.c_void_p), length)
    remote = IoVec(start, length)
    n = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    return buf.raw[:n] if n > 0 else b""


def read_mem(fd, start, length):
    try:
        return os.pread(fd, length, start)
    except OSError:
        return b""


def search(data, secrets):
    return [i for i, s in enumerate(secrets) if s in data]


def scan(pid, fd, ranges, secrets):
    """[(how, secret index)] found in pid's private writable memory, and
    whether any byte could be read."""
    hits, any_read = [], False
    budget = MAX_BYTES_PER_PROCESS
    for start, length in ranges:
        length = min(length, budget)
        if length <= 0:
            break
        budget -= length
        for how, data in (("process_vm_readv", read_vm(pid, start, length)),
                          ("/proc/PID/mem",
                           read_mem(fd, start, length) if fd is not None else b"")):
            any_read = any_read or len(data) > 0
            found = search(data, secrets)
            if found and how == "/proc/PID/mem" and not still_dumpable(pid):
                # Read through a descriptor opened while the process was
                # dumpable, which keeps reading it after: the residual.
                how = "residual: /proc/PID/mem opened before it went undumpable"
            hits += [(how, i) for i in found]
    return hits, any_read


def still_dumpable(pid):
    try:
        os.close(os.open("/proc/%d/mem" % pid, os.O_RDONLY))
        return True
    except OSError:
        return False


class Stepper:
    """The seized processes: stepped from system call to system call
    while their memory can be read, then let run (still traced)."""

    def __init__(self, secrets, report):
        self.secrets = secrets
        self.report = report
        self.stepping = set()

    def seize(self, pid):
        if libc.ptrace(PTRACE_SEIZE, pid, None, ctypes.c_void_p(PTRACE_O_TRACESYSGOOD)) != 0:
            return False
        libc.ptrace(PTRACE_INTERRUPT, pid, None, None)
        self.stepping.add(pid)
        return True

    def on_stop(self, pid, status):
        sig = os.WSTOPSIG(status)
        # A signal for the tracee is passed on; stops of our own are not.
        deliver = 0 if sig == signal.SIGTRAP or sig == (signal.SIGTRAP | 0x80) or \
            (status >> 16) != 0 or sig == signal.SIGSTOP else sig
        if pid in self.stepping:
            ranges = private_writable(pid) or []
            hits, any_read = scan(pid, None, ranges, self.secrets)
            for how, i in hits:
                self.report(pid, "ptrace stop, " + how, i)
            if any_read:
                libc.ptrace(PTRACE_SYSCALL, pid, None, ctypes.c_void_p(deliver))
                return
            self.stepping.discard(pid)
        libc.ptrace(PTRACE_CONT, pid, None, ctypes.c_void_p(deliver))

    def poll(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG | WALL)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if os.WIFSTOPPED(status):
                self.on_stop(pid, status)
            else:
                self.stepping.discard(pid)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--uid", type=int, required=True)
    p.add_argument("--gid", type=int, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--secret", action="append", default=[])
    p.add_argument("--no-seize", action="store_true",
                   help="read only: never attach, never stop a process")
    p.add_argument("--keep-mem", action="store_true",
                   help="keep each /proc/PID/mem open once opened")
    p.add_argument("--ready", help="make this file once ready to watch")
    p.add_argument("--until", help="end once this file exists and no nbdcurld "
                   "process is left (--seconds still the limit)")
    a = p.parse_args()
    secrets = [bytes.fromhex(s) for s in a.secret]

    out = open(a.out, "w", buffering=1)
    os.setgroups([])
    os.setgid(a.gid)
    os.setuid(a.uid)
    me = os.getpid()
    seized, found, kept, last_ranges = set(), set(), {}, {}
    passes = readable = 0
    seen = set()

    def report(pid, how, i):
        if (pid, how, i) not in found:
            found.add((pid, how, i))
            out.write("%s %d %s %s %d\n" % ("residual" if how.startswith("residual") else
                                             "found", pid, comm_of(pid), how, i))

    stepper = Stepper(secrets, report)
    deadline = time.monotonic() + a.seconds
    if a.ready:
        open(a.ready, "w").close()
    while time.monotonic() < deadline:
        passes += 1
        # Looked at before the pass: a pass that began after the server's
        # end and found none of its processes saw the last of them.
        server_ended = a.until is not None and os.path.exists(a.until)
        pids = list(nbdcurld_pids(me))
        if server_ended and not pids and not stepper.stepping:
            break
        for pid in pids:
            seen.add(pid)
            if pid not in seized and not a.no_seize and stepper.seize(pid):
                seized.add(pid)
                out.write("seized %d %s\n" % (pid, comm_of(pid)))
            stepper.poll()
            if pid in seized:
                continue        # read at its stops
            fd = kept.get(pid)
            if fd is None:
                try:
                    fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY)
                except OSError:
                    fd = None
            ranges = private_writable(pid)
            if ranges is None:
                ranges = last_ranges.get(pid)
            else:
                last_ranges[pid] = ranges
            if ranges is not None:
                hits, any_read = scan(pid, fd, ranges, secrets)
                readable += any_read
                for how, i in hits:
                    report(pid, how, i)
            if fd is not None:
                if a.keep_mem:
                    kept[pid] = fd
                else:
                    os.close(fd)
        stepper.poll()
    out.write("summary passes %d processes %d readable %d\n" % (passes, len(seen), readable))
    return 0


if __name__ == "__main__":
    sys.exit(main())
