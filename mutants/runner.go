package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
)

// Table is mutants.toml: every mechanism that can be switched off, and what claims to catch it.
type Table struct {
	Mutant []Mutant `toml:"mutant"`
}

// Mutant is one switched-off mechanism.
type Mutant struct {
	Name string `toml:"name" json:"name"` // the mutated("NAME") switch(es); "a,b" switches several
	What string `toml:"what" json:"what"`
	// Base are switches that are also off in the control run and the mutant run: the host the
	// mechanism matters on (e.g. the process-group kill matters where there is no PID
	// namespace). Catchers must pass under Base alone and fail under Base plus Name.
	Base string `toml:"base" json:"base,omitempty"`
	// Exclusive: run with no other catcher beside it (its attack would disturb them).
	Exclusive bool       `toml:"exclusive" json:"exclusive,omitempty"`
	Tests     []Catcher  `toml:"test" json:"tests,omitempty"`
	Harness   [][]string `toml:"harness" json:"harness,omitempty"` // argument lists for `BIN harness`
}

// Catcher is a go test run that claims to catch a mutant: it must pass without the mutant and
// fail with it.
type Catcher struct {
	Pkg string `toml:"pkg" json:"pkg"`
	Run string `toml:"run" json:"run"`
}

func (c Catcher) String() string { return c.Pkg + " -run '" + c.Run + "'" }

// Outcome is what one catcher did against one mutant.
type Outcome struct {
	Catcher  string  `json:"catcher"`
	Caught   bool    `json:"caught"`
	Control  bool    `json:"control_passed"`
	Error    string  `json:"error,omitempty"`
	Seconds  float64 `json:"seconds"`
	Evidence string  `json:"evidence,omitempty"` // the first failure line under the mutant
}

// Result is one mutant's verdict.
type Result struct {
	Mutant   Mutant    `json:"mutant"`
	Caught   bool      `json:"caught"`
	Outcomes []Outcome `json:"outcomes"`
}

// Options configure Run.
type Options struct {
	Repo     string // module root
	Table    string
	Jobs     int
	Only     []string
	Log      io.Writer
	SkipSync bool // do not compare the table with the switches in the source (runner tests)
	All      bool // run every catcher of a mutant, not only up to the first that catches it
}

// Report is the whole run.
type Report struct {
	Date     string   `json:"date"`
	Machine  string   `json:"machine"`
	Seconds  float64  `json:"seconds"`
	Results  []Result `json:"results"`
	Survived []string `json:"survived"`
}

// LoadTable reads and checks a table.
func LoadTable(path string) (*Table, error) {
	var t Table
	md, err := toml.DecodeFile(path, &t)
	if err != nil {
		return nil, fmt.Errorf("read mutant table %s: %w", path, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return nil, fmt.Errorf("mutant table %s: unknown keys %v (known: name, what, base, exclusive, test.pkg, test.run, harness)", path, u)
	}
	seen := map[string]bool{}
	for i, m := range t.Mutant {
		if m.Name == "" {
			return nil, fmt.Errorf("mutant table %s: entry %d has no name", path, i+1)
		}
		if seen[m.Name] {
			return nil, fmt.Errorf("mutant table %s: %q listed twice", path, m.Name)
		}
		seen[m.Name] = true
		if len(m.Tests) == 0 && len(m.Harness) == 0 {
			return nil, fmt.Errorf("mutant table %s: %q has no catcher (add a [[mutant.test]] or a harness entry)", path, m.Name)
		}
		for _, c := range m.Tests {
			if c.Pkg == "" || c.Run == "" {
				return nil, fmt.Errorf("mutant table %s: %q has a test without pkg or run", path, m.Name)
			}
		}
	}
	return &t, nil
}

var switchRe = regexp.MustCompile(`mutated\("([a-z0-9-]+)"\)`)

// Switches lists the mutated("NAME") switches in the source under dir.
func Switches(dir string) (map[string][]string, error) {
	out := map[string][]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != dir {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range switchRe.FindAllSubmatch(b, -1) {
			rel, _ := filepath.Rel(dir, p)
			out[string(m[1])] = append(out[string(m[1])], rel)
		}
		return nil
	})
	return out, err
}

// CheckSync: every switch in the source has a table entry, and every switch a table entry
// names exists (a name with no switch would be a mutant that changes nothing).
func CheckSync(t *Table, sw map[string][]string) error {
	var errs []string
	named := map[string]bool{}
	for _, m := range t.Mutant {
		for _, n := range strings.Split(m.Name+","+m.Base, ",") {
			if n == "" {
				continue
			}
			named[n] = true
			if _, ok := sw[n]; !ok {
				errs = append(errs, fmt.Sprintf("%q is in the table but no mutated(%q) exists in the source", n, n))
			}
		}
	}
	for n, files := range sw {
		if !named[n] {
			errs = append(errs, fmt.Sprintf("mutated(%q) in %s has no entry in the table", n, strings.Join(files, ", ")))
		}
	}
	sort.Strings(errs)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

type runner struct {
	o    Options
	dir  string
	bin  string
	tbin map[string]string // package -> compiled test binary
	mu   sync.Mutex
	ctl  map[string]*control
	excl sync.RWMutex // exclusive mutants hold it for writing, every other run for reading
}

// control is a catcher's run under the base alone (shared by every mutant with that base).
type control struct {
	once sync.Once
	ok   bool
	msg  string
}

// Run builds the mutant binary once, runs each mutant's catchers (and their controls) and
// returns the report. An error is returned when the run itself cannot be done.
func Run(ctx context.Context, o Options) (*Report, error) {
	start := time.Now()
	if o.Jobs < 1 {
		o.Jobs = 4
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	t, err := LoadTable(o.Table)
	if err != nil {
		return nil, err
	}
	if !o.SkipSync {
		sw, err := Switches(o.Repo)
		if err != nil {
			return nil, err
		}
		if err := CheckSync(t, sw); err != nil {
			return nil, fmt.Errorf("mutant table out of step with the source: %w", err)
		}
	}
	muts := t.Mutant
	if len(o.Only) > 0 {
		muts = slices.DeleteFunc(slices.Clone(muts), func(m Mutant) bool { return !slices.Contains(o.Only, m.Name) })
	}
	dir, err := os.MkdirTemp("", "mcpsandbox-mutants-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755) // the sandboxed uid execs nothing from here, but serve re-execs itself
	r := &runner{o: o, dir: dir, bin: filepath.Join(dir, "mcpsandbox"), tbin: map[string]string{}, ctl: map[string]*control{}}
	if err := r.goShim(); err != nil {
		return nil, err
	}
	if err := r.build(ctx, muts); err != nil {
		return nil, err
	}
	results := make([]Result, len(muts))
	ch := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < o.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				m := muts[i]
				results[i].Mutant = m
				for c := 0; c < len(m.Tests)+len(m.Harness); c++ {
					lock, unlock := r.excl.RLock, r.excl.RUnlock
					if m.Exclusive {
						lock, unlock = r.excl.Lock, r.excl.Unlock
					}
					lock()
					oc := r.judge(ctx, m, c)
					unlock()
					results[i].Outcomes = append(results[i].Outcomes, oc)
					fmt.Fprintf(o.Log, "%-16s %-60s caught=%v control=%v %.1fs %s\n", m.Name, oc.Catcher, oc.Caught, oc.Control, oc.Seconds, oc.Error)
					if oc.Caught && oc.Control && oc.Error == "" && !o.All {
						break
					}
				}
			}
		}()
	}
	for i := range muts {
		ch <- i
	}
	close(ch)
	wg.Wait()
	rep := &Report{Date: time.Now().UTC().Format(time.RFC3339), Machine: fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())}
	for i := range results {
		for _, oc := range results[i].Outcomes {
			if oc.Caught && oc.Control && oc.Error == "" {
				results[i].Caught = true
			}
		}
		if !results[i].Caught {
			rep.Survived = append(rep.Survived, results[i].Mutant.Name)
		}
	}
	rep.Results = results
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// buildTags are the tags of the mutant binary and the catchers' test binaries.
const buildTags = "mutant,testhooks"

// build compiles the mutant mcpsandbox binary and each catcher package's test binary, once.
func (r *runner) build(ctx context.Context, muts []Mutant) error {
	// mutant and testhooks: the catchers need the test build's hooks (the harness's egress
	// stand-ins, its offline E2B server), as make test has them
	b := exec.CommandContext(ctx, "go", "build", "-tags", buildTags, "-o", r.bin, "./cmd/mcpsandbox")
	b.Dir, b.Env = r.o.Repo, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := b.CombinedOutput(); err != nil {
		return fmt.Errorf("build the mutant binary: %v\n%s", err, out)
	}
	// each catcher package's test binary, o.Jobs at once: a link is one CPU's work, and there
	// are a dozen and more of them
	var pkgs []string
	for _, m := range muts {
		for _, c := range m.Tests {
			if _, ok := r.tbin[c.Pkg]; !ok {
				r.tbin[c.Pkg] = filepath.Join(r.dir, strings.NewReplacer("/", "_", ".", "_").Replace(c.Pkg)+".test")
				pkgs = append(pkgs, c.Pkg)
			}
		}
	}
	errs := make([]error, len(pkgs))
	sem := make(chan struct{}, r.o.Jobs)
	var wg sync.WaitGroup
	for i, pkg := range pkgs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			b := exec.CommandContext(ctx, "go", "test", "-c", "-tags", buildTags, "-o", r.tbin[pkg], pkg)
			b.Dir, b.Env = r.o.Repo, append(os.Environ(), "CGO_ENABLED=0")
			if o, err := b.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("build the tests of %s: %v\n%s", pkg, err, o)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// goShim puts a `go` first on the catchers' PATH that answers the e2e package's
// `go build [-tags testhooks] -o OUT ../cmd/mcpsandbox` with a copy of the mutant binary built once, and hands every
// other command to the real go. (Once e2e's TestMain honours MCPSANDBOX_TEST_BINARY, which the
// runner also sets, the shim is never asked.)
func (r *runner) goShim() error {
	real, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("find go: %w", err)
	}
	dir := filepath.Join(r.dir, "shim")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	script := fmt.Sprintf(`#!/bin/sh
if [ "$1" = build ] && [ "$2" = -o ] && [ "$4" = ../cmd/mcpsandbox ] && [ $# -eq 4 ]; then
	exec cp %[1]q "$3"
fi
if [ "$1" = build ] && [ "$2" = -tags ] && [ "$3" = testhooks ] && [ "$4" = -o ] && [ "$6" = ../cmd/mcpsandbox ] && [ $# -eq 6 ]; then
	exec cp %[1]q "$5"
fi
exec %[2]q "$@"
`, r.bin, real)
	return os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755)
}

// judge runs catcher ci of m under the base (the control, once per base and catcher) and under
// the base plus the mutant.
func (r *runner) judge(ctx context.Context, m Mutant, ci int) Outcome {
	start := time.Now()
	var oc Outcome
	var run func(switches string) (bool, string, error)
	if ci < len(m.Tests) {
		c := m.Tests[ci]
		oc.Catcher = c.String()
		run = func(sw string) (bool, string, error) { return r.goTest(ctx, c, sw) }
	} else {
		args := m.Harness[ci-len(m.Tests)]
		oc.Catcher = "harness " + strings.Join(args, " ")
		run = func(sw string) (bool, string, error) { return r.harness(ctx, args, sw) }
	}
	key := m.Base + "|" + oc.Catcher
	r.mu.Lock()
	ctl, ok := r.ctl[key]
	if !ok {
		ctl = &control{}
		r.ctl[key] = ctl
	}
	r.mu.Unlock()
	ctl.once.Do(func() {
		pass, evidence, err := run(m.Base)
		ctl.ok = pass && err == nil
		switch {
		case err != nil:
			ctl.msg = err.Error()
		case !pass:
			ctl.msg = "fails without the mutant (" + switchesOrNone(m.Base) + "): " + evidence
		}
	})
	oc.Control = ctl.ok
	if !ctl.ok {
		oc.Error = "control: " + ctl.msg
		oc.Seconds = time.Since(start).Seconds()
		return oc
	}
	sw := m.Name
	if m.Base != "" {
		sw = m.Base + "," + m.Name
	}
	pass, evidence, err := run(sw)
	if err != nil {
		oc.Error = err.Error()
	}
	oc.Caught = err == nil && !pass
	oc.Evidence = evidence
	oc.Seconds = time.Since(start).Seconds()
	return oc
}

func switchesOrNone(s string) string {
	if s == "" {
		return "no switch off"
	}
	return "with only " + s + " off"
}

var failLine = regexp.MustCompile(`(?m)^\s*(--- FAIL: .*|\S+_test\.go:\d+: .*)$`)

// goTest runs a catcher's tests with the switches off; it reports whether they passed. A run
// in which no test matched, or a matched test skipped, is an error: it proves nothing.
func (r *runner) goTest(ctx context.Context, c Catcher, switches string) (bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.tbin[c.Pkg], "-test.run", c.Run, "-test.count=1", "-test.v", "-test.timeout=150s")
	cmd.Dir = filepath.Join(r.o.Repo, c.Pkg)
	cmd.Env = append(os.Environ(), "MCPSANDBOX_MUTANT="+switches, "GOFLAGS=-tags="+buildTags, "CGO_ENABLED=0",
		"MCPSANDBOX_TEST_BINARY="+r.bin, "CI=true", "PATH="+filepath.Join(r.dir, "shim")+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	s := out.String()
	if strings.Contains(s, "no tests to run") || !strings.Contains(s, "=== RUN") {
		return false, "", fmt.Errorf("%s matched no test", c)
	}
	if strings.Contains(s, "--- SKIP") {
		return false, "", fmt.Errorf("%s skipped: %s", c, firstMatch(regexp.MustCompile(`(?m)^.*--- SKIP.*$`), s))
	}
	if err == nil {
		return true, "", nil
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ctx.Err() != nil {
		return false, "", fmt.Errorf("%s did not run to the end: %v", c, err)
	}
	return false, firstFailure(s), nil
}

// harness runs `BIN harness ARGS` with the switches off; exit 0 = every scenario contained.
func (r *runner) harness(ctx context.Context, args []string, switches string) (bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, append([]string{"harness"}, args...)...)
	cmd.Env = append(os.Environ(), "MCPSANDBOX_MUTANT="+switches)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err == nil {
		return true, "", nil
	}
	if ctx.Err() != nil {
		return false, "", fmt.Errorf("harness %v did not finish: %v", args, err)
	}
	s := out.String()
	if !strings.Contains(s, "BREACH") {
		return false, "", fmt.Errorf("harness %v failed without reporting a breach: %s", args, lastLines(s, 3))
	}
	return false, firstMatch(regexp.MustCompile(`(?m)^.*BREACH.*$`), s), nil
}

func firstFailure(s string) string {
	var lines []string
	for _, m := range failLine.FindAllString(s, -1) {
		m = strings.TrimSpace(m)
		if strings.HasPrefix(m, "--- FAIL") && len(lines) > 0 {
			continue
		}
		lines = append(lines, m)
		if len(lines) == 1 && !strings.HasPrefix(m, "--- FAIL") {
			break
		}
	}
	if len(lines) == 0 {
		return lastLines(s, 2)
	}
	e := lines[0]
	if len(e) > 200 {
		e = e[:200] + "…"
	}
	return e
}

func firstMatch(re *regexp.Regexp, s string) string {
	m := strings.TrimSpace(re.FindString(s))
	if len(m) > 200 {
		m = m[:200] + "…"
	}
	return m
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " / ")
}

// Markdown renders the report as docs/mutants.md.
func (rep *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("# Mutants: every enforcement mechanism switched off, one at a time\n\n")
	b.WriteString("Generated by `make mutants` (`go run ./mutants`) from `mutants/mutants.toml`. Each mutant is the\n" +
		"mcpsandbox binary built with `-tags mutant` and run with `MCPSANDBOX_MUTANT=NAME`, which switches off one\n" +
		"mechanism at its `mutated(\"NAME\")` call site (a release build has no such switch: `mutated` is the constant\n" +
		"false there, and `go test ./mutants` checks the release binary carries no trace of it). A catcher is a test or\n" +
		"harness run that judges from outside the sandbox; it must pass with the mechanism on (control) and fail with it\n" +
		"off. A mutant no catcher catches fails the run.\n\n")
	fmt.Fprintf(&b, "Run %s on %s, %.0f s.\n\n", rep.Date, rep.Machine, rep.Seconds)
	b.WriteString("| mutant | switched off | host condition | caught by | verdict |\n|---|---|---|---|---|\n")
	for _, r := range rep.Results {
		var by []string
		for _, oc := range r.Outcomes {
			mark := "✗ not caught"
			switch {
			case oc.Error != "":
				mark = "⚠ " + oc.Error
			case oc.Caught:
				mark = "✓ " + oc.Evidence
			}
			by = append(by, "`"+oc.Catcher+"`: "+mark)
		}
		verdict := "**SURVIVED**"
		if r.Caught {
			verdict = "caught"
		}
		base := r.Mutant.Base
		if base != "" {
			base = "also off: " + base
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.Mutant.Name, mdEscape(r.Mutant.What), base, mdEscape(strings.Join(by, "<br>")), verdict)
	}
	if len(rep.Survived) > 0 {
		fmt.Fprintf(&b, "\n**Survivors:** %s\n", strings.Join(rep.Survived, ", "))
	} else {
		b.WriteString("\nEvery mutant was caught.\n")
	}
	return b.String()
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

// JSON renders the report.
func (rep *Report) JSON() ([]byte, error) { return json.MarshalIndent(rep, "", "  ") }
