package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A file pattern in a config (lint-staged's keys, lefthook's glob, Kiro's when.patterns) was
// read as a command line whose first match is its program: the root's bin.js or vite.config.ts,
// a program at the root, refused every change of a Node project, and lefthook's
// `src/**/*.{js,ts}` made src/components/ read-only (atk47a F2). sh runs a match the way it runs
// any command word (dash and bash alike, atk47a F2's report): one without a `/` is looked up in
// PATH (`a.ts: not found`), one nobody may execute is refused (`Permission denied`), a
// directory too (TestCommitConfigGlobAsShRuns); and these patterns are not read as command
// lines at all since their schemas are known (TestCommitConfigPatternFieldsNotRead). Red with
// mutants workspace-config-glob-path (bin.js) and workspace-config-glob-exec (src/components)
// together with workspace-config-pattern-fields.
func TestCommitConfigPatternNotProgram(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	kiro := `{"enabled":true,"name":"lint","version":"1","when":{"type":"fileEdited","patterns":["src/**/*.ts","*.ts","src/**"]},` +
		`"then":{"type":"askAgent","prompt":"Lint the edited file"}}`
	for _, k := range [][2]string{
		{".lintstagedrc.json", `{"*.{js,jsx,ts,tsx}": ["eslint --fix", "prettier --write"], "*.md": "prettier --write"}`},
		{"lefthook.yml", "pre-commit:\n  parallel: true\n  commands:\n    eslint:\n      glob: \"*.{js,ts,jsx,tsx}\"\n      run: npx eslint {staged_files}\n"},
		{"lefthook.yml", "pre-commit:\n  commands:\n    eslint:\n      glob: \"src/**/*.{js,ts}\"\n      run: npx eslint --fix {staged_files}\n"},
		{".kiro/hooks/lint.kiro.hook", kiro},
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, filepath.FromSlash(k[0])), k[1])
		write(t, filepath.Join(ws, "package.json"), `{"name":"x","type":"module"}`)
		write(t, filepath.Join(ws, "bin.js"), "#!/usr/bin/env node\nimport './src/index.ts'\n")
		if err := os.Chmod(filepath.Join(ws, "bin.js"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(ws, "vite.config.ts"), "export default {}\n")
		write(t, filepath.Join(ws, "src", "index.ts"), "export const a = 1\n")
		write(t, filepath.Join(ws, "src", "util.ts"), "export const b = 2\n")
		for i := range 10 {
			write(t, filepath.Join(ws, "src", "components", fmt.Sprintf("f%03d.ts", i)), "export {}\n")
		}
		for _, p := range []string{"src/index.ts", "src/util.ts", "src/components/f005.ts", "README.md"} {
			loadApplied(t, ws, p)
		}
	}
}

// A glob that is a command's program is still read as sh runs it: an executable first match is
// the program (and its package), a first match nobody may execute is protected alone (a call's
// chmod would make it the program), and what the pattern does not reach stays writable.
func TestCommitConfigGlobProgram(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []struct {
		cmd, file string
		exec      bool
		other     string
	}{
		{`scripts/*.sh`, "scripts/fmt.sh", true, "docs/a.md"},
		{`./tools/*.sh --fix`, "tools/fmt.sh", true, "docs/a.md"},
		{`"$CLAUDE_PROJECT_DIR"/scripts/fm?.sh`, "scripts/fmt.sh", true, "docs/a.md"},
		{`scripts/fm?.sh`, "scripts/fmt.sh", false, "scripts/notes.txt"},
		{`cd scripts && ./*.sh`, "scripts/fmt.sh", false, "docs/a.md"},
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".claude", "settings.json"), claudeHook(k.cmd))
		write(t, filepath.Join(ws, filepath.FromSlash(k.file)), "#!/bin/sh\necho fmt\n")
		write(t, filepath.Join(ws, "scripts", "notes.txt"), "x\n")
		if k.exec {
			if err := os.Chmod(filepath.Join(ws, filepath.FromSlash(k.file)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		loadRefused(t, ws, k.file, `".claude/settings.json\" starts`)
		loadApplied(t, ws, k.other)
	}
}

// commitFiles is one call writing files (rel: content), applied or not.
func commitFiles(t *testing.T, ws string, files map[string]string) (applied int) {
	t.Helper()
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	for rel, s := range files {
		write(t, filepath.Join(l.Upper, filepath.FromSlash(rel)), s)
	}
	if _, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 26, UID: -1, GID: -1, SandboxPath: ws}); err != nil {
		t.Fatal(err)
	}
	for rel, s := range files {
		if b, _ := os.ReadFile(filepath.Join(ws, filepath.FromSlash(rel))); string(b) == s {
			applied++
		}
	}
	return applied
}

// A config pattern's matches were bounded at 256, past which at the root every change was
// refused: a call's own 300 gen/*.py (Kiro's "**/*.py") or notes/*.md (lefthook's glob), or a
// project's 300 tests, refused every later change (atk47a F3). The glob takes its first match
// only, so no bound of matches is needed. Red with mutant workspace-config-glob-walk together
// with workspace-config-pattern-fields (TestCommitConfigGlobAsShRuns alone).
func TestCommitConfigGlobCallsFiles(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	kiro := `{"enabled":true,"name":"fmt","version":"1","when":{"type":"fileEdited","patterns":["**/*.py"]},` +
		`"then":{"type":"askAgent","prompt":"Check the edited file"}}`
	lefthook := "pre-commit:\n  commands:\n    mdlint:\n      glob: \"**/*.md\"\n      run: npx markdownlint-cli2 {staged_files}\n"
	for _, k := range [][4]string{
		{".kiro/hooks/fmt.kiro.hook", kiro, "gen", "py"},
		{"lefthook.yml", lefthook, "notes", "md"},
		{".kiro/hooks/fmt.kiro.hook", kiro, "tests", "py"},
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, filepath.FromSlash(k[0])), k[1])
		files := map[string]string{}
		for i := range 300 {
			files[fmt.Sprintf("%s/f%03d.%s", k[2], i, k[3])] = "x = 1\n"
		}
		if k[2] == "tests" {
			for rel, s := range files {
				write(t, filepath.Join(ws, filepath.FromSlash(rel)), s)
			}
			loadApplied(t, ws, "tests/f150.py")
		} else if n := commitFiles(t, ws, files); n != 300 {
			t.Errorf("%s: %d of the call's 300 %s files applied", k[0], n, k[2])
		}
		for _, p := range []string{"docs/a.md", "app/main.py", "README.md"} {
			loadApplied(t, ws, p)
		}
	}
}

// A config line's glob walked every level filepath.Glob reaches, outside the workspace too:
// `/*/*/*/*/*/*` in a hook held a commit 21 s (atk47a F7). The walk stays in the workspace and
// reads at most maxGlobEntries entries a commit; cut below the root, it protects the
// directory the pattern starts below, never the workspace. Red with mutants
// workspace-config-glob-outside and workspace-config-glob-budget.
func TestCommitConfigGlobBounded(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	reads, outside := 0, 0
	old := readGlobDir
	var ws string
	readGlobDir = func(d string) ([]os.DirEntry, error) {
		reads++
		if !strings.HasPrefix(d, ws) {
			outside++
		}
		return old(d)
	}
	t.Cleanup(func() { readGlobDir = old })
	ws, _ = filepath.EvalSymlinks(t.TempDir())
	write(t, filepath.Join(ws, ".claude", "settings.json"), claudeHook(`/*/*/*/*/*/x.sh; /usr/*/*/*/y.sh; ../*/*/z.sh`))
	start := time.Now()
	loadApplied(t, ws, "docs/a.md")
	if outside > 0 || time.Since(start) > 5*time.Second {
		t.Errorf("patterns outside the workspace: %d directories read outside it, %v", outside, time.Since(start))
	}
	oldMax := maxGlobEntries
	maxGlobEntries = 64
	t.Cleanup(func() { maxGlobEntries = oldMax })
	for i := range 200 {
		write(t, filepath.Join(ws, "tools", fmt.Sprintf("d%03d", i), "x.txt"), "x\n")
	}
	write(t, filepath.Join(ws, "tools", "zz", "run.sh"), "#!/bin/sh\n")
	write(t, filepath.Join(ws, ".claude", "settings.json"), claudeHook(`tools/*/*.sh`))
	reads = 0
	loadRefused(t, ws, "tools/zz/run.sh", `".claude/settings.json\" starts`) // cut: tools/ protected
	loadApplied(t, ws, "docs/a.md")
	if reads > 4 {
		t.Errorf("a glob over 200 directories read %d of them (bound %d entries)", reads, maxGlobEntries)
	}
}

// The statement bound was checked between config strings only: one hook string of 100,000
// statements after 16 cds, each judged from 16 directories, held a commit 19.6 s (atk47a F7).
// Statements are counted as they are read, once per directory. Red with mutant
// workspace-config-shell-stmts-each.
func TestCommitConfigLineStmtsInString(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	old := maxConfigStmts
	maxConfigStmts = 256
	t.Cleanup(func() { maxConfigStmts = old })
	for _, k := range []struct {
		n       int
		applied bool
	}{{4, true}, {200, false}} {
		ws := t.TempDir()
		cmd := "cd a; cd b; cd c"
		for i := range k.n {
			cmd += fmt.Sprintf("; echo %d", i)
		}
		write(t, filepath.Join(ws, ".claude", "settings.json"), claudeHook(cmd))
		if applied, why, sum := commitOne(t, ws, "docs/a.md", "x\n"); applied != k.applied {
			t.Errorf("%d statements in one string: docs/a.md applied %v (%q), want %v: %s", k.n, applied, why, k.applied, sum)
		}
	}
}

// A file pattern by its config's schema is not read as a command line at all (Kiro's
// when.patterns, lefthook's glob and exclude, lint-staged's JSON keys, pre-commit's files):
// read so, its first match was protected alone, the project's first Python file or Markdown
// page read-only (atk47a F2). The same text as the schema's command is still read. Red with
// mutant workspace-config-pattern-fields.
func TestCommitConfigPatternFieldsNotRead(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	kiro := func(pats, then string) string {
		return `{"enabled":true,"name":"fmt","version":"1","when":{"type":"fileEdited","patterns":` + pats + `},"then":` + then + `}`
	}
	ask := `{"type":"askAgent","prompt":"Check the edited file"}`
	for _, k := range []struct{ file, text, edit string }{
		{".kiro/hooks/fmt.kiro.hook", kiro(`["**/*.py"]`, ask), "app/main.py"},
		{".kiro/hooks/fmt.kiro.hook", kiro(`["app/*.py", "docs/*.md"]`, ask), "docs/a.md"},
		{"lefthook.yml", "pre-commit:\n  commands:\n    md:\n      glob: \"**/*.md\"\n      exclude: [\"app/*.py\"]\n      run: npx markdownlint-cli2 {staged_files}\n", "docs/a.md"},
		{"lefthook.yml", "pre-commit:\n  commands:\n    md:\n      glob: \"**/*.md\"\n      run: npx markdownlint-cli2 {staged_files}\n", "docs/a.md"},
		{".lintstagedrc.json", `{"app/*.py": "ruff check --fix", "docs/*.md": ["prettier --write"]}`, "app/main.py"},
		{".pre-commit-config.yaml", "repos:\n- repo: local\n  hooks:\n  - id: t\n    name: t\n    entry: pytest\n    language: system\n    files: app/*.py\n", "app/main.py"},
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, filepath.FromSlash(k.file)), k.text)
		write(t, filepath.Join(ws, "app", "main.py"), "x = 1\n")
		write(t, filepath.Join(ws, "docs", "a.md"), "a\n")
		loadApplied(t, ws, k.edit)
	}
	// a Kiro hook whose command is the same text as its pattern: run, so read
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".kiro/hooks/fmt.kiro.hook"), kiro(`["scripts/fm?.sh"]`, `{"type":"runCommand","command":"scripts/fm?.sh"}`))
	write(t, filepath.Join(ws, "scripts", "fmt.sh"), "#!/bin/sh\n")
	loadRefused(t, ws, "scripts/fmt.sh", "starts")
	loadApplied(t, ws, "docs/a.md")
}

// The glob rules where no schema says what a string is (a command line a hook runs): `*.sh` is
// looked up in PATH (the root's executable fmt.sh is not run), `tools/*.py` nobody may execute
// is refused by sh (tools/a.py protected alone, tools/b.py writable), and `**/*.py` takes its
// first match only, whatever the call's 300 gen/*.py (atk47a F2, F3). Red with mutants
// workspace-config-glob-path, -exec, -walk and workspace-config-shell-glob-all.
func TestCommitConfigGlobAsShRuns(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".claude", "settings.json"), claudeHook(`*.sh; tools/*.py --check; **/*.py`))
	write(t, filepath.Join(ws, "fmt.sh"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(ws, "fmt.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "tools", "a.py"), "import b\n")
	write(t, filepath.Join(ws, "tools", "b.py"), "X = 1\n")
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("gen/f%03d.py", i)] = "x = 1\n"
	}
	if n := commitFiles(t, ws, files); n != 300 {
		t.Errorf("%d of the call's 300 gen/*.py applied", n)
	}
	loadRefused(t, ws, "tools/a.py", `".claude/settings.json\" starts`)
	for _, p := range []string{"docs/a.md", "tools/b.py", "gen/f150.py", "README.md"} {
		loadApplied(t, ws, p)
	}
}
