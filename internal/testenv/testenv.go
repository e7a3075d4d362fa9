// Package testenv makes a test package hermetic and its skips loud. Tests only: a package's
// TestMain calls Main, which gives the whole test binary its own HOME, XDG directories and a PATH
// without the MCP client CLIs, so the suite passes on a developer's machine that has Claude Code,
// Codex or Gemini installed and a real policy in HOME; and it reports every test that skipped
// through Skip, even without -v.
package testenv

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// ClientCLIs are the binaries init's client detection looks for on PATH (the "bin:" entries of
// internal/templates/clients.toml; generate's tests check that this list covers them).
var ClientCLIs = []string{"claude", "codex", "gemini", "cursor", "code", "windsurf"}

// XDGVars are the XDG base directories a test binary gets for itself.
var XDGVars = []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"}

// Main runs m in a hermetic environment and exits with its code; pkg names the package in the
// skip summary.
func Main(m *testing.M, pkg string) {
	root, err := Setup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: hermetic test environment: %v\n", pkg, err)
		os.Exit(2)
	}
	code := m.Run()
	ReportSkips(pkg)
	os.RemoveAll(root)
	os.Exit(code)
}

// Setup points HOME and the XDG base directories at a fresh temporary directory and takes the
// client CLIs off PATH, for this process and every process it starts. What the tests need from
// the real environment is kept: Go's build cache, module cache and settings, and the docker
// CLI's configuration (its current context names the engine). It returns the temporary root,
// for the caller to remove when the tests are done.
func Setup() (string, error) {
	keep := realPaths()
	root, err := os.MkdirTemp("", "mcpsandbox-test-env-")
	if err != nil {
		return "", fmt.Errorf("make a temporary HOME: %w", err)
	}
	// 0755: some tests re-run commands as uid 65534, which must be able to resolve paths here.
	os.Chmod(root, 0o755)
	home := filepath.Join(root, "home")
	set := map[string]string{"HOME": home}
	for _, v := range XDGVars {
		set[v] = filepath.Join(root, strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(v, "XDG_"), "_HOME")))
	}
	for _, d := range append([]string{home}, mapValues(set)...) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return root, fmt.Errorf("make %s: %w", d, err)
		}
	}
	path, err := CleanPath(os.Getenv("PATH"), filepath.Join(root, "path"))
	if err != nil {
		return root, err
	}
	set["PATH"] = path
	for k, v := range keep {
		if os.Getenv(k) == "" && v != "" {
			set[k] = v
		}
	}
	for k, v := range set {
		if err := os.Setenv(k, v); err != nil {
			return root, fmt.Errorf("set %s: %w", k, err)
		}
	}
	return root, nil
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// realPaths reads, before HOME moves, where Go keeps its caches and settings and where the docker
// CLI keeps its configuration, so a temporary HOME neither rebuilds everything from an empty
// cache nor loses the developer's docker context.
func realPaths() map[string]string {
	keep := map[string]string{}
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV").Output(); err == nil {
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"} {
			if i < len(lines) && lines[i] != "off" {
				keep[k] = lines[i]
			}
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if st, err := os.Stat(filepath.Join(home, ".docker")); err == nil && st.IsDir() {
			keep["DOCKER_CONFIG"] = filepath.Join(home, ".docker")
		}
	}
	return keep
}

// CleanPath returns path with the client CLIs taken out. A directory that holds none is kept as
// it is; one that holds any (/usr/bin with VS Code's `code`, an nvm bin with `claude` beside
// `node`) is replaced by a directory under shadowRoot of symbolic links to everything else in it,
// so node, npm, go and the system tools stay reachable and no client is found.
func CleanPath(path, shadowRoot string) (string, error) {
	var out []string
	for i, dir := range filepath.SplitList(path) {
		if dir == "" || !hasClient(dir) {
			out = append(out, dir)
			continue
		}
		shadow := filepath.Join(shadowRoot, fmt.Sprint(i))
		if err := os.MkdirAll(shadow, 0o755); err != nil {
			return "", fmt.Errorf("make %s: %w", shadow, err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", fmt.Errorf("read %s (on PATH): %w", dir, err)
		}
		for _, e := range entries {
			if slices.Contains(ClientCLIs, e.Name()) {
				continue
			}
			if err := os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(shadow, e.Name())); err != nil {
				return "", fmt.Errorf("link %s into the test PATH: %w", e.Name(), err)
			}
		}
		out = append(out, shadow)
	}
	os.Chmod(shadowRoot, 0o755)
	return strings.Join(out, string(filepath.ListSeparator)), nil
}

func hasClient(dir string) bool {
	for _, c := range ClientCLIs {
		if _, err := os.Stat(filepath.Join(dir, c)); err == nil {
			return true
		}
	}
	return false
}

// --- loud skips ---

var (
	skipMu  sync.Mutex
	skipped = map[string][]string{} // reason -> test names
)

// Skip skips t for a missing prerequisite and records why; ReportSkips lists it at the end of
// the run, even without -v. Under CI=true it fails t instead: CI must provide every prerequisite.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true: this test may not skip: %s", reason)
	}
	skipMu.Lock()
	skipped[reason] = append(skipped[reason], t.Name())
	skipMu.Unlock()
	t.Skip("SKIPPED LOUDLY: " + reason)
}

// Skipped is the number of tests Skip skipped so far.
func Skipped() int {
	skipMu.Lock()
	defer skipMu.Unlock()
	n := 0
	for _, names := range skipped {
		n += len(names)
	}
	return n
}

// WriteSkips writes the summary of what Skip skipped ("" when nothing was).
func WriteSkips(w io.Writer, pkg string) {
	skipMu.Lock()
	defer skipMu.Unlock()
	if len(skipped) == 0 {
		return
	}
	n := 0
	var reasons []string
	for r, names := range skipped {
		n += len(names)
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		a, b := len(skipped[reasons[i]]), len(skipped[reasons[j]])
		return a > b || a == b && reasons[i] < reasons[j]
	})
	fmt.Fprintf(w, "%s: SKIPPED %d test(s); they prove nothing on this machine (CI=true fails on them):\n", pkg, n)
	for _, r := range reasons {
		names := skipped[r]
		sort.Strings(names)
		list := strings.Join(names, ", ")
		if len(names) > 8 {
			list = strings.Join(names[:8], ", ") + fmt.Sprintf(", and %d more", len(names)-8)
		}
		fmt.Fprintf(w, "  %d: %s\n     (%s)\n", len(names), r, list)
	}
}

// ReportSkips makes the summary loud. go test keeps a passing package's output to itself
// unless -v, so besides stderr the summary goes to the file named by MCPSANDBOX_SKIP_REPORT
// (appended; `make test` prints it after the run), else, without -v, to the terminal when
// there is one (/dev/tty: a developer's `go test ./...`).
func ReportSkips(pkg string) {
	var b strings.Builder
	WriteSkips(&b, pkg)
	if b.Len() == 0 {
		return
	}
	fmt.Fprint(os.Stderr, b.String())
	if f := os.Getenv("MCPSANDBOX_SKIP_REPORT"); f != "" {
		w, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			_, err = w.WriteString(b.String())
			w.Close()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: write the skip summary to MCPSANDBOX_SKIP_REPORT: %v\n", pkg, err)
		}
		return
	}
	if testing.Verbose() {
		return // stderr is shown
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		tty.WriteString(b.String())
		tty.Close()
	}
}
