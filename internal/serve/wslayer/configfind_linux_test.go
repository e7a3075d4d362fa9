package wslayer

import (
	"strings"
	"testing"
)

// A shell with noexec reads its script and runs none of it (atk49a F9): `find . -name '*.sh'
// -exec bash -n {} +` (a syntax check) was taken for running each file found below the root,
// and every change was refused. bash -n, sh -n, -o noexec and a cluster holding n now run
// nothing; -i (where the shells ignore -n) and +n after -n still run. Red with mutant
// workspace-config-find-noexec.
func TestCommitConfigLineFindNoexec(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, cmd := range []string{
		`find . -name '*.sh' -exec bash -n {} +`,
		`find . -name '*.sh' -exec sh -n {} \;`,
		`find . -name '*.sh' -exec dash -nv {} \;`,
		`find . -name '*.sh' -exec bash -o noexec {} +`,
		`find . -name '*.sh' -exec bash --norc -n -c 'python3 "$1"' _ {} \;`,
	} {
		t.Log(cmd)
		ws := lineProject(t, ".claude/settings.json", claudeHook(cmd))
		loadApplied(t, ws, "docs/a.md")
	}
	for _, cmd := range []string{
		`find . -name '*.sh' -exec bash {} +`,
		`find . -name '*.sh' -exec bash -n -i {} +`,
		`find . -name '*.sh' -exec bash -n +n {} +`,
		`find . -name '*.sh' -exec bash -n +o noexec {} +`,
	} {
		t.Log(cmd)
		ws := lineProject(t, ".claude/settings.json", claudeHook(cmd))
		loadRefused(t, ws, "docs/a.md", "find's -exec")
	}
}

func TestShellNoexec(t *testing.T) {
	for cmd, want := range map[string]bool{
		"bash -n {}": true, "sh -n {}": true, "bash -xn {}": true, "bash -o noexec {}": true, "zsh -n {}": true,
		"bash {}": false, "bash -n -i {}": false, "bash -ni {}": false, "bash -n +n {}": false, "bash -o noexec +o noexec {}": false,
		"python3 -n {}": false, "bash -n": true, "bash -o": false, "env bash -n {}": false, "bash -- -n {}": false,
	} {
		if got := shellNoexec(strings.Fields(cmd)); got != want {
			t.Errorf("shellNoexec(%s) = %v, want %v", cmd, got, want)
		}
	}
}
