#!/usr/bin/python3
"""systemd-exec-args.py UNIT [ENVFILE...]: the arguments systemd would
run UNIT's ExecStart= with, NUL-separated on stdout, after reading the
environment files as EnvironmentFile= does.

A test cannot run systemd in a container, so this follows the rules
systemd.exec(5) (EnvironmentFile=) and systemd.service(5) ("Command
lines") document, for what nbdcurld's unit and environment file use:
- an environment file: "#" and ";" lines and lines without "=" skipped;
  a value in single quotes taken verbatim, in double quotes with the
  backslash escapes of a shell's double quotes, unquoted with a
  backslash keeping the next character; blanks around it dropped;
- ExecStart=: split into words with quotes removed; a word "$VAR" is
  the variable's value split at blanks, quotes in it grouping words and
  then removed (zero words if unset or empty); "${VAR}" anywhere in a
  word is the exact value; "$$" is "$".
Backslash escapes inside the value's quotes when it is split (which
systemd treats like C escapes) are not modelled: values in tests have
none."""
import re
import shlex
import sys


def parse_env_file(path, env):
    for line in open(path, encoding="utf-8").read().splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#;" or "=" not in stripped:
            continue
        key, value = stripped.split("=", 1)
        key, value = key.strip(), value.strip()
        if value.startswith("'"):
            end = value.index("'", 1)
            value = value[1:end]
        elif value.startswith('"'):
            out, i = [], 1
            while value[i] != '"':
                if value[i] == "\\" and value[i + 1] in '"\\`$':
                    i += 1
                out.append(value[i])
                i += 1
            value = "".join(out)
        else:
            value = re.sub(r"\\(.)", r"\1", value)
        env[key] = value


def exec_start(unit):
    for line in open(unit, encoding="utf-8"):
        if line.startswith("ExecStart="):
            return line[len("ExecStart="):].strip()
    sys.exit(f"{unit}: no ExecStart=")


def expand(command, env):
    args = []
    for word in shlex.split(command):
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if m:
            args += shlex.split(env.get(m.group(1), ""))
            continue
        word = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                      lambda v: env.get(v.group(1), ""), word)
        args.append(word.replace("$$", "$"))
    return args


def main():
    env = {}
    for path in sys.argv[2:]:
        parse_env_file(path, env)
    sys.stdout.write("".join(a + "\0" for a in expand(exec_start(sys.argv[1]), env)))


main()
