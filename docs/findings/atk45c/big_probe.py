import os
for p in ("/proc/1/environ", "/proc/1/fd/0"):
    try:
        os.close(os.open(p, os.O_RDONLY if p.endswith("environ") else os.O_WRONLY)); print(p, "OPENED")
    except OSError as e:
        print(p, e.strerror)
print("pid 1 fds:", sorted(os.listdir("/proc/1/fd"), key=int))
for f in sorted(os.listdir("/proc/1/fd"), key=int):
    print(" ", f, os.readlink("/proc/1/fd/" + f))
print("usage MiB", int(open("/sys/fs/cgroup/memory/memory.usage_in_bytes").read()) >> 20)
