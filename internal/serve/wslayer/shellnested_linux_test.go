package wslayer

import (
	"path/filepath"
	"strings"
	"testing"
)

// scriptProject is lineProject with .mcp.json starting `sh tools/run.sh`, whose text is script.
func scriptProject(t *testing.T, script string) string {
	t.Helper()
	ws := lineProject(t, ".mcp.json", `{"mcpServers":{"s":{"command":"sh","args":["tools/run.sh"]}}}`)
	write(t, filepath.Join(ws, "tools", "run.sh"), "#!/bin/sh\n"+script)
	return ws
}

// A started script's nested shell codes are read as a config line's are (fix48-f): the
// started-script reader read none, so a tools/run.sh that runs server/main.py by `sh -c 'cd
// server && python3 main.py'`, a heredoc fed to sh, find -execdir, a wrapper's -c code or a
// nested sh -c left it writable (dash and bash run each). Red with mutant
// workspace-follow-shell-nested. An ordinary script (an echo naming server/, npm ci, a sh -c that
// only echoes, a usage text in a heredoc to cat) keeps the sources writable.
func TestCommitScriptNestedCodes(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, script := range []string{
		"sh -c 'cd server && python3 main.py'\n",
		"bash -c 'cd server && exec python3 main.py'\n",
		"sh -ec 'cd server; python3 main.py'\n",
		"sh <<'EOF'\ncd server && python3 main.py\nEOF\n",
		"bash <<EOF\ncd server\npython3 main.py\nEOF\n",
		"cat > /tmp/fix48f.sh <<'EOF'\ncd server && python3 main.py\nEOF\nsh /tmp/fix48f.sh\n",
		"find server -name main.py -execdir python3 {} \\;\n",
		"flock /tmp/x.lock -c 'cd server && python3 main.py'\n",
		"sh -c \"sh -c 'cd server && python3 main.py'\"\n",
		"export SRV=server\nsh -c 'cd \"$SRV\" && python3 main.py'\n",
		"SRV=server sh -c 'cd \"$SRV\" && python3 main.py'\n",
		"SRV=app\nsh -c 'cd \"${SRV:-server}\" && python3 main.py'\n",
		"echo 'cd server && python3 main.py' > /tmp/fix48f.sh\nsh /tmp/fix48f.sh\n",
		"set -e\nif [ -d server ]; then\n  sh -c 'cd server && python3 main.py'\nfi\n",
	} {
		t.Run(strings.ReplaceAll(strings.TrimSpace(script), "\n", "; "), func(t *testing.T) {
			serverRun(t, scriptProject(t, script))
		})
	}
	ws := scriptProject(t, "set -e\necho \"starting the server from server/\"\nnpm ci\nsh -c 'echo done'\n"+
		"cat <<EOF\nUsage: $0 [dir]\n  Runs the server from dir (default: ./)\nEOF\n"+
		"cat >&2 <<'EOF'\nrun: cd server && python3 main.py\nEOF\n")
	for _, p := range []string{"server/main.py", "server/helper.py", "other/main.py", "src/index.ts"} {
		loadApplied(t, ws, p)
	}
}

// A started script's nested codes count against the config lines' bounds (fix48-f): 300 `sh -c
// "$X"` of a 4 KB code (a variable expands each: the script's text is 4 KB) read 2.4 MB of code,
// past maxConfigLines, fail closed. Red with mutant workspace-follow-shell-nested-charge.
func TestCommitScriptNestedCharged(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := scriptProject(t, "X='#"+strings.Repeat("a", 4000)+"'\n"+strings.Repeat("sh -c \"$X\"\n", 300))
	loadRefused(t, ws, "docs/a.md", "1024 KiB")
}

// An .envrc's nested codes are read as a started script's (fix48-f's neighbour): direnv runs
// the .envrc in bash as the folder is entered, and `sh -c 'cd server && python3 main.py'` in it
// left server/main.py writable, the .envrc's reader reading none. Red with mutant
// workspace-envrc-nested. An ordinary .envrc (layout, dotenv, a sh -c that only echoes) keeps
// the sources writable. (find's `{}` in an .envrc already refuses every change: a word the .envrc
// reader cannot place.)
func TestCommitEnvrcNestedCodes(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, text := range []string{
		"sh -c 'cd server && python3 main.py'\n",
		"bash -c 'cd server && exec python3 main.py' &\n",
		"flock /tmp/x.lock -c 'cd server && python3 main.py'\n",
		"export SRV=server\nsh -c 'cd \"$SRV\" && python3 main.py'\n",
	} {
		t.Run(strings.ReplaceAll(strings.TrimSpace(text), "\n", "; "), func(t *testing.T) {
			ws := lineProject(t, ".envrc", text)
			for _, p := range []string{"server/main.py", "server/helper.py"} {
				loadRefused(t, ws, p, ".envrc")
			}
			for _, p := range []string{"other/main.py", "src/index.ts"} {
				loadApplied(t, ws, p)
			}
		})
	}
	ws := lineProject(t, ".envrc", "layout python3\ndotenv_if_exists\nsh -c 'echo entered'\n")
	for _, p := range []string{"server/main.py", "server/helper.py", "other/main.py", "src/index.ts"} {
		loadApplied(t, ws, p)
	}
}
