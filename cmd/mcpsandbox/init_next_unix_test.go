//go:build unix

package main

import (
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"os"
	"path/filepath"
	"testing"
)

// init's closing "next:" line is a command to copy: it names the binary as the shell finds it
// ("mcpsandbox" only when that name on PATH is this very binary: the README builds into ~/bin,
// often not on PATH), and quotes a path a shell would split.
func TestNextLineNamesTheBinary(t *testing.T) {
	dir := t.TempDir()
	onPath, other := filepath.Join(dir, "path"), filepath.Join(dir, "my bin")
	for _, d := range []string{onPath, other} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "mcpsandbox"), []byte("#!/bin/sh\n"), 0o755)
	}
	t.Setenv("PATH", onPath)
	if got := commandName(filepath.Join(onPath, "mcpsandbox")); got != "mcpsandbox" {
		t.Errorf("the binary on PATH: %q", got)
	}
	if got, want := commandName(filepath.Join(other, "mcpsandbox")), "'"+filepath.Join(other, "mcpsandbox")+"'"; got != want {
		t.Errorf("a binary not on PATH: %q, want %q", got, want)
	}
	t.Setenv("PATH", "")
	if got := commandName("/home/me/bin/mcpsandbox"); got != "/home/me/bin/mcpsandbox" {
		t.Errorf("no mcpsandbox on PATH: %q", got)
	}
	if got := shellword.Quote("/home/me/.config/mcpsandbox/my policy.toml"); got != "'/home/me/.config/mcpsandbox/my policy.toml'" {
		t.Errorf("a policy path with a space: %q", got)
	}
}
