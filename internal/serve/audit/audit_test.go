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
