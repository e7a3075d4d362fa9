package generate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Gemini CLI's trust note is said only when its trusted-folders file does not already trust
// the project: a TRUST_FOLDER there or above, a TRUST_PARENT of a sibling; DO_NOT_TRUST and a
// missing or unreadable file keep it (trial19: the note was noise for a trusted project).
func TestGeminiTrustNoteOnlyWhenNotTrusted(t *testing.T) {
	home := t.TempDir()
	project := filepath.Join(home, "code", "proj")
	os.MkdirAll(project, 0o755)
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	env := Env{Home: home, Project: project, ConfigDir: filepath.Join(home, ".config"), GOOS: "linux"}
	target, err := ResolveTarget("gemini", env)
	if err != nil {
		t.Fatal(err)
	}
	if target.Client.AfterDone == "" {
		t.Fatal("the gemini client names no trusted-folders file (after_done)")
	}
	pl := &Plan{project: project, home: home, targets: []Target{target}}
	file := filepath.Join(home, ".gemini", "trustedFolders.json")
	for _, c := range []struct {
		name, json string
		note       bool
	}{
		{"no file", "", true},
		{"not JSON", "{", true},
		{"the project trusted", `{"` + project + `": "TRUST_FOLDER"}`, false},
		{"a folder above trusted", `{"` + filepath.Join(home, "code") + `": "TRUST_FOLDER"}`, false},
		{"trusted through a sibling's TRUST_PARENT", `{"` + filepath.Join(home, "code", "other") + `": "TRUST_PARENT"}`, false},
		{"a folder below trusted only", `{"` + filepath.Join(project, "sub") + `": "TRUST_FOLDER"}`, true},
		{"a name that only starts the same", `{"` + project + `x": "TRUST_FOLDER"}`, true},
		{"distrusted", `{"` + filepath.Join(home, "code") + `": "TRUST_FOLDER", "` + project + `": "DO_NOT_TRUST"}`, true},
	} {
		os.Remove(file)
		if c.json != "" {
			os.WriteFile(file, []byte(c.json), 0o644)
		}
		var out bytes.Buffer
		pl.reportNotes(&out)
		if got := strings.Contains(out.String(), "only in folders you trust"); got != c.note {
			t.Errorf("%s: note said %v, want %v:\n%s", c.name, got, c.note, out.String())
		}
	}
}

// Gemini CLI leaves an HTTP entry Disabled in a folder it does not trust, as a stdio one (its user
// settings' servers too): init gave the trust note for stdio entries only (trial33 F1). Red with
// mutant init-http-after-silent.
func TestGeminiTrustNoteForHTTPEntries(t *testing.T) {
	home := t.TempDir()
	env := Env{Home: home, Project: t.TempDir(), ConfigDir: filepath.Join(home, ".config"), GOOS: "linux"}
	target, err := ResolveTarget("gemini", env)
	if err != nil {
		t.Fatal(err)
	}
	pl := &Plan{project: env.Project, home: home, targets: []Target{target}, ClientEntry: NewHTTPEntry("http://127.0.0.1:8833/mcp", "MCPSANDBOX_TOKEN")}
	var out bytes.Buffer
	pl.reportNotes(&out)
	if !strings.Contains(out.String(), "Gemini CLI: it starts MCP servers (stdio and HTTP, its user-level ones too) only in folders you trust: trust "+env.Project) {
		t.Errorf("no trust note for an HTTP entry:\n%s", out.String())
	}
}
