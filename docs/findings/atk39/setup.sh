#!/bin/sh
# atk39 scratch: binaries and policies under /tmp/atk39 (run as root). No users are made.
set -e
mkdir -p /tmp/atk39/ws /tmp/atk39/home
cd /work/main
[ -x /tmp/atk39/mcpsandbox ] || CGO_ENABLED=0 go build -o /tmp/atk39/mcpsandbox ./cmd/mcpsandbox
[ -x /tmp/atk39/mcpsandbox-th ] || CGO_ENABLED=0 go build -tags testhooks -o /tmp/atk39/mcpsandbox-th ./cmd/mcpsandbox
cp /work/notes/atk39/*.toml /tmp/atk39/ 2>/dev/null || true
chmod 600 /tmp/atk39/*.toml
mkdir -p /tmp/atk39/probe && cp /work/notes/atk39/inoprobe.go.txt /tmp/atk39/probe/main.go && printf 'module probe\ngo 1.21\n' > /tmp/atk39/probe/go.mod
(cd /tmp/atk39/probe && CGO_ENABLED=0 go build -o /tmp/atk39/ws/inoprobe .)
printf %s "atk39-token-0123456789abcdef0123456789" > /tmp/atk39/tok; chmod 600 /tmp/atk39/tok
# F2b: a writable workspace owned by uid 12345 (no user is made: a numeric owner)
mkdir -p /tmp/atk39/wsw && cp /tmp/atk39/ws/inoprobe /tmp/atk39/wsw/ && chown -R 12345:12345 /tmp/atk39/wsw && chmod 755 /tmp/atk39/wsw
cp /work/notes/atk39/probe.toml /tmp/atk39/ && chmod 600 /tmp/atk39/probe.toml
cat > /tmp/atk39/probe.py <<'EOP'
import sys; sys.path.insert(0,"/work/notes/atk39")
from stdio import Stdio, text
s=Stdio(["/tmp/atk39/mcpsandbox","serve","--policy",sys.argv[1]],env={"HOME":"/tmp/atk39/home","PATH":"/usr/bin:/bin"},err="/tmp/atk39/probe.log")
print(text(s.call("run_shell_sandbox",{"script":open(sys.argv[2]).read()})))
s.close()
EOP
