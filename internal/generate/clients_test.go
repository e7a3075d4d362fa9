package generate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Every scope whose file lies in the project says, as init writes it, that the file is shared
// with whoever clones the repository (VS Code's default scope is one; trial30 F16), once.
func TestProjectFilesSaySoWhenWritten(t *testing.T) {
	env := planEnv(t)
	for _, spec := range []string{"vscode", "cursor:project", "gemini:project", "claude-code:project"} {
		tg, err := ResolveTarget(spec, env)
		if err != nil {
			t.Fatal(err)
		}
		if a := tg.About(); strings.Count(a, "shared with whoever") != 1 || !strings.Contains(a, "absolute paths: do not commit it") || strings.Contains(a, "URL") {
			t.Errorf("%s: %q", spec, a)
		}
		// an HTTP entry holds a URL, not paths: said of the entry written (trial33 F13)
		if a := tg.AboutFor(NewHTTPEntry("http://127.0.0.1:8765/mcp", "TOK")); !strings.Contains(a, "it holds the URL of the serve --http it reaches and the name of the variable holding its token (TOK), not the token") || strings.Contains(a, "absolute paths") {
			t.Errorf("%s, an HTTP entry: %q", spec, a)
		}
	}
	for _, spec := range []string{"vscode:user", "cursor", "claude-code"} {
		tg, err := ResolveTarget(spec, env)
		if err != nil {
			t.Fatal(err)
		}
		if a := tg.About(); strings.Contains(a, "shared with whoever") {
			t.Errorf("%s is not in the project: %q", spec, a)
		}
	}
}

// A project file written in a repository's subdirectory says where the client reads it, and how
// to write it at the top level (the class of trial30 F4: an entry the client never reads).
func TestProjectFileBelowTheRepositoryTop(t *testing.T) {
	env := planEnv(t)
	top := policy.RealPath(env.Project)
	sub := filepath.Join(top, "pkg")
	os.Mkdir(sub, 0o755)
	env.Project, env.Repo = sub, top
	for _, spec := range []string{"vscode", "cursor:project", "gemini:project"} {
		tg, err := ResolveTarget(spec, env)
		if err != nil {
			t.Fatal(err)
		}
		if a := tg.About(); !strings.Contains(a, "not the repository's top level "+top+" (--project "+top+" writes it there)") {
			t.Errorf("%s in %s: %q", spec, sub, a)
		}
	}
	env.Project = top
	if tg, _ := ResolveTarget("vscode", env); strings.Contains(tg.About(), "top level") {
		t.Errorf("at the top level: %q", tg.About())
	}
	env.Project = sub
	if tg, _ := ResolveTarget("cursor", env); strings.Contains(tg.About(), "top level") {
		t.Errorf("a user-scope file: %q", tg.About())
	}
}

// vscode:workspace is VS Code's own word for its project file (trial32 F21).
func TestVSCodeWorkspaceScope(t *testing.T) {
	env := planEnv(t)
	a, err := ResolveTarget("vscode:workspace", env)
	b, _ := ResolveTarget("vscode:project", env)
	if err != nil || a.Path != b.Path || a.Scope != "project" {
		t.Errorf("vscode:workspace: %v %+v, want %s", err, a, b.Path)
	}
}

// init --http's report of a project file says what the entry written there holds: the URL and
// the token's variable, not "this machine's absolute paths" (trial35 F13: the report asked the
// stdio entry init starts to check, not the one the client got). Catches init-http-note-of-stdio.
func TestHTTPProjectNoteInReport(t *testing.T) {
	env := planEnv(t)
	pl, err := NewPlan(PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox", HTTPURL: "http://127.0.0.1:8765/mcp", TokenEnv: "TOK"},
		Clients: []string{"cursor:project"}, Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"), Binary: "/bin/mcpsandbox", Log: &bytes.Buffer{},
		Confirm: func(string) (bool, error) { return true, nil }})
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	pl.Report(&w, &Written{})
	if got := w.String(); !strings.Contains(got, "it holds the URL of the serve --http it reaches and the name of the variable holding its token (TOK), not the token") ||
		strings.Contains(got, "absolute paths") {
		t.Errorf("the project note of an HTTP entry:\n%s", got)
	}
}
