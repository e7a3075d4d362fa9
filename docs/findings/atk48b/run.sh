#!/bin/sh
# atk48b: how each output here was made. A copy of HEAD (0e6a2ee) at $SRC (git archive); the Go test file goes in
# internal/schemes/docker/sandbox of the copy (package sandbox). Real engine, test image mcpsandbox-test:bookworm.
set -e
[ -d /tmp/atk48b/src ] || { mkdir -p /tmp/atk48b/src && (cd /work/main && git archive 0e6a2ee | tar -x -C /tmp/atk48b/src); }
SRC=${SRC:-/tmp/atk48b/src}
N=/work/notes/atk48b
cp $N/zz_atk48b_test.go.txt $SRC/internal/schemes/docker/sandbox/zz_atk48b_test.go
cd $SRC/internal/schemes/docker/sandbox
t() { CI=true go test -tags testhooks -p 1 -count=1 -run "^$1\$" -v . ; }
t TestAtk48bFidelity > $N/fidelity_plain_output.txt 2>&1                         # F3 (__main__), what held
ATK48B_PROG=exit t TestAtk48bFidelity > $N/fidelity_exit_output.txt 2>&1         # F2 (threads, atexit)
# fidelity_env_output.txt / fidelity_env2_output.txt: the same test with ATK48B_DF set to each Dockerfile
# line shown at the top of each block in those files (PYTHON* variables, a venv in /opt/venv, a sitecustomize that raises)
{ t TestAtk48bPathPlant; echo "##### negative control ATK48B_NOPLANT=1"; ATK48B_NOPLANT=1 t TestAtk48bPathPlant; } > $N/pathplant_output.txt 2>&1  # F1
cd $SRC && go build -o /tmp/atk48b/mcpsandbox ./cmd/mcpsandbox
for k in ids params preinit odd; do python3 $N/stdio_fuzz.py /tmp/atk48b/mcpsandbox $N/pol-docker.toml $k > $N/stdio_${k}_output.txt 2>&1; done  # F4, F5
python3 $N/stdio_race.py /tmp/atk48b/mcpsandbox $N/pol-docker.toml 8 > $N/stdio_race_output.txt 2>&1
