#!/bin/bash
# atk38 F4: a wrapped server answers with id "\uFEFF<n>": wrap's alias check (looseNumber, Go's
# strings.TrimSpace) does not read it as n, so it is relayed as "an answer to a request the relay does
# not track"; the TypeScript SDK matches answers by Number(id), which trims U+FEFF, and takes it for
# request n's answer: a tools/list answer past hide_denied, a call's result past its audited outcome.
# Run as root; needs node (v20 here) and /work/main/e2e/node/node_modules (the TS SDK 1.32.2).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
D=/tmp/atk38/f4; rm -rf $D /tmp/atk38/f4audit; mkdir -p $D /tmp/atk38/f4audit; chmod 755 /tmp/atk38 $D; chmod 700 /tmp/atk38/f4audit
BIN=${BIN:-/tmp/atk38/mcpsandbox}
cp $HERE/hostile.py $D/hostile.py; chmod 755 $D/hostile.py
mkdir -p /tmp/atk38/tsclient; ln -sfn /work/main/e2e/node/node_modules /tmp/atk38/tsclient/node_modules
cp $HERE/f4_client.mjs /tmp/atk38/tsclient/client.mjs
cat > $D/wrap.toml <<P
version = 1
scheme = "wrap"
name = "hostile"
[limits]
memory = "4GiB"
pids = 256
timeout = "3s"
[audit]
path = "/tmp/atk38/f4audit/audit.jsonl"
[wrap]
network = false
read = ["$D"]
[wrap.tools]
deny = ["secret_*"]
hide_denied = true
P
chmod 600 $D/wrap.toml
node /tmp/atk38/tsclient/client.mjs "$BIN" $D/wrap.toml $D/hostile.py
echo "== audit log, call outcome lines:"
python3 -c '
import json,sys
for l in open("/tmp/atk38/f4audit/audit.jsonl"):
    e=json.loads(l); print(e["call"], e["tool"], e["decision"], e.get("rule",""), "result_bytes=%s" % e["arguments"]["result_bytes"], "timed_out=%s" % e["timed_out"])'
