package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// TestTypeScriptClient: a client nobody here wrote (the official TypeScript SDK) talks to serve.
func TestTypeScriptClient(t *testing.T) {
	if _, err := os.Stat("node/node_modules/@modelcontextprotocol/sdk"); err != nil {
		testenv.Skip(t, "the TypeScript SDK is not installed: run `npm ci --prefix e2e/node` (make test does)") // fails under CI=true
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: install Node.js (apt-get install nodejs)")
	}
	f := newFixture(t, nil)
	abs, _ := filepath.Abs("node/client.mjs")
	cmd := exec.Command(node, abs, binPath, f.policyPath)
	cmd.Dir = "node"
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+f.root)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ts client: %v\n%s", err, out)
	}
	var got struct {
		Server struct{ Name string }
		Tools  []struct {
			Name            string
			Enum            []string
			HasOutputSchema bool
		}
		OK struct {
			IsError    bool
			Structured struct {
				ExitCode int    `json:"exit_code"`
				Stdout   string `json:"stdout"`
			}
			Text string
		}
		Refused struct {
			IsError bool
			Text    string
		}
		Wrote, Read struct {
			IsError    bool
			Structured executor.Result
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("ts client output %q: %v", out, err)
	}
	names := []string{}
	for _, tl := range got.Tools {
		names = append(names, tl.Name)
		if !tl.HasOutputSchema {
			t.Errorf("tool %s has no output schema", tl.Name)
		}
	}
	if want := []string{"list_files", "read_file", "run_allowed_command", "write_file"}; got.Server.Name != "e2e" || !slices.Equal(names, want) {
		t.Errorf("initialize/tools: server %q, tools %v, want %v", got.Server.Name, names, want)
	}
	// The SDK checked both file results against the output schema before handing them over.
	if f := got.Read.Structured.File; got.Wrote.IsError || got.Read.IsError || f == nil || f.ContentBase64 != "AAEC/w==" || f.Size != 4 {
		t.Errorf("write_file then read_file through the TypeScript SDK: wrote %+v, read %+v", got.Wrote, got.Read)
	}
	if got.OK.IsError || got.OK.Structured.ExitCode != 0 || strings.TrimSpace(got.OK.Structured.Stdout) != "4 notes.txt" || !strings.Contains(got.OK.Text, "4 notes.txt") {
		t.Errorf("allowed call: %+v", got.OK)
	}
	if !got.Refused.IsError || !strings.Contains(got.Refused.Text, "allowlist.workspace") {
		t.Errorf("refused call: %+v", got.Refused)
	}
}
