package e2bfake_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
	e2b "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/sandbox"
)

const key = "e2b_0123456789abcdef0123456789abcdef01234567"

func setup(t *testing.T) (*e2bfake.Server, *e2b.Client) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED LOUDLY: the E2B fake runs on Linux only")
	}
	s, err := e2bfake.New(e2bfake.Options{APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, e2b.NewClient(e2b.Config{APIKey: key, APIURL: s.URL(), SandboxURL: s.URL()})
}

// tagged lists the host processes carrying a sandbox's tag: a detector outside the fake.
func tagged(id string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(append(env, 0), []byte("E2BFAKE_SANDBOX="+id+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func waitNone(t *testing.T, id string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if len(tagged(id)) == 0 {
			return
		}
	}
	t.Fatalf("processes of sandbox %s survive: %v", id, tagged(id))
}

func run(t *testing.T, c *e2b.Client, sb *e2b.Sandbox, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	r, err := c.RunCommand(ctx, sb, cmd, &out, &errb)
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("%s: %+v %v %s", cmd, r, err, errb.String())
	}
	return out.String()
}

func TestKillReachesEveryProcess(t *testing.T) {
	s, c := setup(t)
	sb, err := c.Create(context.Background(), e2b.CreateOptions{Template: "base", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c, sb, "sleep 300 & setsid sleep 301 & (setsid sh -c 'sleep 302 &') ; echo started")
	if n := len(tagged(sb.ID)); n < 3 {
		t.Fatalf("negative control: want the 3 background sleeps visible, see %d", n)
	}
	if err := c.Kill(context.Background(), sb.ID); err != nil {
		t.Fatal(err)
	}
	waitNone(t, sb.ID)
	if s.Count() != 0 {
		t.Fatal("killed sandbox still listed")
	}
}

func TestExpiryKills(t *testing.T) {
	s, c := setup(t)
	sb, err := c.Create(context.Background(), e2b.CreateOptions{Template: "base", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c, sb, "setsid sleep 300 & echo ok")
	waitNone(t, sb.ID)
	if st := s.Stats(); st.Expired != 1 || s.Count() != 0 {
		t.Fatalf("after the timeout: %+v", st)
	}
	// Extending the timeout keeps it alive past the first deadline.
	sb2, _ := c.Create(context.Background(), e2b.CreateOptions{Template: "base", Timeout: time.Second})
	if err := c.SetTimeout(context.Background(), sb2.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if s.Count() != 1 {
		t.Fatal("set timeout did not extend the sandbox's life")
	}
}

func TestProgramsRunUnprivilegedInTheirDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: the uid switch happens only when the fake runs as root")
	}
	_, c := setup(t)
	sb, _ := c.Create(context.Background(), e2b.CreateOptions{Template: "base", Timeout: time.Minute})
	out := run(t, c, sb, "id -u; pwd; test -w /root && echo root-writable || true")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != "65534" || !strings.Contains(lines[1], "e2bfake-") {
		t.Fatalf("want uid 65534 in the sandbox's temporary directory, got %q", out)
	}
}

// TestRoutingByHost: without E2B_SANDBOX_URL the SDKs address {port}-{id}.{domain}; the fake
// routes on that host name alone.
func TestRoutingByHost(t *testing.T) {
	s, c := setup(t)
	sb, _ := c.Create(context.Background(), e2b.CreateOptions{Template: "base", Timeout: time.Minute})
	msg := []byte(`{"process":{"cmd":"/bin/echo","args":["routed"]}}`)
	frame := append([]byte{0, 0, 0, 0, 0}, msg...)
	binary.BigEndian.PutUint32(frame[1:5], uint32(len(msg)))
	req, _ := http.NewRequest("POST", s.URL()+"/process.Process/Start", bytes.NewReader(frame))
	req.Host = "49983-" + sb.ID + "." + s.Domain()
	req.Header.Set("Content-Type", "application/connect+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	// Without the sandbox's access token envd refuses; with it the stream carries the output.
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no access token: status %d %s", resp.StatusCode, body.String())
	}
	g, _ := http.NewRequest("GET", s.URL()+"/sandboxes/"+sb.ID, nil)
	g.Header.Set("X-API-Key", key)
	gr, err := http.DefaultClient.Do(g)
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ EnvdAccessToken string }
	json.NewDecoder(gr.Body).Decode(&info)
	gr.Body.Close()
	req, _ = http.NewRequest("POST", s.URL()+"/process.Process/Start", bytes.NewReader(frame))
	req.Host = "49983-" + sb.ID + "." + s.Domain()
	req.Header.Set("Content-Type", "application/connect+json")
	req.Header.Set("X-Access-Token", info.EnvdAccessToken)
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	body.Reset()
	body.ReadFrom(resp2.Body)
	if resp2.StatusCode != 200 || !strings.Contains(body.String(), `"stdout":"cm91dGVkCg=="`) {
		t.Fatalf("routed by host: %d %q", resp2.StatusCode, body.String())
	}
}

// TestInterpreterEventsAreJSON: results and errors carry any text (quotes, backslashes, control
// characters, non-ASCII, lone surrogates) as valid JSON, without the json module.
func TestInterpreterEventsAreJSON(t *testing.T) {
	_, c := setup(t)
	sb, _ := c.Create(context.Background(), e2b.CreateOptions{Template: "base", Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	ex, err := c.RunCode(ctx, sb, "x = 'q\"b\\\\ t\\tn\\n é\\x01'\nx", "", &out, &errb, 0)
	if err != nil || len(ex.Results) != 1 || ex.Results[0] != `'q"b\\ t\tn\n é\x01'` {
		t.Fatalf("result %+v %v", ex, err)
	}
	ex, err = c.RunCode(ctx, sb, "raise ValueError('a \"q\" \\\\ \\n é \\ud800')", "", &out, &errb, 0)
	if err != nil || ex.Error == nil || ex.Error.Name != "ValueError" || ex.Error.Value != "a \"q\" \\ \n é \uFFFD" {
		t.Fatalf("error %+v %v", ex.Error, err)
	}
}

// TestPython3OnPath: like E2B's templates, a sandbox has python3 on PATH even where the host
// has only a versioned python3.X.
func TestPython3OnPath(t *testing.T) {
	_, c := setup(t)
	sb, _ := c.Create(context.Background(), e2b.CreateOptions{Template: "base", Timeout: time.Minute})
	if out := run(t, c, sb, "python3 -c 'print(6*7)'"); out != "42\n" {
		t.Fatalf("python3 in a sandbox: %q", out)
	}
}
