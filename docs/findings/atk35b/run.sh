#!/bin/sh
# Reproduce atk35b's findings against /work/main's HEAD (as root: setpriv, xattrs, uids 65533/65534).
# Usage: sh run.sh [F1|F2|F3|F4|F5|F6|F7|all]
set -e
N=$(dirname "$(readlink -f "$0")")
W=/tmp/atk35b-repro
rm -rf $W; mkdir -p /tmp/atk35b; chmod 777 /tmp/atk35b
git -C /work/main archive HEAD | (mkdir -p $W && tar -x -C $W)
cp $N/init_acl_test.go.txt        $W/internal/generate/zz_atk35b_test.go
cp $N/egress_note_test.go.txt     $W/internal/serve/egress/zz_atk35b_test.go
cp $N/privgroup_userdbd_test.go.txt $W/internal/privgroup/zz_atk35b_test.go
cp $N/npm_sparse_test.go.txt      $W/internal/schemes/wrap/sandbox/zz_atk35b_test.go
cp $N/readpath_dangling_test.go.txt $W/internal/schemes/allowlist/sandbox/zz_atk35b_test.go
cd $W
what=${1:-all}
t() { echo "== $1"; go test -count=1 -v -run "$2" "$3" 2>&1 | grep -v '^=== RUN' ; }
case $what in F1|all) t F1 TestAtk35bACLWindow ./internal/generate/ ;; esac
case $what in F2|all) t F2 TestAtk35bDefaultACLInherited ./internal/generate/ ;; esac
case $what in F3|all) t F3 TestAtk35bUserdbdDefaultLayout ./internal/privgroup/ ;; esac
case $what in F4|all) t F4 TestAtk35bNoteInjection ./internal/serve/egress/ ;; esac
case $what in F5|all) t F5 TestAtk35bSparseSeed ./internal/schemes/wrap/sandbox/ ;; esac
case $what in F7|all) t F7 TestAtk35bReadPath ./internal/schemes/allowlist/sandbox/ ;; esac
case $what in F6|all) mkdir -p /tmp/atk35b/pdeath && cp $N/pdeathsig_main.go.txt /tmp/atk35b/pdeath/main.go &&
  printf 'module pdeath\ngo 1.22\n' > /tmp/atk35b/pdeath/go.mod && echo "== F6" && (cd /tmp/atk35b/pdeath && go run .) ;; esac
cd /; rm -rf $W /tmp/atk35b/pdeath
