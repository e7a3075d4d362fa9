#!/bin/sh
# devmachine-test.sh: run the tests that read HOME, XDG dirs or PATH as they would run on a
# developer's own machine — the MCP client CLIs installed (fake claude, codex, gemini, cursor,
# code, windsurf on PATH, each printing what it was asked and exiting 0), a real policy at
# $HOME/.config/mcpsandbox/policy.toml, ~/.claude.json, ~/.codex, ~/.gemini and ~/.cursor configs,
# and XDG_* variables pointing into that HOME. The suite must not notice any of it: every test
# package gives itself its own HOME, XDG dirs and PATH (issue 24, item 3).
#
# make test checks the same automatically for the tests that used to fail (e2e's
# TestSuitePassesOnADeveloperMachine); this script runs whole packages that way, for a developer
# or CI to check any package (it takes what `go test` takes: packages, -run, -short).
#
# Nothing real is touched: the "developer's HOME" is a scratch directory (Go's caches stay where
# they are). Afterwards the script checks that no test wrote into that HOME.
#
#   sh scripts/devmachine-test.sh                 # ./cmd/... ./internal/generate/... and e2e's Init|Wizard|CLI tests
#   sh scripts/devmachine-test.sh ./internal/serve/...     # other packages, same polluted machine
#   RUN='Init' sh scripts/devmachine-test.sh      # a narrower e2e -run pattern
set -eu
cd "$(dirname "$0")/.."

# Go's caches and module path stay the real ones (they live under the real HOME by default).
GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) GOPATH=$(go env GOPATH)
export GOCACHE GOMODCACHE GOPATH

root=$(mktemp -d "${TMPDIR:-/tmp}/mcpsandbox-devmachine.XXXXXX")
trap 'rm -rf "$root"' EXIT INT TERM
home=$root/home bin=$root/bin
mkdir -p "$bin" "$home/.config/mcpsandbox" "$home/.claude" "$home/.codex" "$home/.gemini" \
	"$home/.cursor" "$home/.config/Code/User" "$home/.local/state" "$home/.local/share" "$home/.cache" \
	"$home/work"

for c in claude codex gemini cursor code windsurf; do
	cat >"$bin/$c" <<EOF
#!/bin/sh
echo "$c (fake, from scripts/devmachine-test.sh): \$*" >>"$root/client-calls.log"
echo "$c 1.0.0 (fake)"
exit 0
EOF
	chmod +x "$bin/$c"
done

# The developer's own policy: valid, and unlike anything a test expects.
cat >"$home/.config/mcpsandbox/policy.toml" <<EOF
scheme = "allowlist"
name = "my-project"

[allowlist]
workspace = "$home/work"

[[allowlist.commands]]
name = "wc"
path = "/usr/bin/wc"
EOF
cat >"$home/.claude.json" <<EOF
{"mcpServers": {"sandbox": {"command": "/usr/local/bin/mcpsandbox", "args": ["serve", "--policy", "$home/.config/mcpsandbox/policy.toml"]}},
 "projects": {}}
EOF
printf '[mcp_servers.sandbox]\ncommand = "/usr/local/bin/mcpsandbox"\nargs = ["serve"]\n' >"$home/.codex/config.toml"
printf '{"mcpServers": {"sandbox": {"command": "/usr/local/bin/mcpsandbox", "args": ["serve"]}}}\n' >"$home/.gemini/settings.json"
printf '{"mcpServers": {}}\n' >"$home/.cursor/mcp.json"
printf '{"servers": {}}\n' >"$home/.config/Code/User/mcp.json"

# What the machine looked like before the tests, to see that none wrote into it.
(cd "$home" && find . -path ./.config/go -prune -o -exec ls -ld --time-style=+%s.%N {} + | grep -v " \./\.config$" | sort) >"$root/before"

export HOME="$home" PATH="$bin:$PATH"
export XDG_CONFIG_HOME="$home/.config" XDG_STATE_HOME="$home/.local/state" \
	XDG_DATA_HOME="$home/.local/share" XDG_CACHE_HOME="$home/.cache"
unset MCPSANDBOX_TEST_BINARY 2>/dev/null || true

echo "devmachine-test: HOME=$HOME with a policy, ~/.claude.json and client configs; claude, codex, gemini, cursor, code, windsurf on PATH" >&2
status=0
if [ $# -gt 0 ]; then
	go test -race -tags testhooks -count=1 "$@" || status=$?
else
	go test -race -tags testhooks -count=1 ./cmd/... ./internal/generate/... || status=$?
	go test -race -tags testhooks -count=1 -run "${RUN:-Init|Wizard|CLI}" ./e2e/ || status=$?
fi

(cd "$home" && find . -path ./.config/go -prune -o -exec ls -ld --time-style=+%s.%N {} + | grep -v " \./\.config$" | sort) >"$root/after"
if ! cmp -s "$root/before" "$root/after"; then
	echo "devmachine-test: FAIL: the tests changed the developer's HOME:" >&2
	diff "$root/before" "$root/after" >&2 || true
	status=1
fi
if [ -s "$root/client-calls.log" ]; then
	echo "devmachine-test: FAIL: the tests ran the developer's client CLIs:" >&2
	cat "$root/client-calls.log" >&2
	status=1
fi
[ $status = 0 ] && echo "devmachine-test: PASS: the suite ignored the developer's HOME, XDG dirs and client CLIs" >&2
exit $status
