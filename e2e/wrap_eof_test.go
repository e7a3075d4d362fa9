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

// A call the client leaves (it quits) is audited cancelled with what wrap cannot undo
// (atk39b F7): under wrap the server writes to the host directly, and here it does, in the
// time it has to stop; "the server was stopped" read as "nothing happened".
func TestWrapCancelledCallSaysItsEffectIsNotUndone(t *testing.T) {
	r := newWrapRig(t, "")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	srv := filepath.Join(dir, "srv.py")
	mark := filepath.Join(r.writable, "deployed")
	write(t, srv, fmt.Sprintf(`import sys, json, time
for l in sys.stdin:
    m = json.loads(l)
    if m.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}}), flush=True)
    elif m.get("method") == "tools/call":
        open(%q, "w").write("done")
        time.sleep(1.5)
        sys.exit(0)
`, mark), 0o644)
	b, err := os.ReadFile(r.policy)
	if err != nil {
		t.Fatal(err)
	}
	write(t, r.policy, strings.Replace(string(b), "[wrap]\n", fmt.Sprintf("[wrap]\nread = [%q]\n", dir), 1), 0o600)
	req := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{}}}` + "\n"
	cmd := exec.Command(binPath, "wrap", "--policy", r.policy, "--", python, srv)
	cmd.Stdin = strings.NewReader(req)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the server did not write its mark (%v): the test shows nothing\nstderr:\n%s", err, errb.String())
	}
	log, err := os.ReadFile(r.audit)
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, `"decision":"cancelled"`) {
			line = l
		}
	}
	if !strings.Contains(line, "on the host, not undone") || !strings.Contains(line, "exited on its own") {
		t.Fatalf("the cancelled call's line does not say its effect stays on the host nor how the server ended:\n%s\nstderr:\n%s", log, errb.String())
	}
}
