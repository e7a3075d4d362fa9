//go:build linux

package allowlist

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// The layer probe runs after New returns; when the helper cannot start, Ready says why, and
// calls fail with that reason instead of running unconfined.
func TestReadyReportsAFailedProbe(t *testing.T) {
	p, err := defaultPolicy(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(p, Options{HelperPath: "/bin/false"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer e.Close()
	if err := e.Ready(); err == nil || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("Ready = %v", err)
	}
	_, err = e.Tools()[0].Run(context.Background(), executor.Call{Args: json.RawMessage(`{"command":"wc","args":[]}`)})
	if err == nil || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("call ran without a working helper: %v", err)
	}
	for _, l := range e.Layers() {
		if l.Name == "seccomp" && l.Active {
			t.Error("seccomp reported in force without a probe")
		}
	}
}
