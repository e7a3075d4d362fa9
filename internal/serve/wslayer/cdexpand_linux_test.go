package wslayer

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// cdWorkspace is a workspace with the config file at file (text) and server/main.py importing
// server/helper.py beside scripts/ and other/main.py, which no config runs.
func cdWorkspace(t *testing.T, file, text string) string {
	t.Helper()
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, filepath.Join(ws, filepath.FromSlash(file)), text)
	write(t, filepath.Join(ws, "server", "main.py"), "import helper\n")
	write(t, filepath.Join(ws, "server", "helper.py"), "X = 1\n")
	write(t, filepath.Join(ws, "scripts", "notes.txt"), "n\n")
	write(t, filepath.Join(ws, "other", "main.py"), "print(1)\n")
	return ws
}

// A pattern in a config line's cd target was not expanded (atk48a F3: `cd serv* && python3
// main.py` left server/main.py writable; dash and bash cd into server and run it). It is
// expanded as a program's word is: every directory it matches (bash refuses several, dash takes
// the first), the literal when none. Red with mutant workspace-config-cd-glob.
func TestCommitConfigLineCdGlob(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []struct{ file, text string }{
		{".claude/settings.json", claudeHook(`cd serv* && python3 main.py`)},
		{".claude/settings.json", claudeHook(`cd s?rver && python3 main.py`)},
		{".claude/settings.json", claudeHook(`cd "$CLAUDE_PROJECT_DIR"/serv*/ && python3 main.py`)},
		{".claude/settings.json", claudeHook(`cd s[e]rv[!x]r && python3 main.py`)},
		{".claude/settings.json", claudeHook(`cd s* && python3 main.py`)}, // scripts and server: dash takes scripts
		{".claude/settings.json", claudeHook(`sh -c 'cd ./s*er/ && exec python3 main.py'`)},
		{".husky/pre-commit", "cd serv*\npython3 main.py\n"},
		{"lefthook.yml", "pre-commit:\n  commands:\n    srv:\n      run: cd se*r && python3 main.py\n"},
	} {
		ws := cdWorkspace(t, k.file, k.text)
		loadRefused(t, ws, "server/main.py", "starts")
		loadRefused(t, ws, "server/helper.py", "starts")
		loadApplied(t, ws, "other/main.py")
		loadApplied(t, ws, "docs/a.md")
	}
	// no match: the literal, a directory that is not there (nothing protected, nothing refused)
	ws := cdWorkspace(t, ".claude/settings.json", claudeHook(`cd nomatch* && python3 main.py`))
	loadApplied(t, ws, "server/main.py")
	// more directories than the reader follows: fails closed
	ws = cdWorkspace(t, ".claude/settings.json", claudeHook(`cd d* && python3 main.py`))
	for i := range maxShellDirs + 2 {
		if err := os.MkdirAll(filepath.Join(ws, "d"+string(rune('a'+i))), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	loadRefused(t, ws, "docs/a.md", "cd target")
}

// Bash's braces in a config line's cd target were not expanded (atk48a F6: `bash -c 'cd
// {server,} && python3 main.py'` runs server/main.py). They are, as in a program's position
// (bash drops the null word). Red with mutant workspace-config-cd-braces.
func TestCommitConfigLineCdBraces(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, cmd := range []string{`bash -c 'cd {server,} && python3 main.py'`, `bash -c 'cd {,server} && python3 main.py'`,
		`bash -c 'cd ser{v..v}er && python3 main.py'`} {
		ws := cdWorkspace(t, ".claude/settings.json", claudeHook(cmd))
		loadRefused(t, ws, "server/main.py", "starts")
		loadApplied(t, ws, "other/main.py")
	}
}

// Go's filepath.Match has no POSIX classes: `python3 server/[[:lower:]]ain.py` matched nothing,
// its literal word named no file, and server/main.py was writable (atk48a F5; sh and bash run
// it). A pattern is read in sh's spelling: the classes in the C locale, equivalence classes,
// negation, a bracket the reader cannot read matching any one character. Red with mutant
// workspace-config-glob-classes.
func TestCommitConfigGlobPosixClasses(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, cmd := range []string{
		`python3 server/[[:lower:]]ain.py`, `python3 server/[![:upper:]]ain.py`, `python3 server/[^[:digit:][:space:]]ain.py`,
		`python3 server/[[:alpha:][:digit:]]ai[[:alnum:]].py`, `python3 server/[[=m=]]ain.py`, `python3 server/[[:nonesuch:]]ain.py`,
		`python3 server/m[[:punct:][:lower:]]in.py`, `cd serv[[:lower:]]r && python3 main.py`,
	} {
		ws := cdWorkspace(t, ".claude/settings.json", claudeHook(cmd))
		loadRefused(t, ws, "server/main.py", "starts")
		loadApplied(t, ws, "other/main.py")
	}
}

// goPattern spells sh's patterns as filepath.Match reads them: each name matched as bash
// (LC_ALL=C) matches it.
func TestGoPatternAsSh(t *testing.T) {
	for _, k := range []struct {
		pat  string
		yes  []string
		none []string
	}{
		{"[[:lower:]]ain.py", []string{"main.py"}, []string{"Main.py", "1ain.py"}},
		{"[![:upper:]]x", []string{"ax", "1x", "-x"}, []string{"Ax"}},
		{"[^[:alnum:]_]x", []string{"-x", ".x"}, []string{"ax", "_x", "9x"}},
		{"[]a]x", []string{"]x", "ax"}, []string{"bx"}},
		{"[!]]x", []string{"ax"}, []string{"]x"}},
		{"[a-]x", []string{"ax", "-x"}, []string{"bx"}},
		{"[[:space:]]x", []string{" x", "\tx"}, []string{"ax"}},
		{"[[:punct:]]x", []string{"!x", "~x", "[x", "`x"}, []string{"ax", "0x"}},
		{"a[b", []string{"a[b"}, []string{"ab"}},
		{"[[.-.]]x", []string{"-x"}, []string{"ax"}},
		{"[[:nonesuch:]]x", []string{"ax", "Zx"}, nil}, // unread: any one character
		{"[[]x", []string{"[x"}, []string{"ax"}},
		{"[é]x", []string{"éx"}, []string{"ex"}},
	} {
		p := goPattern(k.pat)
		for _, n := range k.yes {
			if ok, err := filepath.Match(p, n); !ok || err != nil {
				t.Errorf("%q (as %q) does not match %q (%v); bash matches it", k.pat, p, n, err)
			}
		}
		for _, n := range k.none {
			if ok, _ := filepath.Match(p, n); ok {
				t.Errorf("%q (as %q) matches %q; bash does not", k.pat, p, n)
			}
		}
	}
}

// `$(git rev-parse --show-toplevel)` in a config's command line stayed unresolved (atk48a F7:
// `cd "$(git rev-parse --show-toplevel)/server" && python3 main.py` in a hook, and husky's
// two-liner, left server/main.py writable). It is the repository the config is in: the
// workspace when it is the repository, a nested repository's root when the config is in one;
// unresolved when there is none. Red with mutant workspace-config-git-top.
func TestCommitConfigLineGitTop(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	gitInit := func(dir string) {
		if err := exec.Command("git", "init", "-q", dir).Run(); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []struct{ file, text string }{
		{".claude/settings.json", claudeHook(`cd "$(git rev-parse --show-toplevel)/server" && python3 main.py`)},
		{".claude/settings.json", claudeHook(`python3 "$(git rev-parse --show-toplevel)"/server/main.py`)},
		{".husky/pre-commit", "cd \"$(git rev-parse --show-toplevel)\"/server\npython3 main.py\n"},
		{"lefthook.yml", "pre-commit:\n  commands:\n    srv:\n      run: cd `git rev-parse --show-toplevel`/serv* && python3 main.py\n"},
	} {
		ws := cdWorkspace(t, k.file, k.text)
		gitInit(ws)
		loadRefused(t, ws, "server/main.py", "starts")
		loadRefused(t, ws, "server/helper.py", "starts")
		loadApplied(t, ws, "other/main.py")
	}
	// a nested repository's config: its own root
	ws := cdWorkspace(t, "sub/.husky/pre-commit", "cd \"$(git rev-parse --show-toplevel)\"/server\npython3 main.py\n")
	gitInit(ws)
	gitInit(filepath.Join(ws, "sub"))
	write(t, filepath.Join(ws, "sub", "server", "main.py"), "X = 1\n")
	loadRefused(t, ws, "sub/server/main.py", "starts")
	loadApplied(t, ws, "server/helper.py")
	// a workspace inside a repository: that repository's root, above it (red with mutant
	// workspace-git-top-above); no repository: unresolved, the cd not followed (the Known gap)
	top, _ := filepath.EvalSymlinks(t.TempDir())
	ws = filepath.Join(top, "proj")
	write(t, filepath.Join(ws, ".claude", "settings.json"), claudeHook(`cd "$(git rev-parse --show-toplevel)/proj/server" && python3 main.py`))
	write(t, filepath.Join(ws, "server", "main.py"), "X = 1\n")
	gitInit(top)
	loadRefused(t, ws, "server/main.py", "starts")
	loadApplied(t, ws, "docs/a.md")
}

// An .envrc in a nested repository sources from its own repository's root, where direnv runs
// it: `$(git rev-parse --show-toplevel)` was the workspace's whenever that held .git, so the
// nested tools/x.sh direnv sources was writable. Red with mutant workspace-shell-git-top-nested.
func TestCommitEnvrcGitTopNested(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, filepath.Join(ws, "sub", ".envrc"), "source_env \"$(git rev-parse --show-toplevel)/tools/x.sh\"\n")
	write(t, filepath.Join(ws, "sub", "tools", "x.sh"), "export A=1\n")
	write(t, filepath.Join(ws, "tools", "x.sh"), "export A=1\n")
	for _, d := range []string{ws, filepath.Join(ws, "sub")} {
		if err := exec.Command("git", "init", "-q", d).Run(); err != nil {
			t.Fatal(err)
		}
	}
	loadRefused(t, ws, "sub/tools/x.sh", ".envrc")
	loadApplied(t, ws, "docs/a.md")
}

// A script a config starts had no pattern or brace list expanded, in a cd's target or a
// program's position: `cd serv* && python3 main.py`, `python3 serv*/main.py` in the run.sh an
// MCP server's config starts left server/main.py writable (atk48a F3's and F5's, F6's
// neighbour). Its words are expanded by the config line's code. Red with mutant
// workspace-shell-cd-expand.
func TestCommitStartedScriptGlobs(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, script := range []string{"cd serv* && python3 main.py\n", "python3 serv*/main.py\n", "cd {server,} && python3 main.py\n",
		"python3 server/[[:lower:]]ain.py\n", "cd ./s?rver\nexec python3 main.py\n"} {
		ws := cdWorkspace(t, ".mcp.json", `{"mcpServers":{"s":{"command":"bash","args":["scripts/run.sh"]}}}`)
		write(t, filepath.Join(ws, "scripts", "run.sh"), "#!/bin/bash\n"+script)
		loadRefused(t, ws, "server/main.py", startsIt)
		loadApplied(t, ws, "other/main.py")
		loadApplied(t, ws, "docs/a.md")
	}
}
