package wslayer

import (
	"path/filepath"
	"testing"
)

// runDefaultApp is a started script's last line: what runs is ${APP_DIR:-app}'s main.py.
const runDefaultApp = "exec python3 \"${APP_DIR:-app}/main.py\"\n"

// A run.sh's ${APP_DIR:-app} was taken for app after the commonest ways a script loads a .env
// other than source/./eval: a declaration or read whose name the reader cannot spell sets names
// it does not see, and bash ran lib/main.py, writable (atk44a F1). Such a program's later
// defaults are not known to be what runs. Red with mutant workspace-shell-default-declare.
func TestCommitShellDefaultsAfterComputedNames(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, head := range []string{
		"export $(grep -v '^#' .env | xargs)\n",
		"export $(cat .env)\n",
		"while IFS='=' read -r k v; do export \"$k=$v\"; done < .env\n",
		"while read -r line; do export \"$line\"; done < .env\n",
		"declare -x $(cat .env)\n",
		"readonly \"$(cat .env)\"\n",
		"typeset -x \"$(head -n1 .env)\"\n",
		"IFS== read -r APP_DIR < .env.app\n",
		"n=$(cut -d= -f1 .env); printf -v \"$n\" '%s' lib; export \"$n\"\n",
	} {
		ws := runShProject(t, head+runDefaultApp)
		write(t, filepath.Join(ws, ".env"), "APP_DIR=lib\n")
		write(t, filepath.Join(ws, ".env.app"), "lib\n")
		write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
		if applied, why, _ := commitOne(t, ws, "lib/main.py", "evil\n"); applied {
			t.Errorf("%q: lib/main.py, which the loaded APP_DIR makes the program, was applied (%q)", head, why)
		}
	}
	// ordinary declarations name what they set: the default is still what runs, the rest writable
	for _, head := range []string{
		"export PORT=8080 LOG_LEVEL=\"${LOG_LEVEL:-info}\"\n",
		"declare -r NAME=srv; readonly NAME\n",
		"read -r -p \"$PROMPT\" answer || true\n",
		"printf '%s\\n' \"$(date)\" \"$HOME\"\n",
		"local_dir=$(pwd); export local_dir\n",
	} {
		ws := runShProject(t, head+runDefaultApp)
		loadRefused(t, ws, "app/main.py", startsIt)
		loadApplied(t, ws, "docs/a.md")
	}
}

// A Claude Code hook's ${CLAUDE_PROJECT_DIR:-/opt/proj} was read as its default, outside the
// workspace, but Claude Code sets CLAUDE_PROJECT_DIR for every hook: the shell ran the
// workspace's scripts/fmt.py, writable (atk44a F8). A name the client sets is the client's
// value. Red with mutant workspace-config-client-set-names.
func TestCommitHookClientSetNames(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	hook := func(cmd string) string {
		return `{"hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": ` + cmd + `}]}]}}`
	}
	for _, cmd := range []string{
		`"python3 \"${CLAUDE_PROJECT_DIR:-/opt/proj}/scripts/fmt.py\""`,
		`"python3 \"${CLAUDE_PROJECT_DIR:-$HOME/proj}/scripts/fmt.py\""`,
		`"python3 ${CLAUDE_PROJECT_DIR:-/opt/proj}/scripts/fmt.py"`,
		// another name's default is still what runs (atk43 F2's reading)
		`"python3 \"${FMT_DIR:-scripts}/fmt.py\""`,
	} {
		for _, name := range []string{"settings.json", "settings.local.json"} {
			ws := t.TempDir()
			write(t, filepath.Join(ws, ".claude", name), hook(cmd))
			write(t, filepath.Join(ws, "scripts", "fmt.py"), "X = 1\n")
			loadRefused(t, ws, "scripts/fmt.py", `starts`)
			loadApplied(t, ws, "docs/a.md")
		}
	}
}
