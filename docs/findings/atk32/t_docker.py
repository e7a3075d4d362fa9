import sys, json, os
sys.path.insert(0, "/work/notes/atk32")
import stdio
s = stdio.Stdio("/tmp/atk32x/dpol.toml")
code = r'''
import os, subprocess
def sh(c):
    try: return subprocess.run(c, shell=True, capture_output=True, text=True, timeout=5).stdout.strip()[:600]
    except Exception as e: return str(e)
print("id:", sh("id"))
print("caps:", sh("grep Cap /proc/self/status"))
print("seccomp:", sh("grep -i seccomp /proc/self/status"))
print("mounts:", sh("grep -E 'workspace|proc|sys ' /proc/self/mounts"))
print("nnp:", sh("grep NoNewPrivs /proc/self/status"))
print("cgroup mem:", sh("cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max 2>&1"))
print("net:", sh("cat /proc/net/dev | tail -n +3 | cut -c1-20"))
print("proc sysrq:", sh("echo 1 > /proc/sysrq-trigger 2>&1; echo rc=$?"))
print("kcore:", sh("head -c 10 /proc/kcore 2>&1 | wc -c"))
print("host devs:", sh("ls /dev"))
print("ws:", sh("ls -la /workspace; touch /workspace/probe && echo wrote"))
print("sockets:", sh("ls -la /var/run /run 2>&1 | head"))
print("unshare:", sh("unshare -Ur id 2>&1"))
print("proc/1:", sh("cat /proc/1/cmdline | tr '\\0' ' '"))
print("env:", sh("env | cut -c1-80"))
'''
r = s.call("run_python_sandbox", {"code": code})
print(stdio.sc(r).get("stdout"), stdio.sc(r).get("stderr")[:500], json.dumps(stdio.sc(r).get("workspace")))
