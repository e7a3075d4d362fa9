package wslayer

import (
	"path/filepath"
	"slices"
	"testing"
)

// envSplit splits as GNU env 9.1's -S does (each row's words are what env handed printf).
func TestEnvSplitRules(t *testing.T) {
	for _, k := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{`python3\_-c\_"import\_app.main"`, []string{"python3", "-c", "import app.main"}, true},
		{`python3 -c "import\_app.main"`, []string{"python3", "-c", "import app.main"}, true},
		{`a\_b "c\_d" e\tf`, []string{"a", "b", "c d", "e\tf"}, true},
		{`'x\_y' z`, []string{`x\_y`, "z"}, true},
		{`a\cb c`, []string{"a"}, true},
		{`a #b c`, []string{"a"}, true},
		{`a#b c`, []string{"a#b", "c"}, true},
		{`a"b c"d 'e f'`, []string{"ab cd", "e f"}, true},
		{`'a\'b' 'c\\d' 'e\nf'`, []string{"a'b", `c\d`, `e\nf`}, true},
		{`"\$X" \#y`, []string{"$X", "#y"}, true},
		{`${HOME}x "${HOME}"`, []string{"${HOME}x", "${HOME}"}, true},
		{`$HOME`, nil, false},
		{`a\ b`, nil, false},
		{`a\x`, nil, false},
		{`"a`, nil, false},
	} {
		got, ok := envSplit(k.in)
		if ok != k.ok || ok && !slices.Equal(got, k.want) {
			t.Errorf("envSplit(%q) = %q, %v; want %q, %v", k.in, got, ok, k.want, k.ok)
		}
	}
}

// env -S's string was split at blanks by the shell reader, but env splits it by its own rules
// (`\_` a separator, a blank in double quotes): `env -S 'python3\_-c\_"import\_app.main"'` was
// one word, no program, and env ran app.main, writable (atk45a F6). Red with mutant
// workspace-inline-env-split.
func TestCommitEnvSplitString(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	script := func(line string) map[string]string {
		return map[string]string{".mcp.json": `{"mcpServers": {"s": {"command": "bash", "args": ["scripts/run.sh"]}}}`,
			"scripts/run.sh": "#!/bin/bash\ncd \"$(dirname \"$0\")/..\"\n" + line + "\n"}
	}
	for _, files := range []map[string]string{
		script(`exec env -S 'python3\_-c\_"import\_app.main"'`),
		script(`exec env -iS'python3\_-c\_"import\_app.main"'`),
		script(`exec env -u DEBUG --split-string='python3\_-c' 'import app.main'`),
		script(`exec env -S 'python3\_app/main.py'`),
		{".mcp.json": `{"mcpServers": {"s": {"command": "env", "args": ["-S", "python3\\_-c\\_\"import\\_app.main\""]}}}`},
		{".mcp.json": `{"mcpServers": {"s": {"command": "env", "args": ["-S", "python3\\_app/main.py"]}}}`},
		{".claude/settings.json": claudeHook(`cd "$CLAUDE_PROJECT_DIR" && env -S 'python3 -c "import\_app.main"'`)},
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, "app", "__init__.py"), "")
		write(t, filepath.Join(ws, "app", "main.py"), "print('app')\n")
		for p, s := range files {
			write(t, filepath.Join(ws, filepath.FromSlash(p)), s)
		}
		loadRefused(t, ws, "app/main.py", `starts`)
		loadApplied(t, ws, "docs/a.md")
	}
	// an ordinary env -S line: what it runs is protected, the rest writable
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "env", "args": ["-S", "PORT=8080 node srv/index.js --log ${LOG_DIR}/s.log"]}}}`)
	write(t, filepath.Join(ws, "srv", "index.js"), "console.log(1)\n")
	loadRefused(t, ws, "srv/index.js", startsIt)
	for _, rel := range []string{"docs/a.md", "app/main.py", "README.md"} {
		loadApplied(t, ws, rel)
	}
}
