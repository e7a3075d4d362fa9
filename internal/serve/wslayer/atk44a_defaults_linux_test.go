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

// A started script's ${APP_DIR:-app} was taken for app unless a config's "env" key named
// APP_DIR, but whatever starts the script may set it: a config's `env APP_DIR=lib bash …`, a
// hook's `APP_DIR=lib bash …`, an outer script's export or prefix or sourced .env, an .envrc's
// export or dotenv, VS Code's envFile; bash ran lib/main.py, writable (atk44a F2). A default is
// the value only when no protected file may set its name. Red with mutant
// workspace-shell-default-setters.
func TestCommitScriptDefaultsSetByStarter(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	inner := "#!/bin/bash\ncd \"$(dirname \"$0\")/..\"\n" + runDefaultApp
	envRun := `{"mcpServers":{"s":{"command":"env","args":["APP_DIR=lib","bash","scripts/run.sh"]}}}`
	hook := `{"hooks":{"PostToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"cd \"$CLAUDE_PROJECT_DIR\"&&APP_DIR=lib bash scripts/run.sh"}]}]}}`
	vscode := `{"servers":{"s":{"type":"stdio","command":"bash","args":["scripts/run.sh"],"envFile":"${workspaceFolder}/.env"}}}`
	for _, c := range []struct {
		body  string
		files []string
	}{
		{runDefaultApp, []string{".mcp.json", envRun}},
		{runDefaultApp, []string{".mcp.json", `{}`, ".claude/settings.json", hook}},
		{"export APP_DIR=lib\nexec bash scripts/inner.sh\n", []string{"scripts/inner.sh", inner}},
		{"APP_DIR=lib exec bash scripts/inner.sh\n", []string{"scripts/inner.sh", inner}},
		{"set -a; . ./.env.local; set +a\nexec bash scripts/inner.sh\n", []string{"scripts/inner.sh", inner, ".env.local", "APP_DIR=lib\n"}},
		{runDefaultApp, []string{".envrc", "export APP_DIR=lib\n"}},
		{runDefaultApp, []string{".envrc", "dotenv\n", ".env", "APP_DIR=lib\n"}},
		{runDefaultApp, []string{".mcp.json", `{}`, ".vscode/mcp.json", vscode, ".env", "APP_DIR=lib\n"}},
		{runDefaultApp, []string{".mcp.json", `{"mcpServers":{"s":{"command":"npm","args":["start"]}}}`, "package.json", `{"scripts":{"start":"APP_DIR=lib bash scripts/run.sh"}}`}},
	} {
		ws := runShProject(t, c.body)
		write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
		for i := 0; i+1 < len(c.files); i += 2 {
			write(t, filepath.Join(ws, c.files[i]), c.files[i+1])
		}
		if applied, why, _ := commitOne(t, ws, "lib/main.py", "evil\n"); applied {
			t.Errorf("%q %q: lib/main.py, which the starter's APP_DIR makes the program, was applied (%q)", c.body, c.files, why)
		}
	}
	// nothing sets APP_DIR, or the script sets it itself, or the starter sets another name:
	// the default is what runs, the rest writable (atk42 F4)
	for _, c := range []struct {
		body  string
		files []string
	}{
		{runDefaultApp, nil},
		{"APP_DIR=\"${APP_DIR:-app}\"\nexec python3 \"$APP_DIR/main.py\"\n", nil},
		{"export PORT=8080\nexec bash scripts/inner.sh\n", []string{"scripts/inner.sh", inner}},
		{runDefaultApp, []string{".envrc", "export PORT=8080\ndotenv_if_exists\n", ".env", "LOG_LEVEL=info\n"}},
	} {
		ws := runShProject(t, c.body)
		write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
		for i := 0; i+1 < len(c.files); i += 2 {
			write(t, filepath.Join(ws, c.files[i]), c.files[i+1])
		}
		loadRefused(t, ws, "app/main.py", startsIt)
		loadApplied(t, ws, "lib/main.py")
		loadApplied(t, ws, "docs/a.md")
	}
}

// The files are read in an order the scripts do not choose: inner.sh, started by the config
// first, took its default before outer.sh, read next, showed it sets APP_DIR for inner.sh. Such
// a script is read again (atk44a F2). Red with mutant workspace-shell-default-late.
func TestCommitScriptDefaultsSetLater(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, outer := range []string{"export APP_DIR=lib\nexec bash scripts/inner.sh\n", "set -a; . ./.env.local; set +a\nexec bash scripts/inner.sh\n"} {
		ws := runShProject(t, runDefaultApp)
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers":{"a":{"command":"bash","args":["scripts/inner.sh"]},"b":{"command":"bash","args":["scripts/outer.sh"]}}}`)
		write(t, filepath.Join(ws, "scripts", "inner.sh"), "#!/bin/bash\ncd \"$(dirname \"$0\")/..\"\n"+runDefaultApp)
		write(t, filepath.Join(ws, "scripts", "outer.sh"), "#!/bin/bash\ncd \"$(dirname \"$0\")/..\"\n"+outer)
		write(t, filepath.Join(ws, ".env.local"), "APP_DIR=lib\n")
		write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
		if applied, why, _ := commitOne(t, ws, "lib/main.py", "evil\n"); applied {
			t.Errorf("%q: lib/main.py, which outer.sh's APP_DIR makes inner.sh's program, was applied (%q)", outer, why)
		}
	}
}
