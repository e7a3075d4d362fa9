package main

import (
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/serve"
)

// version says what the toolchain recorded, never a bare "dev".
func TestVersionFrom(t *testing.T) {
	set := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	cases := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go build in a dirty checkout", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: set("vcs", "git", "vcs.revision", "34f7ef3abcdef0123456789abcdef0123456789a", "vcs.time", "2026-11-30T04:00:00Z", "vcs.modified", "true")},
			"devel (revision 34f7ef3abcde, modified, committed 2026-11-30T04:00:00Z, go1.26.8)"},
		{"pseudo-version, clean", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261130040000-34f7ef3abcde"},
			Settings: set("vcs.revision", "34f7ef3abcdef0123456789abcdef0123456789a", "vcs.modified", "false")},
			"v0.0.0-20261130040000-34f7ef3abcde (revision 34f7ef3abcde, go1.26.8)"},
		{"go install @tag", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3 (go1.26.8)"},
		{"go run", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"devel (no VCS revision recorded: go run, -buildvcs=false, or built outside a git checkout, go1.26.8)"},
	}
	for _, c := range cases {
		if got := versionFrom(&c.bi); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	// The test binary itself: the command prints the toolchain's record, not "dev".
	out, _, err := runCLI("version")
	if err != nil || !strings.HasPrefix(out, "mcpsandbox ") || strings.TrimSpace(out) == "mcpsandbox dev" || serve.Version == "dev" {
		t.Fatalf("version printed %q (%v)", out, err)
	}
	if bi, ok := debug.ReadBuildInfo(); ok && !strings.Contains(out, bi.GoVersion) {
		t.Errorf("version %q does not name the Go version %s", out, bi.GoVersion)
	}
}

// The build command the demo and init advise is README's, word for word (trial30 F3: the demo
// left out CGO_ENABLED=0, which README explains).
func TestBuildAdviceIsREADMEs(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), BuildCommand) {
		t.Errorf("README.md does not give %q", BuildCommand)
	}
}
