package sandbox

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// wrap's start log names the server's private HOME as such, not as an "allowlist workspace"
// (trial32 F21: confusing when debugging a wrapped server).
func TestStartLogNamesThePrivateHome(t *testing.T) {
	var logs bytes.Buffer
	p := policy.Default(wrapsec.Name)
	p.Name = "w"
	o := Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	ex, err := newExecutor(p, t.TempDir(), "/bin/cat", o, true, true)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	if !strings.Contains(logs.String(), `msg="the wrapped server's private HOME"`) || strings.Contains(logs.String(), "allowlist workspace") {
		t.Fatalf("wrap's start log:\n%s\nwant the private HOME named as such", logs.String())
	}
}
