#!/usr/bin/env python3
# fake_e2b.py PORT CAP : a stand-in for E2B's control plane and envd (one HTTP server for both, as
# E2B_API_URL and E2B_SANDBOX_URL allow), enforcing the account's concurrent sandbox limit CAP as E2B
# documents it (https://e2b.dev/docs/sandbox/rate-limits: Hobby 20, Pro 100): a create past it is 429.
import json, struct, sys, threading, itertools
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
PORT, CAP = int(sys.argv[1]), int(sys.argv[2])
live = {}; lock = threading.Lock(); ids = itertools.count(1); log = open('/tmp/atk35x/fake_e2b.log', 'a')
def env(flags, obj):
    b = json.dumps(obj).encode(); return bytes([flags]) + struct.pack('>I', len(b)) + b
class H(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *a): pass
    def body(self):
        n = int(self.headers.get('Content-Length') or 0); return self.rfile.read(n) if n else b''
    def send(self, code, obj=None, ctype='application/json', raw=None):
        b = raw if raw is not None else (json.dumps(obj).encode() if obj is not None else b'')
        self.send_response(code); self.send_header('Content-Type', ctype); self.send_header('Content-Length', str(len(b))); self.end_headers(); self.wfile.write(b)
    def do_GET(self):
        self.body()
        if self.path.startswith('/v2/sandboxes'): return self.send(200, [])
        if self.path == '/health': return self.send(204)
        return self.send(404, {"code": 404, "message": "not found"})
    def do_DELETE(self):
        self.body(); sid = self.path.rsplit('/', 1)[-1]
        with lock: gone = live.pop(sid, None)
        log.write('kill %s (live %d)\n' % (sid, len(live))); log.flush()
        return self.send(204 if gone else 404, None if gone else {"code": 404, "message": "no such sandbox"})
    def do_POST(self):
        b = self.body()
        if self.path == '/sandboxes':
            with lock:
                if len(live) >= CAP:
                    log.write('create refused: %d running\n' % len(live)); log.flush()
                    return self.send(429, {"code": 429, "message": "You have reached the maximum number of concurrent E2B sandboxes (%d). If you need more, please contact us at 'https://e2b.dev/docs/getting-help'" % CAP})
                sid = 'fake%04d' % next(ids); live[sid] = True
            log.write('create %s (live %d)\n' % (sid, len(live))); log.flush()
            return self.send(201, {"templateID": "code-interpreter-v1", "sandboxID": sid, "clientID": "c", "envdVersion": "0.2.0", "envdAccessToken": "tok-" + sid})
        if self.path.endswith('/timeout'): return self.send(204)
        if self.path == '/process.Process/Start':
            sid = self.headers.get('E2b-Sandbox-Id')
            with lock: ok = sid in live
            if not ok: return self.send(502, {"code": 502, "message": "sandbox not found"})
            out = env(0, {"event": {"start": {"pid": 7}}}) + env(0, {"event": {"data": {"stdout": "aGkK"}}}) + \
                  env(0, {"event": {"end": {"exitCode": 0, "exited": True, "status": "exit status 0"}}}) + env(2, {})
            return self.send(200, raw=out, ctype='application/connect+json')
        return self.send(404, {"code": 404, "message": "not found"})
ThreadingHTTPServer(('127.0.0.1', PORT), H).serve_forever()
