# a log truncated in place (logrotate copytruncate) loses its reserve: serve's reservedTo is an offset it no longer re-checks
import sys, json, os, time
sys.path.insert(0, "/work/notes/atk32")
import stdio
A="/tmp/atk32x/small/audit.jsonl"
def alloc(): st=os.stat(A); return "size %d allocated %d KiB" % (st.st_size, st.st_blocks//2)
s = stdio.Stdio("/tmp/atk32x/polsmall.toml")
s.run("ls"); print("after a call:", alloc())
# grow the log by ~1 MiB with refused calls, then truncate in place as logrotate's copytruncate does
for k in range(70): s.call("no_such_tool", {"pad": "A"*15000})
print("after 70 refused:", alloc())
os.truncate(A, 0); print("truncated:", alloc())
for k in range(3): s.run("ls")
print("after 3 calls:", alloc(), " <- reserve gone: started lines are now written with no room for their outcomes")
for k in range(70): s.call("no_such_tool", {"pad": "A"*15000})
print("after 70 more refused:", alloc())
s.p.stdin.close(); s.p.wait()
