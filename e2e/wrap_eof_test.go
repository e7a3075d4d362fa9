package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A client that sends its requests and closes stdin gets every answer the server wrote before
// it exited: wrap relays what is still in the server's pipe before it exits itself (it
// returned as the server exited, and a large last answer was lost, ~1 run in 10 here).
func TestWrapRelaysAnswersLeftAtTheClientsEOF(t *testing.T) {
	r := newWrapRig(t, "")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	srv := filepath.Join(dir, "srv.py")
	write(t, srv, `import sys, json
for l in sys.stdin.read().splitlines():
    m = json.loads(l)
    if "id" in m:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"pad": "x" * 300000}}) + "\n")
sys.stdout.flush()
`, 0o644)
	b, err := os.ReadFile(r.policy)
	if err != nil {
		t.Fatal(err)
	}
	write(t, r.policy, strings.Replace(string(b), "[wrap]\n", fmt.Sprintf("[wrap]\nread = [%q]\n", dir), 1), 0o600)
	req := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
	for i := 0; i < 15; i++ {
		cmd := exec.Command(binPath, "wrap", "--policy", r.policy, "--", python, srv)
		cmd.Stdin = strings.NewReader(req)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		if n := strings.Count(out.String(), "\n"); n != 2 {
			t.Fatalf("run %d: %d answers of 2 reached the client\nstderr:\n%s", i, n, errb.String())
		}
	}
}
