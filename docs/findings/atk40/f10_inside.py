# INSIDE: with read_paths = ["/proc"], what of the host's processes can a call read?
import os
pids = [p for p in os.listdir("/proc") if p.isdigit()]
print("pids visible in /proc:", len(pids), "(own pid", os.getpid(), ")")
hits = 0
for p in sorted(pids, key=int):
    try: cmd = open(f"/proc/{p}/cmdline", "rb").read().replace(b"\0", b" ")[:80]
    except OSError as e: cmd = str(e).encode()
    if b"mcpsandbox" in cmd or b"SECRET" in cmd or b"stdio" in cmd or b"run.py" in cmd:
        try:
            env = open(f"/proc/{p}/environ", "rb").read().split(b"\0")
            sec = [e for e in env if b"SECRET" in e or b"TOKEN" in e or b"KEY" in e]
            print(p, cmd.decode(errors="replace"), "ENVIRON READ:", sec[:3])
        except OSError as e: print(p, cmd.decode(errors="replace"), "environ:", e)
        hits += 1
print("checked", hits)
