#!/usr/bin/env python3
"""A system logger for tests: receives datagrams at PATH (an AF_UNIX
SOCK_DGRAM socket, as /dev/log is) and appends each to FILE as one line,
flushed at once.  A datagram that holds a newline is written with it shown
as \\n, so that a test can tell.  Ends on SIGTERM.

    syslog-server.py PATH FILE
"""
import os
import signal
import socket
import sys


def main():
    path, out = sys.argv[1], sys.argv[2]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    os.chmod(path, 0o666)
    with open(out, "a") as f:
        while True:
            data = s.recv(65536)
            f.write(data.decode("utf-8", "replace").replace("\n", "\\n") + "\n")
            f.flush()


if __name__ == "__main__":
    main()
