#!/bin/sh
# atk38b: the binary built once from /work/main HEAD at /tmp/atk38b/mcpsandbox, and the MCP stdio client
# of docs/findings/atk37/stdio.py at /tmp/atk38b/stdio.py. Sourced by the f*.sh scripts. Run as root.
mkdir -p /tmp/atk38b && chmod 755 /tmp/atk38b
[ -x /tmp/atk38b/mcpsandbox ] || (cd /work/main && CGO_ENABLED=0 go build -o /tmp/atk38b/mcpsandbox ./cmd/mcpsandbox)
cp /work/main/docs/findings/atk37/stdio.py /tmp/atk38b/stdio.py
M=/tmp/atk38b/mcpsandbox
# pol DIR: writes DIR/pol.toml (allowlist, python3, workspace DIR/ws, audit DIR/audit.jsonl)
pol() {
  mkdir -p $1/ws; chown 65534:65534 $1/ws
  PY3=$(readlink -f /usr/bin/python3)
  cat > $1/pol.toml <<P
version = 1
scheme  = "allowlist"
name    = "sandbox"
[audit]
path = "$1/audit.jsonl"
[allowlist]
workspace = "$1/ws"
network   = false
[[allowlist.commands]]
name   = "python3"
path   = "$PY3"
sha256 = "$(sha256sum $PY3 | cut -d' ' -f1)"
P
  cat > $1/call.py <<'PY'
import sys; sys.path.insert(0,'/tmp/atk38b'); from stdio import *
s=Stdio(['/tmp/atk38b/mcpsandbox','serve','--policy',sys.argv[1]])
for code in sys.argv[2:]:
    r=s.call('run_allowed_command',{'command':'python3','args':['-c',code]})
    print(text(r)[:400])
s.close()
PY
}
