# F3: refused lines eat the audit log's 4 MiB reserve; a call already running then loses its outcome line.
# Needs: tmpfs at /tmp/atk32x/small (16m), /tmp/atk32x/polsmall.toml (workspace + audit there).
import sys, json, os, time, subprocess
sys.path.insert(0, "/work/notes/atk32")
import stdio
SM="/tmp/atk32x/small"
s = stdio.Stdio("/tmp/atk32x/polsmall.toml")
print("write keep.txt:", json.dumps(stdio.sc(s.call("write_file", {"path": "keep.txt", "content": "precious\n"})))[:160])
asz=os.path.getsize(SM+"/audit.jsonl"); print("audit size", asz, "allocated KiB", os.stat(SM+"/audit.jsonl").st_blocks//2)
# the disk fills (any cause; here the host, as another writer would)
st=os.statvfs(SM); avail=st.f_bavail*st.f_frsize
subprocess.run(["dd","if=/dev/zero","of="+SM+"/filler","bs=64k","count=%d"%(avail//65536+16)],stderr=subprocess.DEVNULL)
print("avail now", os.statvfs(SM).f_bavail*4096)
# a call that runs for a while, then deletes keep.txt (its commit needs no space)
i = s.pycall_start("import time,os; time.sleep(6); os.rename('keep.txt','moved.txt'); print('renamed')")
time.sleep(1.5)
# the same client floods refused calls (unknown tool), each ~15 KB of arguments: each refused line lands in the reserve
pad="A"*15000
ids=[]
for k in range(330):
    ids.append(s.start("tools/call", {"name": "no_such_tool_%d"%k, "arguments": {"pad": pad}}))
for j in ids: s.wait(j, 30)
# then top the last page up with smaller refused lines, so no outcome fits
for size in [8000,4000,2000,1000,600,300,150,80,40,20,10,5,1]:
    for _ in range(4):
        s.wait(s.start("tools/call", {"name": "no_such_tool", "arguments": {"pad": "B"*size}}), 30)
print("after flood: audit size", os.path.getsize(SM+"/audit.jsonl"), "allocated KiB", os.stat(SM+"/audit.jsonl").st_blocks//2)
r = s.wait(i, 60)
print("long call answer:", json.dumps(r)[:700])
print("keep.txt, moved.txt on host:", os.listdir(SM+"/ws"))
os.remove(SM+"/filler")
time.sleep(0.5)
r = s.run("ls")
print("after freeing:", json.dumps(stdio.sc(r))[:200])
s.p.stdin.close(); s.p.wait()
print(subprocess.run(["/tmp/atk32/mcpsandbox","audit","verify",SM+"/audit.jsonl"],capture_output=True,text=True))
