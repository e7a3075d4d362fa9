import os, sys, time
n = int(sys.argv[1]); big = sys.argv[2] == "big"
t = time.time()
d = ".vscode/deep"
os.makedirs(d, exist_ok=True)
for i in range(n):
    with open(f"{d}/f{i}", "wb") as f:
        if big: f.truncate(5 << 20)   # sparse: no blocks, size past the keep bound
print("made", n, "files big" if big else "files empty", round(time.time()-t, 2), "s")
