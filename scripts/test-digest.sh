#!/bin/sh
# test-digest.sh LOG: what failed in a `go test ./...` run whose output is in LOG, in at most
# about 45 lines, for the end of make test's output (a CI log is often read from its tail, and
# a hung package's goroutine dump pushes everything else out of it). Most important last:
# goroutines of a killed or timed-out test binary that are in the project's code, the tests'
# own failure lines, then the failed tests and packages.
log=$1
[ -s "$log" ] || exit 0
echo "== DIGEST of the failures above (make test prints it when go test fails)"
# A goroutine dump: each goroutine's header with its first frame in the project (not the
# testing package's), when it has one.
awk '
/^goroutine [0-9]+ / { hdr = $0; shown = 0; next }
/^github\.com\/mcpsandbox\/mcpsandbox\// && hdr != "" && !shown {
	fn = $0; getline loc; sub(/^[ \t]+/, "", loc); sub(/ \+0x[0-9a-f]+$/, "", loc)
	print "  " hdr " " fn " at " loc; shown = 1
}
/^$/ { hdr = "" }
' "$log" | head -15
grep -E '^(panic: |\*\*\* Test killed|fatal error: |SIGQUIT)' "$log" | head -5
# A timed-out binary names the tests it was running.
awk '/^[ \t]+running tests:/ { on = 1; next } on && /^\t\t/ { print "  running: " $1 " " $2; next } { on = 0 }' "$log" | head -5
grep -E '^[[:space:]]+[A-Za-z0-9_]+\.go:[0-9]+: ' "$log" | cut -c1-300 | head -15
grep -E '^(--- FAIL|FAIL[[:space:]])' "$log" | head -10
