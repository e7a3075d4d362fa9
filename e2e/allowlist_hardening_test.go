package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// gitRepo makes the workspace a git repository the way husky leaves one: core.hooksPath=.husky
// and an executable, harmless .husky/pre-commit.
func gitRepo(t *testing.T, ws string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		securitySkip(t, "git is not installed: the host-side `git commit` detector needs it")
	}
	for _, args := range [][]string{{"init", "-q", "."}, {"config", "core.hooksPath", ".husky"}} {
		if out, err := hostGit(ws, args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.MkdirAll(filepath.Join(ws, ".husky"), 0o755)
	write(t, filepath.Join(ws, ".husky", "pre-commit"), "#!/bin/sh\ntrue\n", 0o755)
	openUp(ws)
}

// openUp makes everything under dir writable by anyone, so that what stops the sandboxed uid is
// the sandbox, never file permissions.
func openUp(dir string) {
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode()&os.ModeSymlink == 0 {
			os.Chmod(p, fi.Mode().Perm()|0o666|(fi.Mode().Perm()&0o111)|map[bool]os.FileMode{true: 0o111}[fi.IsDir()])
		}
		return nil
	})
}

func hostGit(ws string, args ...string) *exec.Cmd {
	c := exec.Command("git", append([]string{"-c", "safe.directory=*", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid"}, args...)...)
	c.Dir = ws
	c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	return c
}

// hostCommitRuns is the detector: the host runs `git commit` in the workspace, as its user
// would, and reports whether a planted hook touched the marker outside the workspace.
func hostCommitRuns(t *testing.T, ws, marker string) bool {
	t.Helper()
	os.Remove(marker)
	out, err := hostGit(ws, "commit", "-q", "--allow-empty", "-m", "host commit").CombinedOutput()
	if err != nil {
		t.Logf("host git commit: %v %s", err, out)
	}
	_, statErr := os.Stat(marker)
	os.Remove(marker)
	return statErr == nil
}

// Item 1 and 6: every way of writing the husky hook with allowed tools is refused, the kernel
// keeps even an interpreter off it, and the host's next `git commit` runs nothing planted.
func TestHuskyHookNotPlanted(t *testing.T) {
	f := newFixture(t, nil)
	gitRepo(t, f.ws)
	marker := filepath.Join(f.outside, "hook-ran")
	payload := fmt.Sprintf("#!/bin/sh\ntouch %s\n", marker)
	write(t, filepath.Join(f.ws, "payload.txt"), payload, 0o644)
	// Host-made symlinks into protected places (a package manager or the user made them).
	os.MkdirAll(filepath.Join(f.ws, ".husky", "_"), 0o755)
	os.Symlink(".husky/_", filepath.Join(f.ws, "hk"))
	os.Symlink(".husky", filepath.Join(f.ws, "tools"))
	openUp(f.ws)

	attacks := [][]string{
		{"sort", "-o", ".husky/pre-commit", "payload.txt"},
		{"sort", "-o.husky/pre-commit", "payload.txt"},
		{"sort", "-ro.husky/pre-commit", "payload.txt"},
		{"sort", "-rbo.husky/pre-commit", "payload.txt"},
		{"sort", "--outp=.husky/pre-commit", "payload.txt"},
		{"sort", "--output", ".husky/pre-commit", "payload.txt"},
		{"sort", "payload.txt", "-o", "./.husky//pre-commit"},
		{"sort", "-o", "hk/../pre-commit", "payload.txt"}, // lexically "pre-commit"
		{"sort", "-o", "tools/pre-commit", "payload.txt"},
		{"sort", "-o", "x/../.husky/pre-commit", "payload.txt"},
		{"uniq", "payload.txt", ".husky/pre-commit"},
		{"sort", "-o", ".git/hooks/pre-commit", "payload.txt"},
		{"sort", "-o", ".git/config", "payload.txt"},
	}
	for _, a := range attacks {
		res, _ := f.call(a[0], a[1:]...)
		if !res.IsError || !strings.Contains(text(res), "allowlist.protect") {
			t.Errorf("%q not refused by allowlist.protect: %s", a, text(res))
		}
	}
	// The kernel: the existing .husky and .git are read-only for the call, whatever the name.
	_, r := f.py(`
import os
for p in ['.husky/pre-commit', 'hk/../pre-commit', 'tools/pre-commit', '.git/hooks/pre-commit']:
    try:
        with open(p, 'w') as fh: fh.write(open('payload.txt').read())
        os.chmod(p, 0o755)
        print('WROTE', p)
    except Exception as e: print('ERR', p, type(e).__name__)
`)
	if strings.Contains(r.Stdout, "WROTE") {
		t.Errorf("an interpreter wrote a protected hook: %s", r.Stdout)
	}
	if hostCommitRuns(t, f.ws, marker) {
		t.Fatal("the host's git commit ran a planted hook")
	}
	// Negative control: the same payload in the hook does fire the detector.
	write(t, filepath.Join(f.ws, ".husky", "pre-commit"), payload, 0o755)
	if !hostCommitRuns(t, f.ws, marker) {
		t.Fatal("detector cannot fire: a planted hook did not run on git commit")
	}
}

// Item 6(d): protected paths are judged by what they are, not how they are spelled: a .git that
// is a symlink to a directory of another name, and a git directory by content.
func TestGitDirJudgedByWhatItIs(t *testing.T) {
	f := newFixture(t, func(p *policy.Policy, f *fixture) {
		c, err := generate.Pin("split")
		if err != nil {
			securitySkip(t, "split is not installed")
		}
		alsec.Of(p).Commands = append(alsec.Of(p).Commands, c)
	})
	if _, err := exec.LookPath("git"); err != nil {
		securitySkip(t, "git is not installed")
	}
	store := filepath.Join(f.ws, "store")
	if out, err := exec.Command("git", "init", "-q", "--separate-git-dir", store, f.ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	os.Remove(filepath.Join(f.ws, ".git")) // a "gitdir:" file; make it a symlink instead
	os.Symlink("store", filepath.Join(f.ws, ".git"))
	marker := filepath.Join(f.outside, "hook-ran")
	write(t, filepath.Join(f.ws, "payload.txt"), fmt.Sprintf("#!/bin/sh\ntouch %s\n", marker), 0o644)
	write(t, filepath.Join(store, "hooks", "pre-commit"), "#!/bin/sh\ntrue\n", 0o755)
	openUp(f.ws)
	for _, a := range [][]string{
		{"sort", "-o", "store/hooks/pre-commit", "payload.txt"},
		{"sort", "-ostore/hooks/pre-commit", "payload.txt"},
		{"split", "-a1", "--additional-suffix=ommit", "payload.txt", "store/hooks/pre-c"},
	} {
		res, _ := f.call(a[0], a[1:]...)
		if !res.IsError || !strings.Contains(text(res), "allowlist.protect") {
			t.Errorf("%q not refused: %s", a, text(res))
		}
	}
	if hostCommitRuns(t, f.ws, marker) {
		t.Fatal("the host's git commit ran a planted hook")
	}
	write(t, filepath.Join(store, "hooks", "pre-commit"), fmt.Sprintf("#!/bin/sh\ntouch %s\n", marker), 0o755)
	if !hostCommitRuns(t, f.ws, marker) {
		t.Fatal("detector cannot fire")
	}
}

// Item 6: values that are not paths for the program are not path-checked (sort -t/), and the
// default protect list leaves project files writable.
func TestNoFalsePositives(t *testing.T) {
	f := newFixture(t, nil)
	write(t, filepath.Join(f.ws, "paths.txt"), "b/2\na/1\n", 0o644)
	for _, a := range [][]string{{"sort", "-t/", "-k2", "paths.txt"}, {"sort", "-t", "/", "-k", "2", "paths.txt"}} {
		res, r := f.call(a[0], a[1:]...)
		if res.IsError || r.ExitCode != 0 || r.Stdout != "a/1\nb/2\n" {
			t.Errorf("%q: %s %+v", a, text(res), r)
		}
	}
	for _, name := range []string{"Makefile", "package.json", "pyproject.toml", "src/main.go"} {
		os.MkdirAll(filepath.Dir(filepath.Join(f.ws, name)), 0o777)
		os.Chmod(filepath.Dir(filepath.Join(f.ws, name)), 0o777)
		if res, r := f.call("sort", "-o", name, "notes.txt"); res.IsError || r.ExitCode != 0 {
			t.Errorf("writing %s refused: %s %s", name, text(res), r.Stderr)
		}
	}
	if res, r := f.call("cat", "CLAUDE.md"); res.IsError || !strings.Contains(r.Stderr, "No such file") {
		t.Errorf("reading an agent file is not a write: %s", text(res))
	}
}

// Item 2: a refusal says the path leads outside, and names nothing outside the workspace.
func TestRefusalsNameNothingOutside(t *testing.T) {
	f := newFixture(t, nil)
	secretName := "private-" + randHex(6)
	write(t, filepath.Join(f.outside, secretName), "x", 0o644)
	os.Symlink(filepath.Join(f.outside, secretName), filepath.Join(f.ws, "innocent"))
	os.Symlink(f.outside, filepath.Join(f.ws, "dir"))
	servePID := serverPID(t)
	for _, a := range []string{"innocent", "dir/x", "/dev/fd/3", "/proc/self/cwd/x", "/proc/self/exe",
		fmt.Sprintf("/proc/%d/fd/5", servePID), fmt.Sprintf("/proc/%d/cwd/x", servePID), fmt.Sprintf("/proc/%d/exe", servePID)} {
		res, _ := f.call("cat", a)
		msg := text(res)
		if !res.IsError || !strings.Contains(msg, "allowlist.workspace") {
			t.Errorf("cat %s not refused: %s", a, msg)
			continue
		}
		for _, leak := range []string{f.outside, secretName, f.auditPath, f.policyPath, binPath, "pipe:", "socket:", "anon_inode"} {
			if strings.Contains(msg, leak) {
				t.Errorf("refusal of %s names %q: %s", a, leak, msg)
			}
		}
		if cwd, _ := os.Getwd(); strings.Contains(msg, cwd) {
			t.Errorf("refusal of %s names serve's working directory: %s", a, msg)
		}
	}
}

// serverPID finds the newest mcpsandbox serve child of this test process.
func serverPID(t *testing.T) int {
	ents, _ := os.ReadDir("/proc")
	best := 0
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.HasPrefix(string(b), binPath+"\x00serve") && pid > best {
			best = pid
		}
	}
	if best == 0 {
		t.Fatal("serve process not found")
	}
	return best
}

// Item 7: a hard link the host made from the workspace to a file outside is refused as an
// argument, read or write; the outside file stays intact; an interpreter's call does not see it.
func TestHostHardLinkRefused(t *testing.T) {
	f := newFixture(t, nil)
	linked := filepath.Join(f.ws, "linked")
	if err := os.Link(filepath.Join(f.outside, "canary.txt"), linked); err != nil {
		securitySkip(t, "cannot make a hard link here: %v", err)
	}
	f.rebase() // the link the test made raised the canary's link count: that is not the sandbox
	mkdir(t, f.ws, "d", 0o777)
	for _, a := range [][]string{{"cat", "linked"}, {"wc", "linked"}, {"sort", "-o", "linked", "notes.txt"}, {"uniq", "notes.txt", "linked"}, {"sort", "./d/../linked"}} {
		res, _ := f.call(a[0], a[1:]...)
		if !res.IsError || !strings.Contains(text(res), "allowlist.hardlinks") || f.leaked(text(res)) {
			t.Errorf("%q: %s", a, text(res))
		}
	}
	if bad := f.outsideChanged(); len(bad) > 0 {
		t.Errorf("outside changed: %v", bad)
	}
	// An interpreter opening the link itself: the call's transactional layer hides it (Landlock
	// judges paths, so without a layer it would read the outside file: explain says so).
	if _, r := f.py("print(open('linked').read())"); f.leaked(r.Stdout) || !strings.Contains(r.Stderr, "FileNotFoundError") {
		t.Errorf("an interpreter read the outside file through a host-made hard link: %+v", r)
	}
	// Negative control: the leak detector fires on the outside file's content.
	if b, err := os.ReadFile(filepath.Join(f.outside, "canary.txt")); err != nil || !f.leaked(string(b)) {
		t.Errorf("leak detector silent on the canary's own content: %v", err)
	}
}

// With hardlinks = "read-only" a hard-linked file may be read, and is mounted read-only.
func TestHardLinksReadOnlySwitch(t *testing.T) {
	f := newFixture(t, func(p *policy.Policy, f *fixture) { alsec.Of(p).HardLinks = alsec.HardLinksReadOnly })
	linked := filepath.Join(f.ws, "linked")
	if err := os.Link(filepath.Join(f.outside, "canary.txt"), linked); err != nil {
		securitySkip(t, "cannot make a hard link here: %v", err)
	}
	f.rebase() // the link the test made raised the canary's link count: that is not the sandbox
	if res, r := f.call("cat", "linked"); res.IsError || !f.leaked(r.Stdout) {
		t.Errorf("read-only mode: cat refused: %s", text(res))
	}
	if res, _ := f.call("sort", "-o", "linked", "notes.txt"); !res.IsError || !strings.Contains(text(res), "allowlist.hardlinks") {
		t.Errorf("read-only mode allowed a write: %s", text(res))
	}
	if bad := f.outsideChanged(); len(bad) > 0 {
		t.Errorf("outside changed: %v", bad)
	}
}

// Item 3: sort spills a 100 MB file to the call's private /tmp (no -T), and nothing of it is
// left on the host's /tmp or in the workspace afterwards.
func TestPrivateTmp(t *testing.T) {
	f := newFixture(t, func(p *policy.Policy, f *fixture) {
		p.Limits.Timeout = policy.Duration{Duration: 2 * time.Minute}
		alsec.Of(p).MaxFileSize = 256 << 20
	})
	big := filepath.Join(f.ws, "big.txt")
	fh, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(fh, 1<<20)
	x := uint64(88172645463325252)
	for n := 0; n < 100<<20; {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		k, _ := fmt.Fprintf(w, "%016x\n", x)
		n += k
	}
	w.Flush()
	fh.Close()
	before := hostTmpEntries()
	wsBefore := dirNames(f.ws)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := f.cs.CallTool(ctx, mcpParams(map[string]any{"command": "sort", "args": []string{"-u", "-o", "sorted.txt", "big.txt"}}))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(text(res), "exit_code: 0") {
		t.Fatalf("sort of 100 MB: %.2000s", text(res))
	}
	t.Logf("sort of 100 MB through the private /tmp: %v", time.Since(start))
	if st, err := os.Stat(filepath.Join(f.ws, "sorted.txt")); err != nil || st.Size() == 0 {
		t.Fatalf("no sorted output: %v", err)
	}
	res, r := f.call("sort", "-S", "1K", "notes.txt")
	if res.IsError || r.ExitCode != 0 || r.Stdout != "apple\napple\nfig\npear\n" {
		t.Errorf("sort -S 1K: %s %+v", text(res), r)
	}
	// The private /tmp is empty at the start of each call, and its files are gone after it.
	f.py("open('/tmp/left-' + __import__('sys').argv[1], 'w').write('x')")
	// (A workspace under the host's /tmp is bound back at its path: its first component shows.)
	want := "[]"
	if rel, err := filepath.Rel(os.TempDir(), f.ws); err == nil && !strings.HasPrefix(rel, "..") {
		want = fmt.Sprintf("['%s']", strings.Split(rel, "/")[0])
	}
	if _, r := f.py("import os; print(sorted(os.listdir('/tmp')))"); strings.TrimSpace(r.Stdout) != want {
		t.Errorf("/tmp not empty at the start of a call: %s %s", r.Stdout, r.Stderr)
	}
	for e := range hostTmpEntries() {
		if !before[e] && (strings.HasPrefix(e, "sort") || strings.HasPrefix(e, "left-") || strings.HasPrefix(e, "mcpsandbox-tmp-")) {
			t.Errorf("left on the host's /tmp: %s", e)
		}
	}
	for n := range dirNames(f.ws) {
		if !wsBefore[n] && n != "sorted.txt" {
			t.Errorf("left in the workspace: %s", n)
		}
	}
	// Size-capped: the private /tmp holds at most limits.memory.
	_, r = f.py(`
chunk = b'x' * (1 << 20)
try:
    for i in range(3):
        with open('/tmp/fill%d' % i, 'wb') as fh:
            for _ in range(100): fh.write(chunk)
    print('FILLED')
except Exception as e: print('ERR', e)`)
	if strings.Contains(r.Stdout, "FILLED") {
		t.Errorf("private /tmp took 300 MiB: %s", r.Stdout)
	}
}

func hostTmpEntries() map[string]bool {
	m := map[string]bool{}
	for _, n := range dirNamesList(os.TempDir()) {
		m[n] = true
	}
	return m
}

func dirNames(d string) map[string]bool {
	m := map[string]bool{}
	for _, n := range dirNamesList(d) {
		m[n] = true
	}
	return m
}

func dirNamesList(d string) []string {
	ents, _ := os.ReadDir(d)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// Item 5: an exec that fails after the rlimits (text file busy: the binary is open for writing)
// is a clean error, not a Go crash dressed as the command's output.
func TestExecFailureIsAnError(t *testing.T) {
	var copyPath string
	f := newFixture(t, func(p *policy.Policy, f *fixture) {
		p.Limits.Memory = 16 << 20 // the tightest the policy allows: the helper's runtime cannot grow
		dir := mkdir(t, f.root, "bin", 0o755)
		copyPath = filepath.Join(dir, "wc")
		b, _ := os.ReadFile("/usr/bin/wc")
		write(t, copyPath, string(b), 0o755)
		c, err := generate.Pin(copyPath)
		if err != nil {
			t.Fatal(err)
		}
		c.Name = "wc2"
		alsec.Of(p).Commands = append(alsec.Of(p).Commands, c)
	})
	if res, _ := f.call("wc2", "notes.txt"); res.IsError {
		t.Fatalf("control: the copy does not run: %s", text(res))
	}
	w, err := os.OpenFile(copyPath, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	res, r := f.call("wc2", "notes.txt")
	msg := text(res)
	if !res.IsError || !strings.Contains(msg, "text file busy") {
		t.Errorf("exec failure not reported as an error: %s %+v", msg, r)
	}
	for _, bad := range []string{"goroutine", ".go:", "runtime", "cannot allocate"} {
		if strings.Contains(msg, bad) {
			t.Errorf("failure text carries %q: %s", bad, msg)
		}
	}
	// A large argument list grows the helper's heap before the limits: still a clean error.
	many := make([]string, 250)
	for i := range many {
		many[i] = strings.Repeat("n", 900)
	}
	res, _ = f.call("wc2", many...)
	if msg := text(res); !res.IsError || !strings.Contains(msg, "text file busy") || strings.Contains(msg, "goroutine") {
		t.Errorf("exec failure with a large spec: %.500s", msg)
	}
	w.Close()
	if res, _ := f.call("wc2", "notes.txt"); res.IsError {
		t.Errorf("after the writer closed: %s", text(res))
	}
	// The other direction: a command cannot pass its own output off as a sandbox failure.
	res, r = f.py("import sys; sys.stderr.write('mcpsandbox: sandbox setup failed: forged\\n'); sys.exit(126)")
	if res.IsError || r.ExitCode != 126 || !strings.Contains(r.Stderr, "forged") {
		t.Errorf("command output taken for a helper failure: %s %+v", text(res), r)
	}
}

// Item 9: an argument over the kernel's limit is refused up front with the right advice.
func TestHugeArgument(t *testing.T) {
	f := newFixture(t, nil)
	res, _ := f.call("wc", strings.Repeat("a", 200<<10))
	if !res.IsError || !strings.Contains(text(res), "tool.arguments") || strings.Contains(text(res), "--check") {
		t.Errorf("200 KB argument: %.300s", text(res))
	}
}

// Item 8: operator mistakes serve used to accept silently are refused at start-up.
func TestOperatorMistakesRefused(t *testing.T) {
	root := t.TempDir()
	os.Chmod(root, 0o755)
	ws := mkdir(t, root, "ws", 0o755)
	bin := mkdir(t, root, "bin", 0o755)
	base := func() *policy.Policy {
		p := policy.Default(alsec.Name)
		alsec.Of(p).Workspace = ws
		c, err := generate.Pin("wc")
		if err != nil {
			t.Fatal(err)
		}
		alsec.Of(p).Commands = []policy.Command{c}
		return p
	}
	shPath, _ := filepath.EvalSymlinks("/bin/sh")
	shSum, _ := generate.HashFile(shPath)
	os.Symlink(python, filepath.Join(bin, "wc"))
	pySum, _ := generate.HashFile(python)
	shBytes, _ := os.ReadFile(shPath)
	write(t, filepath.Join(bin, "lines"), string(shBytes), 0o755)
	os.Symlink("/usr", filepath.Join(root, "usrlink"))
	cases := []struct {
		name, want string
		mutate     func(p *policy.Policy) (mode os.FileMode, uid int)
	}{
		{"symlink to an interpreter", "interpreter", func(p *policy.Policy) (os.FileMode, int) {
			alsec.Of(p).Commands = append(alsec.Of(p).Commands, policy.Command{Name: "count", Path: filepath.Join(bin, "wc"), SHA256: pySum})
			return 0o644, -1
		}},
		{"copy of sh under an innocent name", "interpreter", func(p *policy.Policy) (os.FileMode, int) {
			alsec.Of(p).Commands = append(alsec.Of(p).Commands, policy.Command{Name: "lines", Path: filepath.Join(bin, "lines"), SHA256: shSum})
			return 0o644, -1
		}},
		{"workspace symlink to /usr", "system directory", func(p *policy.Policy) (os.FileMode, int) {
			alsec.Of(p).Workspace = filepath.Join(root, "usrlink")
			return 0o644, -1
		}},
		{"workspace with .. to /etc", "system directory", func(p *policy.Policy) (os.FileMode, int) {
			alsec.Of(p).Workspace = ws + "/../../../../../../etc"
			return 0o644, -1
		}},
		{"workspace in the home's .ssh", "a dot directory of the home", func(p *policy.Policy) (os.FileMode, int) {
			ssh := filepath.Join(os.Getenv("HOME"), ".ssh")
			os.MkdirAll(ssh, 0o700)
			alsec.Of(p).Workspace = ssh
			return 0o644, -1
		}},
		{"workspace /tmp", "system directory", func(p *policy.Policy) (os.FileMode, int) {
			alsec.Of(p).Workspace = "/tmp"
			return 0o644, -1
		}},
		{"policy writable by everyone", "writable by everyone", func(p *policy.Policy) (os.FileMode, int) { return 0o666, -1 }},
		{"policy writable by a group", "writable by group", func(p *policy.Policy) (os.FileMode, int) { return 0o664, -1 }},
		{"policy owned by another uid", "owned by uid 4321", func(p *policy.Policy) (os.FileMode, int) { return 0o644, 4321 }},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := base()
			mode, uid := c.mutate(p)
			b, _ := policy.Marshal(p)
			file := filepath.Join(root, fmt.Sprintf("policy%d.toml", i))
			write(t, file, string(b), mode)
			if uid >= 0 {
				if os.Geteuid() != 0 {
					securitySkip(t, "chown needs root")
				}
				os.Chown(file, uid, 4321)
			}
			if mode&0o020 != 0 && os.Geteuid() == 0 {
				os.Chown(file, 0, 4321)
			}
			_, stderr, code := runBin(t, "serve", "--policy", file, "--check")
			if code == 0 || !strings.Contains(stderr, c.want) {
				t.Errorf("served (exit %d), want a refusal naming %q:\n%s", code, c.want, stderr)
			}
		})
	}
	// The good policy serves, and the log shows the workspace as resolved.
	os.Symlink(ws, filepath.Join(root, "wslink"))
	p := base()
	alsec.Of(p).Workspace = filepath.Join(root, "wslink")
	b, _ := policy.Marshal(p)
	file := filepath.Join(root, "good.toml")
	write(t, file, string(b), 0o644)
	_, stderr, code := runBin(t, "serve", "--policy", file, "--check")
	if code != 0 || !strings.Contains(stderr, "resolved="+ws) {
		t.Errorf("good policy: exit %d, log lacks the resolved workspace:\n%s", code, stderr)
	}
}
