import sys, json, os
sys.path.insert(0, "/work/notes/atk32")
import stdio
W="/tmp/atk32x/ws"
os.system("rm -rf %s/* %s/.[!.]* 2>/dev/null; chown 65534:65534 %s" % (W,W,W))
s = stdio.Stdio("/tmp/atk32x/pol.toml")
targets = {"l1":"sub/../../x","l2":"./../x","l3":W+"/sub","l4":"//etc/passwd","l5":"sub/..","l6":"sub/../..","l7":".","l8":"..",
 "l9":"sub/./../../../etc","l10":"sub//..//..","l11":"\u2025/x","l12":"sub/\n/../..","l13":"/proc/self/root/etc","l14":"sub/../../ws/sub",
 "l15":"../ws/sub","l16":"../ws2/x","l17":W+"/../ws/sub"}
code = "import os\nos.makedirs('sub',exist_ok=True)\n" + "".join("os.symlink(%r,%r)\n" % (t,n) for n,t in targets.items())
r = s.py(code)
st = stdio.sc(r)
print(json.dumps(st.get("workspace"))[:1500])
print([c["text"][:2500] for c in r["result"]["content"]][0][-2500:])
for n in targets:
    p=os.path.join(W,n)
    print(n, repr(targets[n]), "LANDED" if os.path.islink(p) else "-")
