#!/bin/sh
# atk49b: every invocation (HEAD 111c470, copy at /tmp/atk49b/src, binary /tmp/atk49b/mcpsandbox)
set -x
mkdir -p /tmp/atk49b/src /tmp/atk49b/w && git -C /work/main archive HEAD | tar -x -C /tmp/atk49b/src
cd /tmp/atk49b/src && go build -o /tmp/atk49b/mcpsandbox ./cmd/mcpsandbox
# JSON-RPC words, stdio (one serve, a marker ping after each case):
cd /tmp/atk49b/w && python3 /work/notes/atk49b/ids.py /tmp/atk49b/mcpsandbox /work/notes/atk49b/pol-docker.toml /work/notes/atk49b/cases1.txt > /work/notes/atk49b/ids1_output.txt
# the same over HTTP:
/tmp/atk49b/mcpsandbox serve --policy /work/notes/atk49b/pol-docker.toml --http 127.0.0.1:18749 2>/tmp/atk49b/w/http.err & S=$!; sleep 3
python3 /work/notes/atk49b/http_ids.py http://127.0.0.1:18749/mcp /work/notes/atk49b/cases1.txt > /work/notes/atk49b/http_ids1_output.txt; kill $S
# F2: two tools/calls in flight, ids "\ud800" and "\udfff" (and control "a" "b"):
python3 /work/notes/atk49b/dup.py /tmp/atk49b/mcpsandbox /work/notes/atk49b/pol-docker.toml '"\ud800"' '"\udfff"' > /work/notes/atk49b/dup_surrogate_output.txt
python3 /work/notes/atk49b/dup.py /tmp/atk49b/mcpsandbox /work/notes/atk49b/pol-docker.toml '"a"' '"b"' > /work/notes/atk49b/dup_control_output.txt
# F1: launcher python3 (pyenv-shim style) re-resolving by PATH; PATH names /workspace/bin after it
cp /work/notes/atk49b/zz_atk49b_test.go.txt /tmp/atk49b/src/internal/schemes/docker/sandbox/zz_atk49b_test.go
cd /tmp/atk49b/src && CI=true go test -tags testhooks -p 1 -count=1 -run '^TestAtk49bShimPlant$' -v ./internal/schemes/docker/sandbox/ > /work/notes/atk49b/shim_output.txt
