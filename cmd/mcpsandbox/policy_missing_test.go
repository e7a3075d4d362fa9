package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
)

// serve and harness without --policy, where init has written its policy, name that file
// (--policy PATH) instead of saying that init's default place holds none; with none there, they
// say to write one.
func TestNoPolicyNamesInitsPolicy(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for _, cmd := range []string{"serve", "harness"} {
		if _, _, err := runCLI(cmd); err == nil || !strings.Contains(err.Error(), "its default place holds none yet") {
			t.Errorf("%s without a policy anywhere: %v", cmd, err)
		}
	}
	env, err := generate.HostEnv("")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(env.ConfigDir, "mcpsandbox", "policy.toml")
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, []byte("version = 1\n"), 0o600)
	for _, cmd := range []string{"serve", "harness"} {
		_, _, err := runCLI(cmd)
		if err == nil || strings.Contains(err.Error(), "holds none") || !strings.Contains(err.Error(), "--policy "+p) {
			t.Errorf("%s with init's policy in place: %v", cmd, err)
		}
	}
}
