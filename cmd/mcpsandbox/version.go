package main

import (
	"runtime/debug"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/serve"
)

// The version `mcpsandbox version` prints and serve reports to clients (serverInfo.version)
// comes from what the Go toolchain recorded in the binary: the module version (a tag or a
// pseudo-version for `go install …@v1.2.3`, "(devel)" for a checkout), the VCS revision and
// whether the tree had uncommitted changes (recorded by `go build` in a git checkout), and
// the Go version. A release build may still set serve.Version with -ldflags -X; that wins.
func init() {
	if serve.Version != "dev" {
		return // set at link time
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		serve.Version = versionFrom(bi)
	}
}

// versionFrom renders build information as one line, e.g.
// "devel (revision 34f7ef3abcde, modified, committed 2026-11-30T04:00:00Z, go1.26.8)".
func versionFrom(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	s := map[string]string{}
	for _, kv := range bi.Settings {
		s[kv.Key] = kv.Value
	}
	var parts []string
	if rev := s["vcs.revision"]; rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		parts = append(parts, "revision "+rev)
		if s["vcs.modified"] == "true" {
			parts = append(parts, "modified")
		}
		if t := s["vcs.time"]; t != "" {
			parts = append(parts, "committed "+t)
		}
	} else if v == "devel" {
		// go run and go test do not stamp VCS information; neither does a build outside a
		// checkout or with -buildvcs=false (GOFLAGS may hold it).
		parts = append(parts, "no VCS revision recorded: go run, -buildvcs=false, or built outside a git checkout")
	}
	if bi.GoVersion != "" {
		parts = append(parts, bi.GoVersion)
	}
	if len(parts) == 0 {
		return v
	}
	return v + " (" + strings.Join(parts, ", ") + ")"
}
