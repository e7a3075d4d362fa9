package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestChainAndTamper(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "audit.jsonl")
	secret := "sk-live-0123456789"
	l, err := Open(path, []string{"MY_API_KEY=" + secret, "HOME=/home/x"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Append(Entry{Tool: "t", Arguments: json.RawMessage(`{"args":["` + secret + `"]}`), Decision: "ran"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// A second writer on the same file (another serve process) continues the same chain.
	l2, err := Open(path, []string{"MY_API_KEY=" + secret})
	if err != nil {
		t.Fatal(err)
	}
	l2.Append(Entry{Tool: "t", Decision: "refused", Reason: "mentions " + secret})
	l.Close()
	l2.Close()

	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte(secret)) {
		t.Fatal("a secret from the environment reached the audit log")
	}
	if !bytes.Contains(data, []byte("[redacted:MY_API_KEY]")) {
		t.Fatal("redaction marker missing")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode %v, want 0600", st.Mode().Perm())
	}
	rep, err := Verify(bytes.NewReader(data))
	if err != nil || rep.Lines != 21 || rep.Head == "" {
		t.Fatalf("intact log: %+v %v", rep, err)
	}

	lines := strings.SplitAfter(string(data), "\n")
	tampered := map[string]string{
		"edit":      strings.Join(append(append([]string{}, lines[:5]...), append([]string{strings.Replace(lines[5], `"ran"`, `"refused"`, 1)}, lines[6:]...)...), ""),
		"delete":    strings.Join(append(append([]string{}, lines[:5]...), lines[6:]...), ""),
		"edit last": strings.Join(append(append([]string{}, lines[:20]...), strings.Replace(lines[20], `"refused"`, `"ran"`, 1)), ""),
		"insert":    strings.Join(append(append([]string{}, lines[:5]...), append([]string{lines[2]}, lines[5:]...)...), ""),
	}
	for name, s := range tampered {
		if _, err := Verify(strings.NewReader(s)); err == nil || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s not detected: %v", name, err)
		}
	}
}

// A variable whose name only looks secret is not redacted: a desktop's DESKTOP_SESSION=ubuntu
// and XDG_SESSION_TYPE=wayland made the log write "[redacted:DESKTOP_SESSION]-release-notes.md"
// for the file a call deleted (attack round atk36, F3), and a value naming an existing file says
// where a secret is, not what it is; a real secret beside them still is. Red with mutant
// audit-redacts-public-values.
func TestRedactionSparesPublicValues(t *testing.T) {
	dir := t.TempDir()
	sock, cred := filepath.Join(dir, "agent.sock"), filepath.Join(dir, "key.json")
	for _, f := range []string{sock, cred} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	secret := "sk-live-abcdef0123"
	env := []string{"DESKTOP_SESSION=ubuntu", "XDG_SESSION_TYPE=wayland", "GDMSESSION=ubuntu-xorg", "SSH_AUTH_SOCK=" + sock,
		"GOOGLE_APPLICATION_CREDENTIALS=" + cred, "MY_API_TOKEN=" + secret, "OTHER_SECRET=/not/an/existing/path-x"}
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path, env)
	if err != nil {
		t.Fatal(err)
	}
	args := `{"args":["-f","ubuntu-release-notes.md","wayland.conf","ubuntu-xorg.txt","` + sock + `","` + cred + `","` + secret + `","/not/an/existing/path-x"]}`
	if err := l.Append(Entry{Tool: "run_allowed_command", Arguments: json.RawMessage(args), Decision: "ran"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, _ := os.ReadFile(path)
	for _, want := range []string{"ubuntu-release-notes.md", "wayland.conf", "ubuntu-xorg.txt", sock, cred, "[redacted:MY_API_TOKEN]", "[redacted:OTHER_SECRET]"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the line lacks %q: %s", want, data)
		}
	}
	if bytes.Contains(data, []byte(secret)) || bytes.Contains(data, []byte("/not/an/existing/path-x")) {
		t.Errorf("a secret reached the log: %s", data)
	}
}

// Lines whose writer does not know serve's set-up (the egress proxy's decisions) name the policy
// file and workspace directory SetUp gave, and their session's client as its call lines named
// it; lines that name their own keep them (session 38: egress lines lacked trial38 F2's fields).
func TestSetUpNamesItOnEgressLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.SetUp("/home/u/pol.toml", "/home/u/repo")
	for _, e := range []Entry{
		{Session: "s1", Client: "claude-code 1.0", PolicyPath: "/home/u/pol.toml", WorkDir: "/home/u/repo", Tool: "run", Decision: DecisionStarted},
		{Session: "s1", Tool: "egress", Decision: "denied"},
		{Session: "s2", Tool: "egress", Decision: "denied"},
		{Session: "s3", Client: "other", PolicyPath: "/elsewhere.toml", Tool: "run", Decision: "ran"},
	} {
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	ls := lines(t, path)
	var es []Entry
	for _, s := range ls {
		var e Entry
		if err := json.Unmarshal([]byte(s), &e); err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	if e := es[1]; e.Client != "claude-code 1.0" || e.PolicyPath != "/home/u/pol.toml" || e.WorkDir != "/home/u/repo" {
		t.Errorf("egress line of a known session: client %q, policy %q, workspace %q", e.Client, e.PolicyPath, e.WorkDir)
	}
	if e := es[2]; e.Client != "" || e.PolicyPath != "/home/u/pol.toml" {
		t.Errorf("egress line of an unknown session: client %q, policy %q", e.Client, e.PolicyPath)
	}
	if e := es[3]; e.Client != "other" || e.PolicyPath != "/elsewhere.toml" || e.WorkDir != "/home/u/repo" {
		t.Errorf("a line's own values: %+v", e)
	}
	if _, err := Verify(strings.NewReader(strings.Join(ls, "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
}
