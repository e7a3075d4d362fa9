#!/bin/sh
# atk47b: how each output here was made. A copy of HEAD (4f5ab3d) at $SRC; the Go test file goes in
# internal/schemes/docker/sandbox of the copy (package sandbox). Real engine, test image mcpsandbox-test:bookworm.
set -e
SRC=${SRC:-/tmp/atk47b/src}
cp /work/notes/atk47b/zz_atk47b_site_test.go.txt $SRC/internal/schemes/docker/sandbox/zz_atk47b_site_test.go
cd $SRC/internal/schemes/docker/sandbox
t() { CI=true go test -p 1 -count=1 -run "^$1\$" -v . ; }
t TestAtk47bPlant                                  # a call writes /workspace/sitecustomize.py: committed
t TestAtk47bSessionHold; ATK47B_NOPLANT=1 t TestAtk47bSessionHold          # session_hold_output.txt
ATK47B_PLANT=fake t TestAtk47bSessionHold                                  # session_fake_output.txt
t TestAtk47bForge; ATK47B_NOPLANT=1 t TestAtk47bForge                      # forge_output.txt
ATK47B_DF='ENV PYTHONPATH=.' t TestAtk47bForge                             # forge_variants_output.txt
ATK47B_SITENAME=usercustomize.py ATK47B_DF='RUN mkdir -p /usr/lib/python3/dist-packages && echo /workspace > /usr/lib/python3/dist-packages/__editable__.proj.pth' t TestAtk47bForge
t TestAtk47bBrick                                                          # brick_output.txt
t TestAtk47bLater                                                          # later_output.txt
# serve's start (the binary built from the copy: go build -o /tmp/atk47b/mcpsandbox ./cmd/mcpsandbox)
python3 /work/notes/atk47b/serve_start.py /tmp/atk47b/mcpsandbox /work/notes/atk47b/pol-badimage.toml /tmp/atk47b/w/audit-badimage.jsonl
python3 /work/notes/atk47b/serve_start_http.py /tmp/atk47b/mcpsandbox /work/notes/atk47b/pol-badimage.toml /tmp/atk47b/w/audit-badimage.jsonl 18947
# HEAD~1 (a4184d0^) built the same way as /tmp/atk47b/mcpsandbox-base
python3 /work/notes/atk47b/start_latency.py /work/notes/atk47b/pol-good.toml /tmp/atk47b/mcpsandbox-base /tmp/atk47b/mcpsandbox 9
