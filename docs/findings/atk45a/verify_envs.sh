#!/bin/bash
# TestAtk45aEnvSplitEscapes's APPLIED forms run by GNU env (coreutils) from the workspace's root
d=$(mktemp -d /tmp/atk45a/vz.XXXX); mkdir -p $d/app; cd $d
echo 'print("RAN app.main")' > app/main.py; : > app/__init__.py
echo "$(env --version | head -1)"
echo "bash: exec env -S 'python3\_-c\_\"import\_app.main\"'         -> $(bash -c "exec env -S 'python3\_-c\_\"import\_app.main\"'" 2>&1)"
echo "execvp env [-S, python3\_-c\_\"import\_app.main\"]           -> $(python3 -c 'import subprocess; print(subprocess.run(["env","-S","python3\\_-c\\_\"import\\_app.main\""],capture_output=True,text=True).stdout.strip())')"
echo "sh -c (hook): env -S 'python3 -c \"import\_app.main\"'        -> $(sh -c "env -S 'python3 -c \"import\_app.main\"'" 2>&1)"
cd /; rm -rf $d
