package generate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wrapIn wraps the target's servers: one outcome each, all wrapped.
func (f *wrapFixture) wrapIn(t *testing.T, tg Target) []WrapOutcome {
	t.Helper()
	outs, _, err := WrapEntries(context.Background(), f.opts(), f.list(t, tg))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Err != nil {
			t.Fatalf("%s in %s: %v", o.Server.Name, tg.Path, o.Err)
		}
	}
	return outs
}

// unwrapIn restores the target's entries (its records alone).
func (f *wrapFixture) unwrapIn(t *testing.T, tg Target) {
	t.Helper()
	recs, _ := LoadWrapRecords(f.dir)
	var mine []WrapRecord
	for _, r := range recs {
		if tg.Holds(r) {
			mine = append(mine, r)
		}
	}
	if _, _, err := Unwrap(mine, false); err != nil {
		t.Fatal(err)
	}
}

// widen gives the policy at p a write path, as a user widening it for their project would.
func widen(t *testing.T, p, dir string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(dir)
	w := strings.Replace(string(b), "write   = []", "write   = ["+string(q)+"]", 1)
	if w == string(b) {
		t.Fatalf("%s has no write = [] to widen:\n%s", p, b)
	}
	os.WriteFile(p, []byte(w), 0o644)
}

// A wrap policy is keyed by the project for a per-project scope, and one an earlier --unwrap
// left is used again only for the entry its header names (config, place in it, command): project
// B's server db never gets the policy the user widened for project A's db, whether it was named
// before the project was part of the name or after; A's own is used again, the older name too
// (atk35 F4).
func TestWrapPolicyNotReusedAcrossProjects(t *testing.T) {
	for _, spec := range []string{"claude-code:project", "claude-code", "cursor:project", "vscode", "gemini:project"} {
		t.Run(spec, func(t *testing.T) {
			f := newWrapFixture(t)
			envA := f.env
			envB := f.env
			envB.Project = filepath.Join(filepath.Dir(f.env.Project), "projB")
			os.MkdirAll(envB.Project, 0o755)
			q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
			entry := func(arg string) string {
				return `{"command": ` + q(f.server) + `, "args": [` + q(arg) + `], "env": {"GENERATE_TEST_SERVER": "1"}}`
			}
			var tA, tB Target
			if spec == "claude-code" { // the local scope: one ~/.claude.json, a key per project
				pa, _ := filepath.EvalSymlinks(envA.Project)
				pb, _ := filepath.EvalSymlinks(envB.Project)
				text := `{"projects": {` + q(pa) + `: {"mcpServers": {"db": ` + entry("A") + `}}, ` + q(pb) + `: {"mcpServers": {"db": ` + entry("B") + `}}}}`
				tA = f.target(t, spec, text)
				f.env = envB
				tB, _ = ResolveTarget(spec, envB)
			} else {
				servers := map[string]string{"vscode": "servers", "gemini:project": "mcpServers"}
				key := servers[spec]
				if key == "" {
					key = "mcpServers"
				}
				tA = f.target(t, spec, `{`+q(key)+`: {"db": `+entry("A")+`}}`)
				f.env = envB
				tB = f.target(t, spec, `{`+q(key)+`: {"db": `+entry("B")+`}}`)
			}
			f.env = envA
			if !tA.PerProject() {
				t.Fatalf("%s is not taken as per project", spec)
			}
			// A: wrapped, widened, unwrapped; its policy stays.
			pA := f.wrapIn(t, tA)[0].Record.Policy
			if !strings.Contains(filepath.Base(pA), "@"+filepath.Base(envA.Project)+"-") {
				t.Errorf("A's policy %s is not named by its project", pA)
			}
			secret := filepath.Join(filepath.Dir(f.env.Project), "secret-a")
			widen(t, pA, secret)
			f.unwrapIn(t, tA)
			// B: a policy of its own, fresh.
			oB := f.wrapIn(t, tB)[0]
			if oB.Reused || oB.Record.Policy == pA {
				t.Fatalf("B's db got A's policy %s (reused %v)", pA, oB.Reused)
			}
			if b, _ := os.ReadFile(oB.Record.Policy); strings.Contains(string(b), secret) {
				t.Fatalf("B's policy grants A's widening:\n%s", b)
			}
			f.unwrapIn(t, tB)
			// A again: its own widened policy.
			if o := f.wrapIn(t, tA)[0]; !o.Reused || o.Record.Policy != pA {
				t.Errorf("A's second wrap: policy %s reused %v, want %s again", o.Record.Policy, o.Reused, pA)
			}
			f.unwrapIn(t, tA)
			// A policy named as before (client, scope, name), written for A and widened: B does
			// not take it, and says so; A does.
			old := filepath.Join(f.dir, strings.SplitN(filepath.Base(pA), "@", 2)[0]+".toml")
			if err := os.Rename(pA, old); err != nil {
				t.Fatal(err)
			}
			os.Remove(oB.Record.Policy)
			oB = f.wrapIn(t, tB)[0]
			if oB.Reused || oB.Record.Policy == old {
				t.Fatalf("B's db got A's policy %s named as before (reused %v)", old, oB.Reused)
			}
			if len(oB.Passed) != 1 || oB.Passed[0].Path != old || !strings.Contains(oB.Passed[0].Why, tA.Where()) {
				t.Errorf("B's wrap does not say it passed over %s, written for %s: %v", old, tA.Path, oB.Passed)
			}
			f.unwrapIn(t, tB)
			if o := f.wrapIn(t, tA)[0]; !o.Reused || o.Record.Policy != old {
				t.Errorf("A's wrap with its policy named as before: %s reused %v, want %s again", o.Record.Policy, o.Reused, old)
			}
		})
	}
}

// A policy left for a server whose command has changed since is not used again for it: it was
// written for another command (the entry is another server now).
func TestWrapPolicyNotReusedForAnotherCommand(t *testing.T) {
	f := newWrapFixture(t)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	text := func(arg string) string {
		return `{"mcpServers": {"db": {"command": ` + q(f.server) + `, "args": [` + q(arg) + `], "env": {"GENERATE_TEST_SERVER": "1"}}}}`
	}
	tg := f.target(t, "claude-desktop", text("one"))
	p := f.wrapIn(t, tg)[0].Record.Policy
	f.unwrapIn(t, tg)
	tg = f.target(t, "claude-desktop", text("two"))
	o := f.wrapIn(t, tg)[0]
	if o.Reused || o.Record.Policy == p || len(o.Passed) != 1 || !strings.Contains(o.Passed[0].Why, "command") {
		t.Errorf("wrap of another command: policy %s reused %v passed %v; want a new one, %s passed over", o.Record.Policy, o.Reused, o.Passed, p)
	}
}
