package generate

import (
	"strings"
	"testing"
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
		if a := tg.About(); strings.Count(a, "shared with whoever") != 1 {
			t.Errorf("%s: %q", spec, a)
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
