#!/usr/bin/env python3
# keycatch.py PORT: log every request's method, path and X-API-Key / Authorization headers; answer 404
import sys
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def h(self):
        open('/tmp/atk35x/keycatch.log','a').write('%s %s key=%s auth=%s\n' % (self.command, self.path, self.headers.get('X-API-Key'), self.headers.get('Authorization')))
        b = b'{"code":404,"message":"no"}'; self.send_response(404); self.send_header('Content-Length', str(len(b))); self.end_headers(); self.wfile.write(b)
    do_GET = do_POST = do_DELETE = h
ThreadingHTTPServer((sys.argv[2] if len(sys.argv) > 2 else '127.0.0.1', int(sys.argv[1])), H).serve_forever()
