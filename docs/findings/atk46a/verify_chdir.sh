#!/bin/bash
# GNU env runs server/main.py (which imports helper) for each spelling of its chdir option, from the project
d=$(mktemp -d); cd "$d"; mkdir -p server
echo 'import helper; print("RAN server/main.py")' > server/main.py; echo 'print("RAN server/helper.py")' > server/helper.py
env --version | head -1
for a in "-C server" "--chdir server" "--chdir=server" "-iC server"; do
  printf 'env %-16s python3 main.py: %s\n' "$a" "$(env $a "$(command -v python3)" main.py 2>&1 | tr '\n' ' ')"
done
rm -rf "$d"
