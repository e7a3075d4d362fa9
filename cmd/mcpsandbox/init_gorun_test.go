package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A binary `go run` built is recognised (the path this Go version really gives it), and init
// refuses to write it into a client entry; a built binary and `go test`'s are not taken for one.
func TestInitRefusesAGoRunBinary(t *testing.T) {
	dir := t.TempDir()
	src := "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() { p, _ := os.Executable(); fmt.Print(p) }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "main.go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO111MODULE=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run: %v", err)
	}
	if exe := string(out); !goRunBinary(exe) {
		t.Errorf("%s (go run's binary) is not recognised", exe)
	}
	self, _ := os.Executable()
	for _, p := range []string{self, "/home/u/bin/mcpsandbox", "/usr/local/bin/mcpsandbox"} {
		if goRunBinary(p) {
			t.Errorf("%s is taken for a go run binary", p)
		}
	}
	if err := refuseGoRun(string(out)); err == nil || !strings.Contains(err.Error(), "go build -o ~/bin/mcpsandbox") {
		t.Errorf("init with a go run binary: %v, want a refusal that says how to build one", err)
	}
}

// Trial30 F14: since Go 1.24 `go run` keeps its binary in the build cache
// ($GOCACHE/XX/HASH-d/NAME), which Go trims later just as it removes its work directory: those
// are refused too, found under the cache or by the cache's layout when the cache is elsewhere.
func TestGoRunBinaryInTheBuildCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "go-build")
	hash := "3222955b0c4f6a0e8d1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7"
	for _, c := range []struct {
		exe, cache string
		want       bool
	}{
		{filepath.Join(cache, "32", hash+"-d", "mcpsandbox"), cache, true},
		{filepath.Join(cache, "ab", "anything", "mcpsandbox"), cache, true}, // under the cache, whatever its layout
		{filepath.Join("/elsewhere/cache/32", hash+"-d", "mcpsandbox"), cache, true},
		{filepath.Join("/elsewhere/cache/32", hash+"-d", "mcpsandbox"), "", true}, // cache unknown: the layout
		{"/tmp/go-build123/b001/exe/mcpsandbox", "", true},
		{"/home/u/bin/mcpsandbox", cache, false},
		{"/home/u/bin/mcpsandbox", "", false},
		{filepath.Join("/opt/33", hash+"-d", "mcpsandbox"), "", false}, // XX is the hash's start
		{"/opt/32/release-d/mcpsandbox", "", false},
		{filepath.Join(filepath.Dir(cache), "go-build-other", "mcpsandbox"), cache, false}, // beside the cache, not in it
	} {
		if got := goRunBinaryIn(c.exe, c.cache); got != c.want {
			t.Errorf("goRunBinaryIn(%s, cache %q) = %v, want %v", c.exe, c.cache, got, c.want)
		}
	}
	t.Setenv("GOCACHE", cache)
	if exe := filepath.Join(cache, "ab", "x", "mcpsandbox"); !goRunBinary(exe) {
		t.Errorf("%s under $GOCACHE is not taken for a go run binary", exe)
	}
}
