package wslayer

import "testing"

// A runtime's standard input from a here-string or heredoc holding an expansion the reader did
// not resolve was read as that literal text, and a pipe into a command named by a variable was
// no runtime: bash ran app.main in each (atk45a F4). They fail closed as a pipe does; an
// unquoted heredoc's known variables are expanded and read. Red with mutants
// workspace-inline-stdin-text-unseen, workspace-inline-stdin-pipe,
// workspace-inline-stdin-command and workspace-inline-heredoc-expand.
func TestCommitStdinTextUnresolved(t *testing.T) {
	boot := map[string]string{"tools/boot.txt": "import app.main\n"}
	sh := func(line string) map[string]string { return with(runSh(line), boot) }
	runInlineCases(t, []inlineCase{
		{"here-string of a substitution", sh(`exec python3 - <<< "$(cat tools/boot.txt)"`), "app/main.py", false},
		{"here-string of a variable", sh("CODE=$(<tools/boot.txt)\nexec python3 - <<< \"$CODE\""), "app/main.py", false},
		{"heredoc of a substitution", sh("exec python3 - <<EOF\n$(cat tools/boot.txt)\nEOF"), "app/main.py", false},
		{"heredoc of a variable", sh("CODE=$(cat tools/boot.txt)\nexec python3 - <<EOF\n$CODE\nEOF"), "app/main.py", false},
		{"heredoc of backquotes", sh("exec node - <<EOF\n`cat tools/boot.js`\nEOF"), "app/main.js", false},
		{"heredoc, a known variable expanded", runSh("M=app\nexec python3 - <<EOF\nimport $M.main\nEOF"), "app/main.py", false},
		{"a pipe into a command named by a variable", sh("PY=$(command -v python3)\ncat tools/boot.txt | \"$PY\" -"), "app/main.py", false},
		{"a pipe into a command substitution", sh("cat tools/boot.txt | $(command -v python3)"), "app/main.py", false},
		{"a pipe into bash /dev/stdin", with(runSh("cat tools/boot.txt | bash /dev/stdin"),
			map[string]string{"tools/boot.txt": "python3 -c 'import app.main'\n"}), "app/main.py", false},
		{"a variable's command, a heredoc", runSh("PY=$(command -v python3)\n\"$PY\" - <<'EOF'\nimport app.main\nEOF"), "app/main.py", false},
		{"a variable's command, -c", runSh("PY=$(command -v python3)\n\"$PY\" -c 'import app.main'"), "app/main.py", false},
		// ordinary: literal or resolved text, escapes, data into a command named by a variable
		{"heredoc, known variable, escaped $", runSh("APP=srv\npython3 - <<EOF\nimport json\nprint(\"$APP\", \"\\$HOME\", \"${APP:-x}\")\nEOF\nexec python3 srv/main.py"), "docs/a.md", true},
		{"quoted heredoc holding $", runSh("python3 - <<'EOF'\nimport os\nprint(os.environ['$HOME'])\nEOF\nexec python3 srv/main.py"), "docs/a.md", true},
		{"here-string of a literal", runSh("python3 - <<< 'import json'\nexec python3 srv/main.py"), "docs/a.md", true},
		{"heredoc of $ alone", runSh("cat <<EOF | python3 -c 'import sys; sys.stdin.read()'\ncosts 5 $ a\nEOF\nexec python3 srv/main.py"), "docs/a.md", true},
		{"data piped to a variable's command", runSh("PY=$(command -v python3)\necho '{}' | \"$PY\" srv/main.py\nls | \"$GREP\" -q x\nexec python3 srv/main.py"), "docs/a.md", true},
		{"||: no pipe", runSh("command -v python3 || exit 1\ntrue || python3 srv/main.py\nexec python3 srv/main.py"), "docs/a.md", true},
	})
}

func with(m map[string]string, more map[string]string) map[string]string {
	for k, v := range more {
		m[k] = v
	}
	return m
}
