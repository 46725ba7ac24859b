#!/usr/bin/env python3
"""Every internal message type (enum ipc_type in src/common/ipc-messages.h)
has its row in the message table (src/common/ipc-table.c), and the table
has no row for a type the enum lacks.  TAP output."""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def read(*path):
    with open(os.path.join(ROOT, *path), encoding="utf-8") as f:
        return f.read()


header = read("src", "common", "ipc-messages.h")
enum = re.search(r"enum ipc_type \{(.*?)\n\};", header, re.S)
assert enum, "no enum ipc_type in ipc-messages.h"
body = re.sub(r"/\*.*?\*/", "", enum.group(1), flags=re.S)
types = set(re.findall(r"\b(IPC_[A-Z_]+)\b", body))
rows = set(re.findall(r"^  \{ (IPC_[A-Z_]+), \"\1\"", read("src", "common", "ipc-table.c"), re.M))

n = 0
failed = False
for name in sorted(types | rows):
    n += 1
    if name in types and name in rows:
        print("ok %d - %s has its row" % (n, name))
    else:
        failed = True
        print("not ok %d - %s: %s" % (n, name, "no row in ipc-table.c" if name in types
                                      else "a row for a type ipc-messages.h does not have"))
n += 1
print(("ok" if len(types) >= 30 else "not ok") + " %d - the enum has its %d types" % (n, len(types)))
failed = failed or len(types) < 30
print("1..%d" % n)
sys.exit(1 if failed else 0)
