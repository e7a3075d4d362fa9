#!/bin/bash
# serve --http token errors: token file mode 0644, a short token, a token with a trailing newline, beyond loopback without token
. /work/notes/trial49/env.sh
T=/tmp/trial49/h2; rm -rf $T; mkdir -p $T; cd $T; P=/tmp/trial49/dsess.toml
printf 'abcdefghijklmnopqrstuvwx\n' > tok; chmod 644 tok
echo "== token file 0644"; timeout 5 mcpsandbox serve --policy $P --http 127.0.0.1:18750 --token-file tok 2>&1 | tail -1
chmod 600 tok; echo "== token file 0600 with a trailing newline (echo > file)"; timeout 4 mcpsandbox serve --policy $P --http 127.0.0.1:18750 --token-file tok 2>&1 | grep -i 'token\|listen\|serving' | cut -c1-250 | head -3
echo "== MCPSANDBOX_TOKEN=short"; MCPSANDBOX_TOKEN=short timeout 5 mcpsandbox serve --policy $P --http 127.0.0.1:18750 2>&1 | tail -1
echo "== 0.0.0.0 without a token"; timeout 5 mcpsandbox serve --policy $P --http 0.0.0.0:18750 2>&1 | tail -1
echo "== port in use"; python3 -c 'import socket,time;s=socket.socket();s.bind(("127.0.0.1",18751));s.listen();time.sleep(6)' & sleep 0.5
timeout 5 mcpsandbox serve --policy $P --http 127.0.0.1:18751 2>&1 | tail -1; wait
