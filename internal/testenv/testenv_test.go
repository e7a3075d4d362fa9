package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A PATH directory holding a client CLI beside tools the tests need (an nvm bin with claude and
// node; /usr/bin with VS Code's code) keeps the tools and loses the clients; a directory without
// a client is kept as it is.
func TestCleanPathDropsOnlyTheClients(t *testing.T) {
	root := t.TempDir()
	mixed, plain := filepath.Join(root, "nvm-bin"), filepath.Join(root, "plain")
	for _, d := range []string{mixed, plain} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(mixed, "node"), filepath.Join(mixed, "claude"), filepath.Join(mixed, "code"), filepath.Join(plain, "tool")} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\necho "+filepath.Base(f)+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := CleanPath(mixed+string(filepath.ListSeparator)+plain, filepath.Join(root, "shadow"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := filepath.SplitList(got)
	if len(dirs) != 2 || dirs[0] == mixed || dirs[1] != plain {
		t.Fatalf("PATH %q: want the mixed directory shadowed and the plain one kept", got)
	}
	t.Setenv("PATH", got)
	for _, c := range []string{"claude", "code"} {
		if p, err := exec.LookPath(c); err == nil {
			t.Errorf("%s is still found on the cleaned PATH: %s", c, p)
		}
	}
	for _, tool := range []string{"node", "tool"} {
		out, err := exec.Command(tool).Output()
		if err != nil || strings.TrimSpace(string(out)) != tool {
			t.Errorf("%s on the cleaned PATH: %q, %v", tool, out, err)
		}
	}
}

// Setup moves HOME and every XDG base directory away from the real ones and keeps Go's caches.
func TestSetupMovesHomeAndXDG(t *testing.T) {
	realHome, _ := os.UserHomeDir()
	gocache, _ := exec.Command("go", "env", "GOCACHE").Output()
	for _, k := range append([]string{"HOME", "PATH", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV", "DOCKER_CONFIG"}, XDGVars...) {
		t.Setenv(k, os.Getenv(k)) // restored after the test
	}
	root, err := Setup()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	for _, k := range append([]string{"HOME"}, XDGVars...) {
		v := os.Getenv(k)
		if !strings.HasPrefix(v, root) {
			t.Errorf("%s = %q, want it under %s", k, v, root)
		}
		if st, err := os.Stat(v); err != nil || !st.IsDir() {
			t.Errorf("%s = %q is not a directory: %v", k, v, err)
		}
	}
	if h, _ := os.UserHomeDir(); h == realHome {
		t.Errorf("HOME is still %s", realHome)
	}
	if got := os.Getenv("GOCACHE"); len(gocache) > 0 && got != strings.TrimSpace(string(gocache)) {
		t.Errorf("GOCACHE = %q, want the real cache %q", got, strings.TrimSpace(string(gocache)))
	}
}

// The summary names every skipped test under its reason, and reaches the report file.
func TestSkipSummary(t *testing.T) {
	skipMu.Lock()
	saved := skipped
	skipped = map[string][]string{}
	skipMu.Unlock()
	defer func() { skipMu.Lock(); skipped = saved; skipMu.Unlock() }()
	t.Setenv("CI", "")
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) { Skip(t, "the image %s is missing", "x:y") })
	}
	t.Run("c", func(t *testing.T) { Skip(t, "no engine") })
	if Skipped() != 3 {
		t.Fatalf("Skipped() = %d, want 3", Skipped())
	}
	report := filepath.Join(t.TempDir(), "skips")
	t.Setenv("MCPSANDBOX_SKIP_REPORT", report)
	ReportSkips("pkg")
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pkg: SKIPPED 3 test(s)", "2: the image x:y is missing", "TestSkipSummary/a, TestSkipSummary/b", "1: no engine"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary lacks %q:\n%s", want, b)
		}
	}
}

// Under CI=true a missing prerequisite fails the test instead of skipping it.
func TestSkipFailsUnderCI(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		t.Setenv("CI", "true")
		Skip(t, "no engine")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSkipFailsUnderCI$", "-test.v")
	cmd.Env = append(os.Environ(), "TESTENV_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "CI=true: this test may not skip: no engine") {
		t.Fatalf("under CI=true: err %v, output:\n%s", err, out)
	}
}
