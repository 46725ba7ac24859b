#!/usr/bin/python3
"""stats-check.py FORMAT FILE EXPORT SIZE: the statistics file nbdcurld
wrote (--stats-file, FORMAT text or prometheus) says that export EXPORT's
clients read exactly SIZE bytes, in at least one read, and that its
fetchers fetched at least SIZE bytes, at least one connection.  For
prometheus, every line must also be a comment or a sample: NAME, labels
{name="value",...} with \\\\, \\" and \\n escapes, and a number.  Prints
what it found; exits 1 when something is wrong."""
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def parse_labels(text, i):
    """Labels from text[i] == '{' on: (dict, index past '}')."""
    labels = {}
    i += 1
    while text[i] != "}":
        m = LABEL.match(text, i)
        if not m or text[m.end():m.end() + 2] != '="':
            raise ValueError("bad label at %d" % i)
        name, i, value = m.group(0), m.end() + 2, ""
        while text[i] != '"':
            if text[i] == "\\":
                esc = text[i + 1]
                if esc not in '\\"n':
                    raise ValueError("bad escape \\%s" % esc)
                value += "\n" if esc == "n" else esc
                i += 2
            else:
                value += text[i]
                i += 1
        labels[name] = value
        i += 1
        if text[i] == ",":
            i += 1
        elif text[i] != "}":
            raise ValueError("expected , or } at %d" % i)
    return labels, i + 1


def parse_prometheus(text):
    """[(name, labels, value)]; raises ValueError on a malformed line."""
    samples = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            if not re.match(r"# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* \S", line):
                raise ValueError("line %d: a comment that is not HELP or TYPE: %s" % (n, line))
            continue
        m = NAME.match(line)
        if not m:
            raise ValueError("line %d: no metric name: %s" % (n, line))
        labels, i = ({}, m.end())
        if line[i:i + 1] == "{":
            labels, i = parse_labels(line, i)
        if line[i:i + 1] != " ":
            raise ValueError("line %d: no blank before the value: %s" % (n, line))
        samples.append((m.group(0), labels, float(line[i + 1:])))
    return samples


def figures_prometheus(text, export):
    got = {}
    for name, labels, value in parse_prometheus(text):
        if labels.get("export") != export:
            continue
        key = name + ("/" + labels["kind"] if "kind" in labels else "")
        got[key] = value
    return {
        "connections": got.get("nbdcurld_connections_total"),
        "reads": got.get("nbdcurld_requests_total/read"),
        "read_bytes": got.get("nbdcurld_read_bytes_total"),
        "web_bytes": got.get("nbdcurld_web_bytes_total"),
    }


def figures_text(text, export):
    quoted = export.replace("\\", "\\\\").replace('"', '\\"')
    head = 'export "%s": ' % quoted
    if head not in text:
        raise ValueError("no block for export %r" % export)
    block = text.split(head, 1)[1].split("\nexport ", 1)[0]
    num = lambda pattern: int(re.search(pattern, block).group(1))
    return {
        "connections": num(r"^(\d+) connections"),
        "reads": num(r"\n  read: (\d+) ops"),
        "read_bytes": num(r"\n  read: \d+ ops, (\d+) bytes"),
        "web_bytes": num(r"\n  web: (\d+) bytes fetched"),
    }


def main():
    fmt, path, export, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    text = open(path).read()
    try:
        f = figures_prometheus(text, export) if fmt == "prometheus" else figures_text(text, export)
    except (ValueError, AttributeError, IndexError) as e:
        print("%s: %s\n%s" % (path, e, text))
        return 1
    print("%s %r: %s" % (path, export, f))
    ok = (f["read_bytes"] == size and f["reads"] is not None and f["reads"] > 0 and
          f["web_bytes"] is not None and f["web_bytes"] >= size and
          f["connections"] is not None and f["connections"] >= 1)
    if not ok:
        print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
