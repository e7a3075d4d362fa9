package wrap

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A policy init --wrap writes names no server ([wrap].command unset: the client's entry does).
// Without the hostile test server the harness is not run, saying how to run it (an opt-in, not
// 13 ERRORs and verify FAIL: trial34 F8); with it, the attacks run with it in the command's place.
// The wrap defaults init writes (4GiB, 256 pids) are not MS403's "above what one call needs".
func TestHarnessOnAPolicyWithoutCommand(t *testing.T) {
	p := policy.Default(wrapsec.Name)
	t.Setenv(HostileServerEnv, "")
	t.Setenv("PATH", t.TempDir())
	var optIn *harness.OptInError
	if err := (adapter{}).Ready(p); !errors.As(err, &optIn) || !strings.Contains(optIn.How, HostileServerEnv+"=") {
		t.Errorf("no hostile server: %v, want an opt-in naming %s", err, HostileServerEnv)
	}
	bin := filepath.Join(t.TempDir(), "hostileserver")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	t.Setenv(HostileServerEnv, bin)
	if err := (adapter{}).Ready(p); err != nil {
		t.Errorf("with the hostile server: %v", err)
	}
	for _, f := range verify.Audit(p, "", Scheme.Audit) {
		if f.Rule == "MS403" {
			t.Errorf("wrap's own defaults (memory %s, pids %d) flagged MS403: %+v", p.Limits.Memory, p.Limits.Pids, f)
		}
	}
	p.Limits.Memory *= 2
	if fs := verify.Audit(p, "", Scheme.Audit); !slices.ContainsFunc(fs, func(f verify.Finding) bool { return f.Rule == "MS403" }) {
		t.Errorf("memory %s, twice wrap's default: no MS403", p.Limits.Memory)
	}
}
