#!/bin/bash
# lefthook-verify.sh: real lefthook 1.13.6 (go install github.com/evilmartians/lefthook@latest into /tmp/atk49a/gobin)
# merges an extends file's root/env into the main config's command of the same name and runs server/main.py
export PATH=/tmp/atk49a/gobin:$PATH
mk() { rm -rf /tmp/atk49a/$1; mkdir -p /tmp/atk49a/$1/server /tmp/atk49a/$1/hooks; cd /tmp/atk49a/$1; git init -q .; printf 'print("RAN server/main.py (%s)")\n' $1 > server/main.py; }
mk lhx; printf 'extends:\n  - common.yml\npre-commit:\n  commands:\n    lint:\n      run: python3 main.py\n' > lefthook.yml
printf 'pre-commit:\n  commands:\n    lint:\n      root: server/\n' > common.yml; lefthook dump; git add server/main.py; lefthook run pre-commit 2>&1 | grep -E "RAN|lint"
mk lhy; printf 'extends:\n  - common.yml\npre-commit:\n  commands:\n    lint:\n      run: python3 -m main\n' > lefthook.yml
printf 'pre-commit:\n  commands:\n    lint:\n      env:\n        PYTHONPATH: server\n' > common.yml; git add lefthook.yml; lefthook run pre-commit 2>&1 | grep -E "RAN|lint"
mk lhj; printf 'extends:\n  - common.yml\npre-commit:\n  jobs:\n    - name: lint\n      run: python3 main.py\n' > lefthook.yml
printf 'pre-commit:\n  jobs:\n    - name: lint\n      root: server/\n' > common.yml; git add server/main.py; lefthook run pre-commit 2>&1 | grep -E "RAN|lint"
mk lhg; printf 'extends:\n  - hooks/*.yml\npre-commit:\n  commands:\n    lint:\n      run: python3 main.py\n' > lefthook.yml
printf 'pre-commit:\n  commands:\n    lint:\n      root: server/\n' > hooks/a.yml; git add server/main.py; lefthook run pre-commit 2>&1 | grep -E "RAN|lint"
