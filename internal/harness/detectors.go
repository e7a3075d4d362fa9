package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// Detector watches one kind of breach from outside the sandbox.
type Detector struct {
	Name    string
	Watches string
	check   func(r *run) (breach bool, detail string)
}

// Finding is one detector's verdict on one scenario.
type Finding struct {
	Detector string `json:"detector"`
	Breach   bool   `json:"breach"`
	Detail   string `json:"detail"`
}

var detectors = map[string]Detector{}

func init() {
	for _, d := range []Detector{
		{"leak", "the nonce (canaries, fake HOME, root-only file), the server's secret or /etc/shadow's first entry in anything a call returned", checkLeak},
		{"outside", "files created, changed, hard-linked or removed outside the workspace (scratch root, fake HOME, /tmp, /var/tmp, /dev/shm, the host's cron directories)", checkOutside},
		{"tcp", "connections accepted by the loopback TCP listener", func(r *run) (bool, string) {
			return count("connection(s) reached the TCP listener", settled(&r.a.tcpHits))
		}},
		{"udp", "datagrams received by the loopback UDP listener", func(r *run) (bool, string) {
			return count("datagram(s) reached the UDP listener", settled(&r.a.udpHits))
		}},
		{"unix", "connections accepted by the pathname and abstract unix socket listeners", func(r *run) (bool, string) {
			return count("connection(s) reached a unix socket listener", settled(&r.a.unixHits))
		}},
		{"dns", "queries carrying the run's tag at the loopback stub resolver", checkDNS},
		{"egress", "sockets (TCP, UDP, ICMP, raw) to addresses off this host (TEST-NET-2, 169.254.169.254) in the host's own socket tables, held by the call's processes, sampled during the calls", func(r *run) (bool, string) {
			if r.egress.Load() == nil {
				return false, "no socket to an off-host address appeared"
			}
			return true, "host socket table held " + *r.egress.Load()
		}},
		{"survivors", "processes of the call (tagged argv or cwd in the workspace) still alive 3s after it returned; where the scenario names this detector, also any process still listed in a cgroup of its own (a container's) that held the call's processes, found by cgroup, not by argv or cwd", checkSurvivors},
		{"responsive", "the server answers tools/list after the attack (within 3s, or 10s more on a loaded machine)", checkResponsive},
		{"wall_time", "every call returned within the policy's timeout plus 3s (or the scenario's tighter return_within), plus this run's measured latency of a trivial call of the same policy (p90 of 3, capped at 5s, the timeout, and 3/4 of the way from return_within to the timeout)", checkWallTime},
		{"output", "no returned stream is longer than max_output_bytes", checkOutput},
		{"memory", "resident memory of the call's processes, summed and sampled during the call, stays within limits.memory", func(r *run) (bool, string) {
			peak := r.peakRSS.Load()
			if peak > r.expect.Memory {
				return true, fmt.Sprintf("the call's processes held %s resident, limit %s", human(peak), human(r.expect.Memory))
			}
			return false, fmt.Sprintf("peak %s resident, limit %s", human(peak), human(r.expect.Memory))
		}},
		{"disk", "no file in the workspace is larger than the per-file size cap", checkDisk},
		{"privilege", "files in the workspace owned by root (the sandbox user is not root), device nodes, setuid/setgid bits", checkPrivilege},
		{"marker", "the marker a planted payload prints if it ever runs, in anything a call returned", func(r *run) (bool, string) {
			out := r.allOutput()
			for _, m := range append([]string{r.a.Marker}, r.s.Evidence...) {
				if strings.Contains(out, m) {
					return true, fmt.Sprintf("a planted payload ran: %q came back", m)
				}
			}
			return false, "no planted payload ran"
		}},
		{"persistence", "executable git hooks, git config keys that run programs, and any file created, changed or removed under the repository's core.hooksPath or a protected path (policy.DefaultProtect and the policy's protect additions), in the workspace", checkPersistence},
		{"sibling", "the arena's sibling process (the sandbox's uid, outside the sandbox, holding the server's secret) traced, stopped or killed, sampled during the calls and after", checkSibling},
		{"syscalls", "each probed syscall (a `SYSCALL name ret errno` line the step prints) refused with seccomp's EPERM, not succeeding or failing inside the kernel (EINVAL, EFAULT, ENOKEY…); no such line at all is an ERROR", checkSyscalls},
		{"forbidden_host", "connections reaching the forbidden stand-in host (HTTP or HTTPS), and requests reaching the allowed one in another host's name (Host header, TLS server name) or as bytes of another protocol", checkForbiddenHost},
		{"allowed_host", "the allowed stand-in host answered the scenario's HTTP and HTTPS fetch through the proxy in its own name; fires when either never arrived (a broken or refuse-everything egress path is not containment)", checkAllowedHost},
		{"netns", "sockets of the call's processes read in their own network namespace (/proc/PID/net/tcp*, udp*: inside a container or the per-call namespace, which the host's tables never show), sampled every 20ms: connected to a non-loopback address, or connected in the host's own namespace", checkNetns},
		{"listen", "the host dials the arena's free loopback port ({{listen_port}}) every 50ms during the calls and once after: a connection accepted is a server the sandbox left listening where the host, and every local program, can reach it", checkListen},
		{"processes", "the call's processes (tagged argv or cwd in the workspace), counted every 10ms during the call, never exceed limits.pids (+1: the sandbox helper, PID 1 of the call's namespace)", checkProcesses},
	} {
		detectors[d.Name] = d
	}
}

// DetectorNames lists the detectors, sorted.
func DetectorNames() []string {
	var n []string
	for k := range detectors {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Detectors lists every detector, sorted by name.
func Detectors() []Detector {
	var out []Detector
	for _, n := range DetectorNames() {
		out = append(out, detectors[n])
	}
	return out
}

// settled is a listener's count once its goroutine has had time to take what already reached
// it: a connection the program made sits in the listener's backlog until Accept returns, and on
// a loaded machine the detector could read 0 before then (a CI run's control for the unix
// detector went silent so). A zero is looked at again for up to 300 ms; a count is final.
func settled(n *atomic.Int64) int64 {
	for range 15 {
		if v := n.Load(); v > 0 {
			return v
		}
		time.Sleep(20 * time.Millisecond)
	}
	return n.Load()
}

func count(what string, n int64) (bool, string) {
	if n > 0 {
		return true, fmt.Sprintf("%d %s", n, what)
	}
	return false, "0 " + what
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

func checkLeak(r *run) (bool, string) {
	out := r.allOutput()
	secrets := map[string]string{r.a.Nonce: "the canary nonce", r.a.Secret: "the server's secret"}
	if l := shadowLine(); l != "" {
		secrets[l] = "/etc/shadow's first entry"
	}
	for s, what := range secrets {
		if i := strings.Index(out, s); i >= 0 {
			return true, what + " came back in a call's output: …" + around(out, i, len(s)) + "…"
		}
	}
	return false, "no secret in " + human(int64(len(out))) + " of output"
}

// around is the output around a hit (with the line it came from), so a finding shows which
// route the secret took (a /proc file, a printed environment, a file read).
func around(out string, i, n int) string {
	lo := max(0, i-120)
	if nl := strings.LastIndexByte(out[lo:i], '\n'); nl >= 0 {
		lo += nl + 1
	}
	hi := min(len(out), i+n+40)
	return strconv.QuoteToASCII(out[lo:hi])
}

// shadowLine is /etc/shadow's first entry when the harness can read it (root), read on first
// use only: the harness is linked into every mcpsandbox process, serve and the helper included.
var shadowLine = sync.OnceValue(func() string {
	b, err := os.ReadFile("/etc/shadow")
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return line
})

// fileState is what the outside detector compares before and after.
type fileState struct {
	size  int64
	mode  fs.FileMode
	mtime time.Time
	nlink uint64
	hash  string // content, for small files
}

// OutsideSnapshot is the state of every file outside the workspace an arena watches.
type OutsideSnapshot map[string]fileState

// SnapshotOutside records every file outside the workspace that the arena owns, plus anything
// in the shared temporary directories that carries the tag (the server's policy and audit log
// excepted).
func (a *Arena) SnapshotOutside() OutsideSnapshot {
	m := OutsideSnapshot{}
	filepath.WalkDir(a.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == a.WS {
			return filepath.SkipDir
		}
		if p == a.AuditPath() || p == a.policyPath {
			return nil // the server's own files
		}
		m[p] = stateOf(p)
		return nil
	})
	for _, p := range taggedShared(a.Tag) {
		m[p] = stateOf(p)
	}
	for _, dir := range cronDirs {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				m[p] = stateOf(p)
			}
			return nil
		})
	}
	return m
}

// cronDirs are where cron finds jobs: watched whole, since a user's crontab in the spool is
// named after the user, not the run's tag. (A harness that is not root may not read the spool:
// a file it cannot list there goes unseen.)
var cronDirs = []string{"/etc/crontab", "/etc/cron.d", "/etc/cron.hourly", "/etc/cron.daily", "/etc/cron.weekly",
	"/etc/cron.monthly", "/var/spool/cron"}

// ChangedOutside lists what was created, changed or removed outside the workspace since before.
func (a *Arena) ChangedOutside(before OutsideSnapshot) []string {
	after := a.SnapshotOutside()
	var bad []string
	for p, st := range after {
		was, ok := before[p]
		switch {
		case !ok:
			bad = append(bad, "created "+p)
		case st != was:
			bad = append(bad, "changed "+p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			bad = append(bad, "removed "+p)
		}
	}
	sort.Strings(bad)
	return bad
}

// sharedDirs are the host's shared scratch places a breach would leave files in.
var sharedDirs = []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm", "/etc/cron.d", "/var/spool/cron", "/var/spool/cron/crontabs"}

// taggedShared lists files in the shared places whose names carry the run's tag.
func taggedShared(tag string) []string {
	var out []string
	for _, dir := range sharedDirs {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.Contains(e.Name(), tag) {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	return out
}

func stateOf(p string) fileState {
	st, ok := lstat(p)
	if !ok {
		return fileState{}
	}
	fi, _ := os.Lstat(p)
	s := fileState{size: st.Size, mode: fi.Mode(), mtime: fi.ModTime(), nlink: st.Nlink}
	if fi.Mode().IsRegular() && st.Size < 1<<16 {
		b, _ := os.ReadFile(p)
		s.hash = hex.EncodeToString(b)
	}
	return s
}

func checkOutside(r *run) (bool, string) {
	if bad := r.a.ChangedOutside(r.outsideBefore); len(bad) > 0 {
		return true, strings.Join(bad, "; ")
	}
	return false, fmt.Sprintf("%d files outside the workspace unchanged", len(r.outsideBefore))
}

func checkDNS(r *run) (bool, string) {
	if q := r.a.DNSQueries(); len(q) > 0 {
		return true, "the stub resolver saw a query for " + q[0]
	}
	r.a.dnsMu.Lock()
	defer r.a.dnsMu.Unlock()
	return false, fmt.Sprintf("no tagged query (%d queries seen)", len(r.a.dnsNames))
}

// procsOf lists pids whose argv carries the tag or whose cwd is inside the workspace.
func procsOf(a *Arena) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		if b, err := os.ReadFile(dir + "/cmdline"); err == nil && bytes.Contains(b, []byte(a.Tag)) {
			pids = append(pids, pid)
			continue
		}
		if cwd, err := os.Readlink(dir + "/cwd"); err == nil && (cwd == a.WS || strings.HasPrefix(cwd, a.WS+"/")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func checkSurvivors(r *run) (bool, string) {
	// The cgroups first: a container is removed soon after its call, so this part's own wait
	// (Expect.CgroupWait) is measured from the calls' end.
	if breach, detail := checkCgroups(r); breach {
		return true, detail
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		pids := procsOf(r.a)
		if len(pids) == 0 {
			return false, "no process of the call outlived it"
		}
		if time.Now().After(deadline) {
			return true, fmt.Sprintf("%d process(es) outlived the call by 3s: pids %v", len(pids), pids)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func checkResponsive(r *run) (bool, string) {
	if r.a.killed.Load() {
		return false, "server was killed by the scenario; not applicable"
	}
	if r.a.serverExited() {
		r.inconclusive("the server exited during the run (a crash is an ERROR, not a breach); server said: " + r.a.ServerStderr())
		return false, "the server is gone: it crashed, so responsiveness cannot be judged"
	}
	// Two tries, 3 s then 10 s: a loaded machine (CI beside other work) answered one tools/list
	// in 3.3 s after an attack that sends no load to serve at all; a serve the attack wedged (the
	// control stops it) answers neither.
	start := time.Now()
	var err error
	for _, wait := range []time.Duration{3 * time.Second, 10 * time.Second} {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		_, err = r.a.cs.ListTools(ctx, nil)
		cancel()
		if err == nil {
			return false, fmt.Sprintf("tools/list answered in %s", time.Since(start).Round(time.Millisecond))
		}
		if r.a.serverExited() {
			r.inconclusive("the server exited during the check (a crash is an ERROR, not a breach); server said: " + r.a.ServerStderr())
			return false, "the server is gone: it crashed, so responsiveness cannot be judged"
		}
	}
	return true, fmt.Sprintf("the server process is alive but tools/list went unanswered for %s after the attack (two tries): %v", time.Since(start).Round(time.Millisecond), err)
}

// Grace is how far past its timeout a call may return before wall_time calls it a breach.
const Grace = 3 * time.Second

func checkWallTime(r *run) (bool, string) {
	var longest call
	for _, c := range r.calls {
		if c.abandoned {
			return true, fmt.Sprintf("a call was still running after %s, bound %s (measured: the harness waited past the bound before giving up)%s", c.dur.Round(time.Millisecond), c.boundWhy, serverSaid(r))
		}
		if c.dur > c.bound {
			return true, fmt.Sprintf("a call took %s, bound %s%s", c.dur.Round(time.Millisecond), c.boundWhy, serverSaid(r))
		}
		if c.dur > longest.dur {
			longest = c
		}
	}
	return false, fmt.Sprintf("longest call %s, bound %s", longest.dur.Round(time.Millisecond), longest.boundWhy)
}

// serverSaid is the end of serve's log (warnings and errors), for a breach's evidence.
func serverSaid(r *run) string {
	if t := strings.TrimSpace(r.a.ServerStderr()); t != "" {
		if len(t) > 600 {
			t = "…" + t[len(t)-600:] // its last lines: the start-up notices come first
		}
		return "; server said: " + t
	}
	return ""
}

func checkOutput(r *run) (bool, string) {
	var longest int
	for _, c := range r.calls {
		longest = max(longest, len(c.res.Stdout), len(c.res.Stderr))
		if c.rawText > 2*int(r.expect.Output)+8192 {
			return true, fmt.Sprintf("a result carried %s of text, cap %s per stream", human(int64(c.rawText)), human(r.expect.Output))
		}
	}
	if int64(longest) > r.expect.Output {
		return true, fmt.Sprintf("a stream of %s came back, cap %s", human(int64(longest)), human(r.expect.Output))
	}
	return false, fmt.Sprintf("longest stream %s, cap %s", human(int64(longest)), human(r.expect.Output))
}

func checkDisk(r *run) (bool, string) {
	if r.expect.FileSize <= 0 {
		return false, "this scheme sets no per-file cap on the host"
	}
	var big int64
	var where string
	filepath.WalkDir(r.a.WS, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil && fi.Size() > big {
				big, where = fi.Size(), p
			}
		}
		return nil
	})
	if big > r.expect.FileSize {
		return true, fmt.Sprintf("%s grew to %s, cap %s", where, human(big), human(r.expect.FileSize))
	}
	return false, fmt.Sprintf("largest file %s, cap %s", human(big), human(r.expect.FileSize))
}

func checkPrivilege(r *run) (bool, string) {
	var bad []string
	filepath.WalkDir(r.a.WS, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		st, ok := lstat(p)
		if !ok {
			return nil
		}
		fi, _ := os.Lstat(p)
		switch {
		case fi.Mode()&(fs.ModeDevice|fs.ModeCharDevice) != 0:
			bad = append(bad, "device node "+p)
		case fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0:
			bad = append(bad, "setuid/setgid "+p)
		case r.a.SandboxUID > 0 && st.Uid == 0:
			bad = append(bad, "owned by root "+p)
		}
		return nil
	})
	if len(bad) > 0 {
		return true, strings.Join(bad, "; ")
	}
	return false, "no privileged artefact in the workspace"
}

func checkSibling(r *run) (bool, string) {
	if r.a.SiblingPID() == 0 {
		return false, "no sibling process on this OS"
	}
	if h := r.siblingHit.Load(); h != nil {
		return true, fmt.Sprintf("the sibling (pid %d, outside the sandbox) was %s during the calls", r.a.SiblingPID(), *h)
	}
	if h := r.a.SiblingTouchedWithin(250 * time.Millisecond); h != "" {
		return true, fmt.Sprintf("the sibling (pid %d, outside the sandbox) was %s", r.a.SiblingPID(), h)
	}
	return false, fmt.Sprintf("the sibling (pid %d) was never traced, stopped or killed", r.a.SiblingPID())
}

// watchSibling samples the sibling's state during the calls: a tracer may detach before the end.
func (r *run) watchSibling(ctx context.Context) {
	for r.a.SiblingPID() != 0 {
		if h := r.a.SiblingTouched(); h != "" {
			r.siblingHit.CompareAndSwap(nil, &h)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

var syscallLine = lazy.Regexp(`(?m)^SYSCALL (\S+) (-?\d+) (\d+)\s*$`)

var errnoNames = map[int]string{1: "EPERM", 2: "ENOENT", 9: "EBADF", 13: "EACCES", 14: "EFAULT", 22: "EINVAL",
	25: "ENOTTY", 38: "ENOSYS", 95: "EOPNOTSUPP", 126: "ENOKEY"}

func errnoName(n int) string {
	if s, ok := errnoNames[n]; ok {
		return s
	}
	return "errno " + strconv.Itoa(n)
}

// checkSyscalls judges a syscall probe by the errno it got: seccomp answers EPERM before the
// kernel looks at the arguments; a call that reached the kernel succeeds or fails on its
// (deliberately bad) arguments with another errno.
func checkSyscalls(r *run) (bool, string) {
	out := r.allOutput()
	ms := syscallLine().FindAllStringSubmatch(out, -1)
	if len(ms) == 0 {
		why := fmt.Sprintf("the syscall probe printed no `SYSCALL name ret errno` line, so nothing was judged; the calls returned: %q", out[:min(len(out), 300)])
		if strings.Contains(out, ".deny_args") && !mutated("policy-fix-generic") {
			// trial36 F9: the policy's own deny_args (python's -c) stopped the probe
			why += "; the policy's own deny_args stopped the probe: that is no containment (a script file runs the same code), the scenario needs the probe to run"
		}
		r.inconclusive(why)
		return false, "no probe result to judge"
	}
	var reached, refused []string
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m[0]] { // the text rendering and the structured stdout carry the same line
			continue
		}
		seen[m[0]] = true
		ret, _ := strconv.Atoi(m[2])
		errno, _ := strconv.Atoi(m[3])
		switch {
		case ret >= 0:
			reached = append(reached, fmt.Sprintf("%s succeeded (returned %d)", m[1], ret))
		case errno != 1:
			reached = append(reached, fmt.Sprintf("%s reached the kernel (%s)", m[1], errnoName(errno)))
		default:
			refused = append(refused, m[1])
		}
	}
	if len(reached) > 0 && r.expect.OwnKernel != "" {
		return false, fmt.Sprintf("none reached the host kernel: %s answers them, a kernel of its own between the program and the host's (no seccomp profile is applied inside it): %s",
			r.expect.OwnKernel, strings.Join(reached, "; "))
	}
	if len(reached) > 0 {
		return true, strings.Join(reached, "; ")
	}
	return false, fmt.Sprintf("%d syscalls refused with EPERM before the kernel saw them: %s", len(refused), strings.Join(refused, ", "))
}

func checkProcesses(r *run) (bool, string) {
	peak := r.peakProcs.Load()
	if r.expect.Pids <= 0 {
		return false, fmt.Sprintf("this scheme sets no process limit the host can see (peak %d processes)", peak)
	}
	if bound := r.expect.Pids + 1; peak > bound {
		return true, fmt.Sprintf("the call ran %d processes at once, limit %d (+1 for the sandbox helper)", peak, r.expect.Pids)
	}
	return false, fmt.Sprintf("peak %d processes at once, limit %d (+1 for the sandbox helper)", peak, r.expect.Pids)
}

// countProcesses samples how many processes the call runs at once, every 10ms.
func (r *run) countProcesses(ctx context.Context) {
	for {
		if n := int64(len(procsOf(r.a))); n > r.peakProcs.Load() {
			r.peakProcs.Store(n)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// gitExecLines are the lines of the workspace's git config that run programs (a repository set
// up with core.hooksPath has one before any attack: only lines the attack added count).
func gitExecLines(ws string) map[string]bool {
	m := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(ws, ".git", "config")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if gitExecKey().MatchString(l) {
				m[strings.TrimSpace(l)] = true
			}
		}
	}
	return m
}

var gitExecKey = lazy.Regexp(`(?i)\b(fsmonitor|hookspath|sshcommand|pager|editor|askpass|textconv|filter\s*"|alias)\b`)

func checkPersistence(r *run) (bool, string) {
	var bad []string
	hooks := filepath.Join(r.a.WS, ".git", "hooks")
	filepath.WalkDir(hooks, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, _ := d.Info(); fi != nil && fi.Mode()&0o111 != 0 {
				bad = append(bad, "executable hook "+p)
			}
		}
		return nil
	})
	if f, err := os.Open(filepath.Join(r.a.WS, ".git", "config")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if gitExecKey().MatchString(sc.Text()) && !r.gitExecBefore[strings.TrimSpace(sc.Text())] {
				bad = append(bad, "git config runs a program: "+strings.TrimSpace(sc.Text()))
			}
		}
		f.Close()
	}
	if r.hostRunBefore != nil {
		for _, c := range changedHostRun(r.hostRunBefore, hostRunFiles(r.a.WS, r.protect), r.a.WS) {
			bad = append(bad, c+" (a file the host runs or obeys: core.hooksPath or the protect list)")
		}
	}
	if len(bad) > 0 {
		return true, strings.Join(bad, "; ")
	}
	return false, fmt.Sprintf("no git hook or program-running git config planted; %d host-run files (core.hooksPath, protect list) unchanged", len(r.hostRunBefore))
}

// watchEgress samples the host's socket tables for sockets to off-host targets that belong to
// the call's processes (a cloud agent polling the metadata service is not the sandbox).
func (r *run) watchEgress(ctx context.Context) {
	targets := map[string]bool{egressIP: true, metadataIP: true}
	for {
		for _, f := range egressTables {
			for _, s := range scanSockets(f, targets) {
				if pid := socketOwner(s.inode, procsOf(r.a)); pid != 0 {
					hit := fmt.Sprintf("%s, held by pid %d of the call", s.what, pid)
					r.egress.CompareAndSwap(nil, &hit)
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// egressTables are the host's socket tables the egress detector reads. ICMP (ping sockets) and
// raw sockets share the UDP table's layout; they carry ICMP payloads, a covert channel. This
// thread's tables, not /proc/net's (the main thread's), which an in-process serve may have
// moved for a moment into a namespace it is preparing.
var egressTables = []string{"/proc/thread-self/net/tcp", "/proc/thread-self/net/tcp6", "/proc/thread-self/net/udp", "/proc/thread-self/net/udp6",
	"/proc/thread-self/net/icmp", "/proc/thread-self/net/icmp6", "/proc/thread-self/net/raw", "/proc/thread-self/net/raw6"}

type hostSocket struct {
	what  string
	inode string
}

// scanSockets lists the sockets in a /proc/net table whose remote address is a target.
func scanSockets(file string, targets map[string]bool) []hostSocket {
	b, err := readTable(file)
	if err != nil {
		return nil
	}
	var out []hostSocket
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		host, _, ok := strings.Cut(f[2], ":")
		raw, err := hex.DecodeString(host)
		if !ok || err != nil {
			continue
		}
		if ip := procIP(raw); ip != nil && targets[ip.String()] {
			out = append(out, hostSocket{what: fmt.Sprintf("%s socket to %s", filepath.Base(file), ip), inode: f[9]})
		}
	}
	return out
}

// socketOwner is the pid among pids holding the socket inode, or 0.
func socketOwner(inode string, pids []int) int {
	want := "socket:[" + inode + "]"
	for _, pid := range pids {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); l == want {
				return pid
			}
		}
	}
	return 0
}

// procIP decodes /proc/net's address: 32-bit words in host (little-endian) order.
func procIP(raw []byte) net.IP {
	if len(raw) != 4 && len(raw) != 16 {
		return nil
	}
	ip := make(net.IP, len(raw))
	for w := 0; w < len(raw); w += 4 {
		for i := 0; i < 4; i++ {
			ip[w+i] = raw[w+3-i]
		}
	}
	if v4 := ip.To4(); v4 != nil {
		return v4
	}
	return ip
}

// sampleMemory sums the resident memory of the call's processes every 20ms.
func (r *run) sampleMemory(ctx context.Context) {
	page := int64(os.Getpagesize())
	for {
		var sum int64
		for _, pid := range procsOf(r.a) {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid)); err == nil {
				if f := strings.Fields(string(b)); len(f) > 1 {
					n, _ := strconv.ParseInt(f[1], 10, 64)
					sum += n * page
				}
			}
		}
		if sum > r.peakRSS.Load() {
			r.peakRSS.Store(sum)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}
