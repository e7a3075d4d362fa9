#!/usr/bin/env python3
"""F7: allowlist.env refuses LD_*, DYLD_*, PYTHONPATH, PYTHONSTARTUP, NODE_OPTIONS, BASH_ENV, ENV by name only:
GCONV_PATH (and OPENSSL_CONF, PYTHONHOME, PYTHONUSERBASE, PERL5OPT, RUBYOPT, JAVA_TOOL_OPTIONS, GIT_CONFIG_*, ...)
pass serve, verify and explain. With env = { GCONV_PATH = "." } a policy pinning only iconv (no interpreter) runs the
call's own code: write_file plants gconv-modules + a shared object, and the pinned iconv loads it.
Needs setup.sh and gcc (builds /tmp/atk40/gc/evil.so from the C source below). Scratch under /tmp/atk40 only."""
import sys, os, subprocess, hashlib, base64
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
os.makedirs("/tmp/atk40/gc", exist_ok=True)
open("/tmp/atk40/gc/evil.c", "w").write(r'''#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void init(void) { fprintf(stderr, "GCONV-MODULE-CODE-RAN inside pinned iconv, uid=%d\n", getuid()); }
int gconv_init(void *s) { return 0; }
int gconv(void *a, void *b, const unsigned char **c, const unsigned char *d, unsigned char **e, void *f, int g, int h) { return 0; }
void gconv_end(void *s) {}
''')
subprocess.run(["gcc", "-shared", "-fPIC", "-o", "/tmp/atk40/gc/evil.so", "/tmp/atk40/gc/evil.c"], check=True)
ic = os.path.realpath("/usr/bin/iconv")
pol = open("/tmp/atk40/py.toml").read().split("[[allowlist.commands]]")[0].replace("network = false", 'network = false\nenv = { GCONV_PATH = "." }')
pol += '[[allowlist.commands]]\nname = "iconv"\npath = "%s"\nsha256 = "%s"\n' % (ic, hashlib.sha256(open(ic, "rb").read()).hexdigest())
open("/tmp/atk40/f7.toml", "w").write(pol); os.chmod("/tmp/atk40/f7.toml", 0o600)
print("--- policy env:", [l for l in pol.splitlines() if l.startswith("env")])
v = subprocess.run(["/tmp/atk40/mcpsandbox", "verify", "--policy", "/tmp/atk40/f7.toml", "--no-harness"], capture_output=True, text=True)
print("--- verify --no-harness:", [l for l in v.stdout.splitlines() if "MS" in l or "verify:" in l] or v.stdout[-300:])
e = subprocess.run(["/tmp/atk40/mcpsandbox", "explain", "--policy", "/tmp/atk40/f7.toml"], capture_output=True, text=True).stdout
print("--- explain:", "\n".join(e.splitlines()[2:4]))
s = Stdio(["/tmp/atk40/mcpsandbox", "serve", "--policy", "/tmp/atk40/f7.toml"], env={"HOME": "/tmp/atk40/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40/f7.log")
print(text(s.call("write_file", {"path": "gconv-modules", "content": "module  ATK40//    INTERNAL    evil    1\nmodule  INTERNAL    ATK40//    evil    1\n"})).splitlines()[0])
print(text(s.call("write_file", {"path": "evil.so", "content_base64": base64.b64encode(open("/tmp/atk40/gc/evil.so", "rb").read()).decode()})).splitlines()[0])
print(text(s.call("write_file", {"path": "in.txt", "content": "x\n"})).splitlines()[0])
print("--- the call: iconv -f ATK40 -t UTF-8 in.txt")
print(text(s.call("run_allowed_command", {"command": "iconv", "args": ["-f", "ATK40", "-t", "UTF-8", "in.txt"]})))
s.close()
