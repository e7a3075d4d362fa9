import json, subprocess, os, sys, threading, time, base64, queue
class Stdio:
    def __init__(self, policy, extra_env=None):
        env=dict(os.environ); env.update({"HOME":"/tmp/atk33/home","XDG_STATE_HOME":"/tmp/atk33/home/.local/state"})
        if extra_env: env.update(extra_env)
        self.p=subprocess.Popen(["/tmp/atk33/mcpsandbox","serve","--policy",policy],stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=open("/tmp/atk33x/stdio-serve.log","ab"),env=env)
        self.q={}; self.n=100; self.lock=threading.Lock(); self.cv=threading.Condition(self.lock)
        threading.Thread(target=self.reader,daemon=True).start()
        self.req("initialize",{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"atk","version":"1"}})
        self.send({"jsonrpc":"2.0","method":"notifications/initialized"})
    def reader(self):
        for line in self.p.stdout:
            try: m=json.loads(line)
            except Exception: continue
            if "id" in m:
                with self.cv: self.q[m["id"]]=m; self.cv.notify_all()
    def send(self,obj):
        self.p.stdin.write((json.dumps(obj)+"\n").encode()); self.p.stdin.flush()
    def start(self, method, params):
        with self.lock: self.n+=1; i=self.n
        self.send({"jsonrpc":"2.0","id":i,"method":method,"params":params}); return i
    def wait(self, i, timeout=120):
        with self.cv:
            self.cv.wait_for(lambda: i in self.q, timeout)
            return self.q.pop(i, None)
    def req(self, method, params, timeout=120):
        return self.wait(self.start(method,params),timeout)
    def call(self, name, args): return self.req("tools/call",{"name":name,"arguments":args})
    def run(self, cmd, *args): return self.call("run_allowed_command",{"command":cmd,"args":list(args)})
    def pycall_start(self, code):
        b=base64.b64encode(code.encode()).decode()
        return self.start("tools/call",{"name":"run_allowed_command","arguments":{"command":"python3.11","args":["-c","import base64;exec(base64.b64decode('%s'))"%b]}})
    def py(self, code): return self.wait(self.pycall_start(code))
    def cancel(self, i): self.send({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":i,"reason":"x"}})
def sc(m):
    r=m.get("result",m) if m else m
    return r.get("structuredContent", r) if isinstance(r,dict) else r
