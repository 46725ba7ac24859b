#!/usr/bin/env bash
# The Containerfile and the Kubernetes example (examples/kubernetes/):
# checked as files (no container runs here unless podman or buildah can
# build), then the pod's two containers played as local processes: the
# nbdcurld container's arguments serve a file on the shared socket, the
# qemu-img container's script converts from it, and both end.
source "$(dirname "$0")/../lib/functions.sh"
set -euo pipefail
requires qemu-img
top=$srcdir/..
containerfile=$top/Containerfile
manifest=$top/examples/kubernetes/nbdcurld-import.yaml
[ -f "$containerfile" ] && [ -f "$manifest" ] || fail "no Containerfile or Kubernetes example"
$PY -c 'import yaml' 2>/dev/null || { echo "$0: SKIP: python3-yaml is not installed" >&2; exit 77; }

if command -v yamllint >/dev/null; then
    yamllint --strict "$manifest" || fail "yamllint: $manifest"
fi

# The files, field by field; the pod's commands, with paths moved under
# $tmp, written out for the play below.
$PY - "$containerfile" "$manifest" "$top/debian/control" "$tmp" <<'PY' || fail "the container files"
import re, shlex, sys, yaml
containerfile, manifest, control, tmp = sys.argv[1:]
problems = []
def check(ok, what):
    if not ok:
        problems.append(what)

# Containerfile: instructions, continuation lines joined.
text = re.sub(r"\\\n", " ", open(containerfile).read())
lines = [l.strip() for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]
stages, stage = [], None
for line in lines:
    word, _, rest = line.partition(" ")
    if word == "FROM":
        stage = {"from": rest, "lines": []}
        stages.append(stage)
    else:
        check(stage is not None, f"{word} before any FROM")
        stage["lines"].append((word, rest.strip()))
check(stages and stages[0]["from"] == "debian:bookworm AS build",
      f"the first stage is not debian:bookworm AS build: {stages[0]['from'] if stages else None}")
final = stages[-1]
check(final["from"].split()[0] == "debian:bookworm-slim", f"the final stage is {final['from']}")
def instr(stage, word):
    return [rest for w, rest in stage["lines"] if w == word]
build_runs = " ".join(instr(stages[0], "RUN"))
check("dpkg-buildpackage" in build_runs, "the build stage does not build the package")
# Every build dependency of debian/control is installed in the build stage.
deps = re.search(r"^Build-Depends:(.*?)(?=^\S)", open(control).read(), re.S | re.M).group(1)
for dep in re.findall(r"([a-z0-9][a-z0-9+.-]+)", re.sub(r"\([^)]*\)", "", deps)):
    name = "debhelper" if dep == "debhelper-compat" else dep
    check(re.search(rf"(^|\s){re.escape(name)}(\s|$)", build_runs),
          f"the build stage does not install {name} (debian/control)")
check(any(r.startswith("--from=build") and ".deb" in r for r in instr(final, "COPY")),
      "the final stage does not copy the package from the build stage")
check(any(".deb" in r and "apt-get install" in r for r in instr(final, "RUN")),
      "the final stage does not install the package")
users = instr(final, "USER")
check(len(users) == 1 and re.fullmatch(r"[1-9][0-9]*:[1-9][0-9]*", users[0]),
      f"the final stage's USER is not one numeric, non-root uid:gid: {users}")
uid = int(users[0].split(":")[0]) if users else None
check(instr(final, "EXPOSE") == ["10809"], f"EXPOSE: {instr(final, 'EXPOSE')}")
check(len(instr(final, "HEALTHCHECK")) == 1, "no HEALTHCHECK")
entry = instr(final, "ENTRYPOINT")
check(entry and entry[0].startswith('["/usr/sbin/nbdcurld", "--foreground"'), f"ENTRYPOINT: {entry}")
check(any(s["from"].endswith(" AS qemu-img") for s in stages), "no qemu-img stage")

# The manifest: a claim and a pod that uses it.
docs = [d for d in yaml.safe_load_all(open(manifest)) if d]
kinds = sorted(d["kind"] for d in docs)
check(kinds == ["PersistentVolumeClaim", "Pod"], f"kinds: {kinds}")
pvc = next(d for d in docs if d["kind"] == "PersistentVolumeClaim")
pod = next(d for d in docs if d["kind"] == "Pod")
spec = pod["spec"]
check(spec.get("restartPolicy") == "Never", "the pod restarts its containers")
check("initContainers" not in spec, "the pod has init containers")
sc = spec.get("securityContext", {})
check(sc.get("runAsNonRoot") is True and sc.get("runAsUser") == uid,
      f"the pod does not run as the image's user {uid}: {sc}")
containers = {c["name"]: c for c in spec["containers"]}
check(sorted(containers) == ["nbdcurld", "qemu-img"], f"containers: {sorted(containers)}")
volumes = {v["name"]: v for v in spec["volumes"]}
def mounts(c):
    return {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
server, client = containers["nbdcurld"], containers["qemu-img"]
for c in (server, client):
    csc = c.get("securityContext", {})
    check(csc.get("allowPrivilegeEscalation") is False and csc.get("capabilities", {}).get("drop") == ["ALL"],
          f"{c['name']}: privileges not dropped")
shared = [n for n in mounts(server) if n in mounts(client) and "emptyDir" in volumes[n]]
check(len(shared) == 1, f"no emptyDir both containers mount: {shared}")
sockdir = mounts(server)[shared[0]]
check(mounts(client)[shared[0]] == sockdir, "the socket's volume is mounted at two paths")
args = server["args"]
sock = args[args.index("--unix") + 1]
check(sock.startswith(sockdir + "/"), f"the socket {sock} is not in {sockdir}")
script = client["args"][0]
check(f"nbd+unix:///?socket={sock}" in script, f"qemu-img does not read from {sock}")
data = [n for n, v in volumes.items() if "persistentVolumeClaim" in v]
check(len(data) == 1 and volumes[data[0]]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"],
      "the pod does not mount the claim")
datadir = mounts(client)[data[0]]
check(re.search(rf"{re.escape(datadir)}/\S+", script), f"qemu-img does not write into {datadir}")
if server["securityContext"].get("readOnlyRootFilesystem"):
    check("/tmp" in mounts(server).values(), "--run needs a writable /tmp")

# For the play: both containers' commands with the pod's paths in $tmp.
def local(s):
    return s.replace(sockdir, f"{tmp}/run-nbd").replace(datadir, f"{tmp}/data")
url = args[-1]
check(url.startswith("https://"), f"the URL is not the last argument: {url}")
with open(f"{tmp}/server.args", "w") as f:
    f.write("".join(local(a) + "\0" for a in args[:-1]))
with open(f"{tmp}/client.sh", "w") as f:
    f.write(local(script))
with open(f"{tmp}/entry.args", "w") as f:
    f.write("".join(a + "\0" for a in yaml.safe_load(entry[0])[1:]))
for p in problems:
    print("problem:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY

# The pod, played here: nbdcurld with the image's entry point and the
# container's arguments, a file in place of the URL; the qemu-img
# container's script beside it.
mkdir run-nbd data
make_image disk.img 3M
mapfile -d '' entry < entry.args
mapfile -d '' args < server.args
timeout 60 "$NBDCURLD" "${entry[@]}" "${args[@]}" "file://$tmp/disk.img" 2>server.log &
server=$!
timeout 60 sh -e client.sh >client.log 2>&1 || fail "the qemu-img container failed: $(cat client.log)"
wait "$server" || fail "the nbdcurld container failed: $(cat server.log)"
cmp disk.img data/disk.img || fail "the imported image differs"
echo "the pod's play imported $(stat -c %s data/disk.img) bytes"

# Where a container builder runs, the image is built too (it needs the
# Debian base images, from a registry or local storage).
builder=
for b in podman buildah; do command -v "$b" >/dev/null && { builder=$b; break; }; done
if [ -n "$builder" ]; then
    if ! $builder pull debian:bookworm-slim >pull.log 2>&1; then
        echo "$0: not building the image: $builder cannot get debian:bookworm-slim: $(tail -n1 pull.log)"
    else
        tag=localhost/nbdcurld-test:$$
        cleanup_fn "$builder rmi $tag >/dev/null 2>&1"
        $builder build -f "$containerfile" -t "$tag" "$top" >image.log 2>&1 ||
            fail "$builder build: $(tail -n 20 image.log)"
        $builder run --rm "$tag" --version >image-version.txt 2>&1 ||
            fail "the image's nbdcurld --version: $(cat image-version.txt)"
        grep -q '^libcurl=' image-version.txt || fail "the image's --version: $(cat image-version.txt)"
        echo "built $tag with $builder"
    fi
fi
echo ok
