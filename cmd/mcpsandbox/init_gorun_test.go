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
