package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// `serve --check` on a wrap policy reports the layers the wrapped server gets, not a call's:
// no pinned, sha256-checked binary (and no warning about the stand-in's "0000…" pin), no
// protect list, no transactional workspace, no allowlist.env; and a row for wrap.write, which
// the server writes directly (trial49 F1). Red with mutant wrap-check-call-rows.
func TestWrapCheckRowsAreTheServers(t *testing.T) {
	buildWrapServer(t) // the Linux check
	r := newWrapRig(t, `env = ["MY_TOKEN"]`)
	out, stderr, code := runBin(t, "serve", "--policy", r.policy, "--check", "--json")
	if code != 0 {
		t.Fatalf("serve --check --json: exit %d\n%s", code, stderr)
	}
	var v struct {
		Layers []executor.Layer `json:"layers"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("--check --json: %v\n%s", err, out)
	}
	rows := map[string]executor.Layer{}
	for _, l := range v.Layers {
		rows[l.Name] = l
	}
	for _, call := range []string{"pinned exec", "protected paths read-only", "transactional workspace"} {
		if l, ok := rows[call]; ok {
			t.Errorf("--check reports a call's row for a wrapped server: %+v", l)
		}
	}
	if env := rows["clean environment"]; strings.Contains(env.Detail, "allowlist.env") || !strings.Contains(env.Detail, "wrap.env's MY_TOKEN") {
		t.Errorf("clean environment row is not the wrapped server's: %+v", env)
	}
	if w, ok := rows["wrap.write"]; !ok || w.Active || !strings.Contains(w.Detail, "no protect list") || !strings.Contains(w.Detail, r.writable) {
		t.Errorf("no wrap.write row saying %s is written directly: %+v", r.writable, w)
	}
	if ll := rows["landlock: filesystem"]; !strings.Contains(ll.Detail, r.writable) || strings.Contains(ll.Detail, "pinned binary") {
		t.Errorf("Landlock row is not the wrapped server's: %+v", ll)
	}
	if strings.Contains(stderr, "every call of") || strings.Contains(stderr, "sha256") {
		t.Errorf("--check warns about the stand-in binary's pin:\n%s", stderr)
	}
}

// A wrap policy's egress refusals name wrap.network, its own key, not allowlist.network; and a
// section of another scheme in it ([allowlist] network, which the refusal's advice read
// literally led to) is warned of at wrap's start (trial49 F2). Red with mutants
// wrap-egress-key-allowlist and wrap-other-sections-unsaid.
func TestWrapEgressNamesWrapNetwork(t *testing.T) {
	bin := buildWrapServer(t)
	r := newWrapRig(t, "network = [\"allowed.example\"]\n[allowlist]\nnetwork = [\"denied.example\"]")
	cs, _ := r.connect(t, []string{"--explain-denials"}, bin)
	res, err := callTool(t, cs, "fetch", map[string]any{"url": "http://denied.example/secret"})
	if err != nil || !res.IsError {
		t.Fatalf("fetch a host the policy does not list: %q %v (want a refusal)", text(res), err)
	}
	cs.Close()
	if !r.logSays("egress denied") {
		t.Fatalf("no egress denial logged; stderr:\n%s", r.stderr)
	}
	log := r.stderr.String()
	if !strings.Contains(log, "rule=wrap.network") || !strings.Contains(log, "not in wrap.network") || strings.Contains(log, "allowlist.network") {
		t.Errorf("the refusal does not name wrap.network; stderr:\n%s", log)
	}
	if !strings.Contains(log, `the file has the section [allowlist] (network), which scheme = \"wrap\" ignores`) {
		t.Errorf("wrap's start says nothing of the [allowlist] section it ignores; stderr:\n%s", log)
	}
}

// A wrap.write directory the wrapped server's uid cannot write (as root: root's, mode 0755) is
// said at wrap's start and by `serve --check`, with the fix, as serve says an unwritable
// allowlist workspace (trial49 F4; verify's MS505). Red with mutant wrap-write-unwritable-unsaid.
func TestWrapSaysAnUnwritableWriteDir(t *testing.T) {
	bin := buildWrapServer(t)
	r := newWrapRig(t, "")
	mode := os.FileMode(0o755) // root's: nobody cannot write it
	if os.Geteuid() != 0 {
		mode = 0o555
	}
	if err := os.Chmod(r.writable, mode); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(r.writable, 0o777)
	fix := "chown -R 65534:65534 " + r.writable
	if os.Geteuid() != 0 {
		fix = "use a directory of yours"
	}
	cs, _ := r.connect(t, nil, bin)
	cs.Close()
	if !r.logSays("is in wrap.write but not") || !r.logSays(fix) {
		t.Errorf("wrap's start says nothing of %s, which its server cannot write; stderr:\n%s", r.writable, r.stderr)
	}
	out, stderr, code := runBin(t, "serve", "--policy", r.policy, "--check")
	if code != 0 || !strings.Contains(out, "warning: ") || !strings.Contains(out, r.writable) || !strings.Contains(out, "fix: "+fix) {
		t.Errorf("serve --check (exit %d) does not warn of %s:\n%s\n%s", code, r.writable, out, stderr)
	}
}
