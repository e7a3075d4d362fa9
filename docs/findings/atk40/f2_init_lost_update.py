#!/usr/bin/env python3
"""F2: init's "changed while init was running" check (plan.go stillAsRead) reads the file, then writes the backup
and the new file (two fsyncs) and renames: a client's write landing in between is dropped with no word.
A stand-in client (the way Claude Code rewrites ~/.claude.json: read, add a key, rename) writes once, right after
init's check read the file (seen with inotify IN_CLOSE_NOWRITE: init opens the file 3 times: plan, stillAsRead,
backup read). Run as root; scratch under /tmp/atk40 only."""
import ctypes, os, struct, subprocess, json, time, threading, sys
H = "/tmp/atk40/h2"; CFG = H + "/.cursor/mcp.json"
subprocess.run(["rm", "-rf", H]); os.makedirs(H + "/.cursor")
json.dump({"mcpServers": {"other": {"command": "/bin/true"}}, "numStartups": 1}, open(CFG, "w"))
libc = ctypes.CDLL(None, use_errno=True)
ifd = libc.inotify_init1(0)
IN_CLOSE_NOWRITE = 0x10
libc.inotify_add_watch(ifd, CFG.encode(), IN_CLOSE_NOWRITE)
def client_write(n):
    d = json.load(open(CFG)); d["numStartups"] = n; d["client_key_%d" % n] = "written by the client"
    t = CFG + ".client-tmp"; json.dump(d, open(t, "w")); os.rename(t, CFG)
closes = []
def watch():
    while True:
        b = os.read(ifd, 4096)
        closes.append(time.time())
        if len(closes) == 2:            # the second read is stillAsRead's: the file is judged unchanged now
            client_write(2)
            print("client: wrote numStartups=2 and client_key_2 right after init's second read", flush=True)
            return
threading.Thread(target=watch, daemon=True).start()
env = dict(os.environ, HOME=H, XDG_CONFIG_HOME="", XDG_STATE_HOME="")
r = subprocess.run(["/tmp/atk40/mcpsandbox", "init", "--policy", "/tmp/atk40/py.toml", "--client", "cursor", "--yes"], env=env, capture_output=True, text=True)
print("init exit", r.returncode); print("\n".join(l for l in (r.stdout + r.stderr).splitlines() if "mcp.json" in l or "changed" in l))
time.sleep(0.2)
final = json.load(open(CFG))
print("final config:", json.dumps(final))
for f in sorted(os.listdir(H + "/.cursor")):
    if ".bak-" in f: print("backup", f, open(H + "/.cursor/" + f).read())
print("LOST: the client's write (client_key_2, numStartups=2) is gone, init said nothing" if "client_key_2" not in final else "kept")
