package e2bfake

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

const testKey = "e2b_fa4e0123456789abcdef0123456789abcdef01"

func newFake(t testing.TB) *Server {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED LOUDLY: the E2B fake runs sandbox programs with Linux process groups; it is tested on Linux")
	}
	s, err := New(Options{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestOfficialSDKConformance drives the fake with the official `e2b` and `@e2b/code-interpreter`
// JS SDKs (sdktest/conformance.mjs): create, commands.run with stdout and exit code, runCode with
// stdout, an exception and pictures (png, svg), files.write/read/list/getInfo, kill, list by
// metadata. Any deviation the SDKs notice fails it.
func TestOfficialSDKConformance(t *testing.T) {
	for _, m := range []string{"e2b", "@e2b/code-interpreter"} {
		if _, err := os.Stat(filepath.Join("sdktest", "node_modules", m, "package.json")); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true but the npm module %s is not installed: run `npm ci --prefix internal/harness/e2bfake/sdktest` (make test does)", m)
			}
			t.Skipf("SKIPPED LOUDLY: npm module %s not installed; run `npm ci --prefix internal/harness/e2bfake/sdktest` or `make test`", m)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but node is not installed (apt-get install nodejs)")
		}
		t.Skip("SKIPPED LOUDLY: node not found; install Node.js to run the official-SDK conformance test")
	}
	s := newFake(t)
	out, stderr, err := runConformance(node, s)
	if err != nil {
		t.Fatalf("the official SDKs rejected the fake: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	var got struct {
		Stdout   string
		ExitCode int
		Result   string
		Error    struct{ Name, Value string }
		BadKey   string
		Files    struct{ Blob, Listed int }
		Pictures []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("conformance output %q: %v", out, err)
	}
	if got.ExitCode != 3 || got.Result != "43" || got.Error.Name != "ZeroDivisionError" || got.BadKey != "AuthenticationError" ||
		got.Files.Blob != 300*1024 || len(got.Pictures) != 2 || got.Pictures[0] != "png" || got.Pictures[1] != "svg" {
		t.Errorf("summary: %+v", got)
	}
	// The fake saw what the SDKs did: two sandboxes created and killed, nothing left running.
	st := s.Stats()
	if st.Created != 2 || st.Killed != 2 || s.Count() != 0 || st.LiveProcs != 0 {
		t.Errorf("after the SDK run: %+v, live %d; want 2 created, 2 killed, 0 live", st, s.Count())
	}
	for _, r := range []string{"create", "list", "get", "kill", "start", "signal", "execute", "timeout", "unauthorized",
		"upload", "download", "listdir", "stat"} {
		if s.Requests(r) == 0 {
			t.Errorf("the SDK run never hit route %q: the conformance script no longer covers it", r)
		}
	}

	// Negative control: the same script against a fake that deviates (the interpreter's NDJSON
	// turns to garbage) must fail, or the script proves nothing.
	bad := newFake(t)
	bad.SetFault(&Fault{Scope: "execute", Garbage: true})
	if out, _, err := runConformance(node, bad); err == nil {
		t.Fatalf("negative control: the conformance script passed against a deviating fake: %s", out)
	}
}

func runConformance(node string, s *Server) (stdout, stderr []byte, err error) {
	cmd := exec.Command(node, "conformance.mjs", "run-"+newID(4))
	cmd.Dir = "sdktest"
	cmd.Env = append(os.Environ(), "E2B_API_URL="+s.URL(), "E2B_SANDBOX_URL="+s.URL(), "E2B_API_KEY="+testKey,
		"E2B_DOMAIN="+s.Domain(), "E2B_DEBUG=false")
	timer := time.AfterFunc(90*time.Second, func() {
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
	})
	defer timer.Stop()
	stdout, err = cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	return stdout, stderr, err
}
