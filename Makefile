# make test: everything the test suite needs that lives in the repo, then the suite.
.PHONY: test build demo bench fuzz mutants

build:
	CGO_ENABLED=0 go build -o bin/mcpsandbox ./cmd/mcpsandbox

demo:
	go run ./cmd/mcpsandbox demo

test:
	npm ci --prefix e2e/node --no-audit --no-fund --silent
	npm ci --prefix harness/e2bfake/sdktest --no-audit --no-fund --silent
	go vet ./...
	go test -race -count=1 -timeout 20m ./...

bench:
	go run ./bench

fuzz:
	go test ./policy -run XXX -fuzz FuzzParse -fuzztime 60s

# mutants: every enforcement mechanism switched off in turn (-tags mutant); each must be caught.
# Writes docs/mutants.md; exits non-zero when one survives.
mutants:
	go run ./mutants -q -o docs/mutants.md
