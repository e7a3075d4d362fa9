//go:build unix

package generate

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// TestFIFOConfigRefused: a client config, or the policy init replaces, that is a FIFO is refused
// at once with its path and the fix (init blocked forever on one, since nothing writes it).
func TestFIFOConfigRefused(t *testing.T) {
	home := t.TempDir()
	env := Env{Home: home, ConfigDir: filepath.Join(home, ".config"), Project: t.TempDir()}
	tgt, err := ResolveTarget("cursor", env)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(tgt.Path), 0o755)
	pol := filepath.Join(home, "policy.toml")
	for _, p := range []string{tgt.Path, pol} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip(err)
		}
	}
	for what, read := range map[string]func() error{
		"client config": func() error {
			_, err := ClientChange(tgt, "sandbox", NewServerEntry("/b", "/p"), false)
			return err
		},
		"policy": func() error {
			p := policy.Default(alsec.Name)
			cs, err := PinDefaults()
			if err != nil {
				return err
			}
			alsec.Of(p).Workspace, alsec.Of(p).Commands = home, cs
			_, err = PolicyChange(p, pol)
			return err
		},
		"wrap list": func() error {
			_, err := WrapTargets(env, []string{"cursor"})
			if err == nil {
				_, _, err = readConfig(tgt.Path)
			}
			return err
		},
	} {
		done := make(chan error, 1)
		go func() { done <- read() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), "move it aside") {
				t.Errorf("%s: a FIFO: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			for _, p := range []string{tgt.Path, pol} { // unblock the reader so the test ends
				if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			}
			t.Fatalf("%s: waited on a FIFO", what)
		}
	}
}
