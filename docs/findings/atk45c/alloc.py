# how much a program can still allocate, in 1 MiB steps, under limits.memory
import sys
got = []
for i in range(64):
    try:
        got.append(bytearray(1 << 20))
    except MemoryError:
        break
    print(i + 1, end=" ", flush=True)
print("MiB ok")
