package wslayer

import (
	"path/filepath"
	"strings"
	"testing"
)

// inlineCase: files (a config, a script) that hand a runtime its code inline; target written
// by the call, applied or refused.
type inlineCase struct {
	name    string
	files   map[string]string
	target  string
	applied bool
}

func runInlineCases(t *testing.T, cases []inlineCase) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	for _, k := range cases {
		ws, _ := filepath.EvalSymlinks(t.TempDir())
		for p, s := range map[string]string{"srv/main.py": "print('srv')\n", "srv/__init__.py": "", "srv/main.js": "console.log(1)\n",
			"app/main.py": "print('app')\n", "app/__init__.py": "", "app/main.js": "console.log(1)\n", "docs/a.md": "a\n"} {
			write(t, filepath.Join(ws, filepath.FromSlash(p)), s)
		}
		for p, s := range k.files {
			write(t, filepath.Join(ws, filepath.FromSlash(p)), s)
		}
		applied, why, sum := commitOne(t, ws, k.target, "import os; os.system('id')\n")
		if applied != k.applied {
			t.Errorf("%s: %s applied %v (%q), want %v: %s", k.name, k.target, applied, why, k.applied, sum)
		}
	}
}

func mcpJSON(command, args string) map[string]string {
	return map[string]string{".mcp.json": `{"mcpServers": {"s": {"command": "` + command + `", "args": [` + args + `]}}}`}
}

// Inline code is read as the runtime's getopt reads its command line, from the config's
// strings as its format's parser decodes them (atk42 F1: only a string that was exactly -c or
// -e, raw, was read). Red under mutants workspace-follow-inline-getopt (one spelling of the
// option), workspace-follow-inline-decode (the strings raw, JSON/TOML basic only) and
// workspace-follow-py-semicolon (one import a line).
func TestCommitFollowsInlineCodeSpellings(t *testing.T) {
	runInlineCases(t, []inlineCase{
		{"control: python3 -c", mcpJSON("python3", `"-c", "import srv.main"`), "srv/main.py", false},
		{"python3 -Bc (a cluster)", mcpJSON("python3", `"-Bc", "import srv.main"`), "srv/main.py", false},
		{"python3 -cCODE (joined)", mcpJSON("python3", `"-cimport srv.main"`), "srv/main.py", false},
		{"python3 -uBcCODE", mcpJSON("python3", `"-uBcimport srv.main"`), "srv/main.py", false},
		{"JSON \\n", mcpJSON("python3", `"-c", "import sys\nimport srv.main"`), "srv/main.py", false},
		{"JSON \\u000a", mcpJSON("python3", `"-c", "import sys\u000aimport srv.main"`), "srv/main.py", false},
		{"JSON \\u0069", mcpJSON("python3", `"-c", "\u0069mport srv.main"`), "srv/main.py", false},
		{"a statement list", mcpJSON("python3", `"-c", "import os; import srv.main"`), "srv/main.py", false},
		{"node -pe", mcpJSON("node", `"-pe", "require('./srv/main.js')"`), "srv/main.js", false},
		{"node --eval=", mcpJSON("node", `"--eval=require('./srv/main.js')"`), "srv/main.js", false},
		{"node --print=", mcpJSON("node", `"--print=require('./srv/main.js')"`), "srv/main.js", false},
		{"Continue YAML plain scalars", map[string]string{".continue/mcpServers/s.yaml": "name: s\nmcpServers:\n  - name: s\n" +
			"    command: python3\n    args:\n      - -c\n      - import srv.main\n"}, "srv/main.py", false},
		{"YAML flow sequence", map[string]string{".continue/mcpServers/s.yaml": "mcpServers:\n  - name: s\n    command: python3\n" +
			"    args: [-Bc, 'import os; import srv.main']\n"}, "srv/main.py", false},
		{"YAML block scalar", map[string]string{".continue/mcpServers/s.yaml": "mcpServers:\n  - name: s\n    command: python3\n" +
			"    args:\n      - -c\n      - |\n        import os\n        import srv.main\n"}, "srv/main.py", false},
		{"Codex TOML literal strings", map[string]string{".codex/config.toml": "[mcp_servers.s]\ncommand = 'python3'\nargs = ['-c', 'import srv.main']\n"},
			"srv/main.py", false},
		{"TOML multi-line basic string", map[string]string{".codex/config.toml": "[mcp_servers.s]\ncommand = \"python3\"\nargs = [\"-c\", \"\"\"\nimport os\nimport srv.main\"\"\"]\n"},
			"srv/main.py", false},
		{"a hook's one command string", map[string]string{".claude/settings.json": `{"hooks": {"Stop": [{"hooks": [{"type": "command", ` +
			`"command": "cd \"$CLAUDE_PROJECT_DIR\" && python3 -Bc 'import srv.main'"}]}]}}`}, "srv/main.py", false},
		{"a hook's bash -lc string", map[string]string{".claude/settings.json": `{"hooks": {"Stop": [{"hooks": [{"type": "command", ` +
			`"command": "bash -lc \"node -e \\\"require('./srv/main.js')\\\"\""}]}]}}`}, "srv/main.js", false},
		// ordinary projects: what the code does not import stays the call's
		{"python3 -Bc: another directory", mcpJSON("python3", `"-Bc", "import srv.main"`), "docs/a.md", true},
		{"YAML -c: another package", map[string]string{".continue/mcpServers/s.yaml": "mcpServers:\n  - name: s\n    command: python3\n" +
			"    args:\n      - -c\n      - import srv.main\n"}, "app/main.py", true},
		{"docker -e is not code", mcpJSON("docker", `"run", "-e", "FOO=bar", "-i", "img"`), "srv/main.py", true},
		{"a hook printing", map[string]string{".claude/settings.json": `{"hooks": {"Stop": [{"hooks": [{"type": "command", ` +
			`"command": "python3 -c 'print(1)' && bash -lc 'echo done'"}]}]}}`}, "srv/main.py", true},
	})
}

// A protected shell script hands a runtime its code inline too: its -c and -e words and a
// heredoc or here-string to `python3 -` are read by the same reader, from the directory the
// statement runs in (atk42 F1: the script's words were only paths). A program the check cannot
// see (a pipe, a cluster it does not read) fails closed for that directory. Red under mutant
// workspace-follow-shell-inline.
func TestCommitFollowsShellInlineCode(t *testing.T) {
	script := func(body string) map[string]string {
		return map[string]string{".mcp.json": `{"mcpServers": {"s": {"command": "bash", "args": ["scripts/run.sh"]}}}`,
			"scripts/run.sh": "#!/bin/bash\nset -euo pipefail\n" + body + "\n"}
	}
	up := "cd \"$(dirname \"$0\")/..\"\n"
	runInlineCases(t, []inlineCase{
		{"exec python3 -c", script(up + "exec python3 -c 'import app.main'"), "app/main.py", false},
		{"python3 -Bc statement list", script(up + "python3 -Bc 'import os; import app.main'"), "app/main.py", false},
		{"heredoc to python3 -", script(up + "python3 - <<'EOF'\nimport app.main\nEOF"), "app/main.py", false},
		{"heredoc to python3 (no -)", script(up + "exec python3 <<EOF\nimport app.main\nEOF"), "app/main.py", false},
		{"<<- heredoc", script(up + "python3 -u - <<-\"END\"\n\timport app.main\n\tEND"), "app/main.py", false},
		{"here-string", script(up + "python3 <<< 'import app.main'"), "app/main.py", false},
		{"node -e", script(up + "exec node -e \"require('./app/main.js')\""), "app/main.js", false},
		{"bash -c nesting python3 -c", script(up + "bash -c \"python3 -c 'import app.main'\""), "app/main.py", false},
		{"a pipe into python3 fails closed", script("cd \"$(dirname \"$0\")/../app\"\ncat code.txt | python3"), "docs/a.md", false},
		// ordinary scripts
		{"heredoc to cat is data", script(up + "cat > /tmp/x.txt <<'EOF'\nimport app.main\nit's\nEOF\nexec python3 srv/main.py"), "app/main.py", true},
		{"python3 -c printing", script(up + "python3 -c 'print(1)'\npython3 --version\nexec python3 srv/main.py"), "app/main.py", true},
		{"python3 -c: another directory", script(up + "exec python3 -c 'import app.main'"), "docs/a.md", true},
	})
}

// The config readers: each format's strings decoded, in order.
func TestConfigStrings(t *testing.T) {
	for _, k := range []struct {
		text string
		yaml bool
		want string
	}{
		{`{"a": ["-c", "x\ny\u0069", "q\"r"]} // c`, false, "a|-c|x\nyi|q\"r"},
		{"a = ['-c', 'b\\n'] # 'c'\nb = '''\nm\n'''", false, "-c|b\\n|m\n"},
		{"k: v # c\nl:\n  - -c\n  - 'it''s'\n  - \"x\\ty\"\nf: [a, 'b', c d]\nb: |\n  one\n   two\nz: 1\n", true, "v|-c|it's|x\ty|a|b|c d|one\n two|1"},
	} {
		if got := strings.Join(configStrings(k.text, k.yaml), "|"); got != k.want {
			t.Errorf("configStrings(%q) = %q, want %q", k.text, got, k.want)
		}
	}
}
