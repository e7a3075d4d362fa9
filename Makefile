# make test: everything the test suite needs that lives in the repo, then the suite.
.PHONY: test build demo bench fuzz mutants

build:
	CGO_ENABLED=0 go build -o bin/mcpsandbox ./cmd/mcpsandbox

demo:
	go run ./cmd/mcpsandbox demo

test:
	npm ci --prefix e2e/node --no-audit --no-fund --silent
	npm ci --prefix internal/harness/e2bfake/sdktest --no-audit --no-fund --silent
	go vet ./... && go vet -tags testhooks ./...
	@# -tags testhooks: a test build (internal/testhooks), with the harness's egress stand-ins and
	@# its offline E2B server; go test ./mutants checks the release build carries neither.
	@# -timeout 45m: a package's whole run (e2e's is the longest: 15 min on a quiet 2-CPU VM, 21 min on one
	@# whose process starts were five times slower); .ci/run has 90 minutes in all.
	@# Tests skipped for a missing prerequisite (Docker engine, test image, npm packages) are listed
	@# after the run: go test shows a passing package's output only with -v (internal/testenv).
	@# On a failure, scripts/test-digest.sh repeats what failed at the end (a hung package's
	@# goroutine dump can be thousands of lines).
	@skips=$$(mktemp); log=$$(mktemp); rc=$$(mktemp); echo "go test -race -tags testhooks -count=1 -timeout 45m ./..."; \
	{ MCPSANDBOX_SKIP_REPORT=$$skips go test -race -tags testhooks -count=1 -timeout 45m ./... 2>&1; echo $$? >$$rc; } | tee $$log; \
	status=$$(cat $$rc); \
	if [ -s $$skips ]; then echo "== SKIPPED (they prove nothing on this machine; CI=true fails on them):" >&2; cat $$skips >&2; fi; \
	if [ "$$status" != 0 ]; then sh scripts/test-digest.sh $$log; fi; \
	rm -f $$skips $$log $$rc; exit $$status

bench:
	go run -tags testhooks ./bench

fuzz:
	go test ./policy -run XXX -fuzz FuzzParse -fuzztime 60s

# mutants: every enforcement mechanism switched off in turn (-tags mutant); each must be caught.
# Writes docs/mutants.md; exits non-zero when one survives.
mutants:
	go run ./mutants -q -o docs/mutants.md
