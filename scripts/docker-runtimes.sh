#!/bin/sh
# Installs Debian's crun and runsc (gVisor) and registers them with the local Docker engine, so a
# docker policy can set runtime = "crun" (the same isolation as runc, its container starts faster)
# or runtime = "runsc" (a kernel of its own between the program and the host; slower to start).
#
#   sudo sh scripts/docker-runtimes.sh
#
# /etc/docker/daemon.json is merged, never replaced: other keys and runtimes stay, the old file is
# backed up beside it (daemon.json.bak-YYYYMMDD-HHMMSS), the new one is written atomically. A running
# dockerd reloads its runtimes on SIGHUP; nothing else restarts.
set -eu

conf=${DOCKER_DAEMON_JSON:-/etc/docker/daemon.json}

need=""
command -v crun >/dev/null 2>&1 || need="$need crun"
command -v runsc >/dev/null 2>&1 || need="$need runsc"
if [ -n "$need" ]; then
  echo "installing$need (Debian packages)"
  apt-get install -y -qq $need >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq $need >/dev/null; }
fi

# crun refuses a "hybrid" cgroup layout whose cgroup2 mount still holds controllers (on some VMs
# hugetlb, which no v1 hierarchy mounts). Mount each such controller as v1, so the v2 mount holds
# none; runc and the engine use the v1 hierarchies either way.
if [ -r /sys/fs/cgroup/unified/cgroup.controllers ] && [ -d /sys/fs/cgroup/memory ]; then
  for c in $(cat /sys/fs/cgroup/unified/cgroup.controllers); do
    mkdir -p "/sys/fs/cgroup/$c" && mount -t cgroup -o "$c" cgroup "/sys/fs/cgroup/$c" &&
      echo "cgroup controller $c moved to a v1 mount (crun refuses controllers left on the hybrid cgroup2 mount)" ||
      echo "could not mount cgroup controller $c as v1: crun may refuse to start containers" >&2
  done
fi

py=$(command -v python3.11 || command -v python3 || true)
[ -n "$py" ] || { echo "python3 is needed to merge $conf" >&2; exit 1; }
mkdir -p "$(dirname "$conf")"
"$py" - "$conf" "$(command -v crun)" "$(command -v runsc)" <<'EOF'
import json, os, shutil, sys, tempfile, time
conf, crun, runsc = sys.argv[1:4]
cur = {}
if os.path.exists(conf):
    try:
        with open(conf) as f:
            text = f.read()
        cur = json.loads(text) if text.strip() else {}
    except ValueError as e:
        sys.exit(f"{conf} is not valid JSON ({e}): fix it, then run this again; nothing was changed")
    if not isinstance(cur, dict):
        sys.exit(f"{conf} is not a JSON object: nothing was changed")
rt = cur.setdefault("runtimes", {})
want = {
    "crun": {"path": crun},
    # --network=none: gVisor's own network stack off. With it on, runsc refuses a container the
    # engine gave no network namespace of its own (docker.network = "none"), and docker's egress
    # for host lists goes through a unix socket, not the network. Not --oci-seccomp (which would
    # apply the engine's seccomp profile inside gVisor too): with Debian's gVisor 20221219 every
    # posix_spawn in the container then fails with EPERM, the wrapper's first among them.
    # serve --check says the profile is NOT applied under runsc.
    "runsc": {"path": runsc, "runtimeArgs": ["--network=none"]},
}
changed = False
for name, spec in want.items():
    if name in rt:
        if rt[name] != spec:
            print(f"{conf}: runtime {name} is already registered as {json.dumps(rt[name])}; left as it is")
        continue
    rt[name] = spec
    changed = True
if not changed:
    print(f"{conf}: crun and runsc already registered")
    sys.exit(0)
if os.path.exists(conf):
    bak = conf + ".bak-" + time.strftime("%Y%m%d-%H%M%S")
    shutil.copy2(conf, bak)
    print(f"backed up {conf} to {bak}")
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(conf), prefix=".daemon.json.")
with os.fdopen(fd, "w") as f:
    json.dump(cur, f, indent=2)
    f.write("\n")
os.chmod(tmp, 0o644)
os.replace(tmp, conf)
print(f"registered crun and runsc in {conf}")
EOF

if pid=$(pidof dockerd 2>/dev/null); then
  kill -HUP $pid
  for _ in $(seq 1 20); do
    docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}' 2>/dev/null | grep -q runsc && break
    sleep 0.5
  done
fi
if docker info >/dev/null 2>&1; then
  echo "engine runtimes: $(docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}')"
else
  echo "no engine answers yet: dockerd reads $conf when it starts"
fi
