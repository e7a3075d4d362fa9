#!/bin/bash
# atk38 F3: with --explain-denials, every frame of the wrapped server that wrap drops (here a 2-byte
# non-JSON line) writes a ~90-byte "denied" line to wrap's stderr (the client's MCP log), with no
# rate bound: the server's own stderr is held to bounds.MaxLogLines (200) per 10 s, and wrap's slog
# lines are too (LimitLog), but explainf writes straight to stderr. Run as root; ~10 s.
set -u
D=/tmp/atk38/f3; rm -rf $D /tmp/atk38/f3audit; mkdir -p $D /tmp/atk38/f3audit; chmod 755 /tmp/atk38 $D; chmod 700 /tmp/atk38/f3audit
BIN=${BIN:-/tmp/atk38/mcpsandbox}
cp "$(dirname "$0")/spam.py" $D/spam.py; chmod 755 $D/spam.py
cat > $D/wrap.toml <<P
version = 1
scheme = "wrap"
name = "spam"
[limits]
memory = "4GiB"
pids = 256
[audit]
path = "/tmp/atk38/f3audit/audit.jsonl"
[wrap]
network = false
read = ["$D"]
P
chmod 600 $D/wrap.toml
SECS=${SECS:-10}
python3 - "$BIN" "$D" "$SECS" <<'PY'
import subprocess, json, sys, time
bin, d, secs = sys.argv[1], sys.argv[2], sys.argv[3]
err = open(d+"/wrap.err","wb")
p = subprocess.Popen([bin, "wrap", "--explain-denials", "--policy", d+"/wrap.toml", "--", "/usr/bin/python3", d+"/spam.py", secs],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
p.stdin.write((json.dumps({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})+"\n").encode()); p.stdin.flush()
p.stdout.readline()
time.sleep(float(secs) + 2)
p.stdin.close(); p.wait(timeout=15)
PY
echo "wrap's stderr (the client's MCP log): $(wc -l < $D/wrap.err) lines, $(stat -c %s $D/wrap.err) bytes"
grep -c 'not JSON' $D/wrap.err | sed 's/^/lines saying "not JSON": /'
grep -m2 'not JSON' $D/wrap.err; grep 'junk lines\|dropped' $D/wrap.err | grep -v 'not JSON' | head -5
rm -f $D/wrap.err
