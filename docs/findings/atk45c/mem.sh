ls /sys/fs/cgroup | head; cat /sys/fs/cgroup/memory.current; cat /proc/self/cgroup; grep -E "^(anon|file|shmem) " /sys/fs/cgroup/memory.stat
