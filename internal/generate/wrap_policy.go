package generate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"github.com/mcpsandbox/mcpsandbox/internal/xdg"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// WrapRecordSuffix names the file init --wrap keeps beside each policy it generates: the
// wrapped entry's place and its exact bytes before and after, so that init --unwrap restores it
// byte for byte. It holds the entry as the client's config did (env values included), so it is
// readable by its owner only.
const WrapRecordSuffix = ".orig.json"

// WrapRecord is one wrapped entry: where it is, and its bytes before and after.
type WrapRecord struct {
	Version  int      `json:"version"`
	Client   string   `json:"client"`
	Scope    string   `json:"scope"`
	Format   string   `json:"format"` // "json" or "toml", as the client's config
	Config   string   `json:"config"` // the client's config file
	Keys     []string `json:"keys"`   // JSON: the keys to the entry; TOML: [table, name]
	Name     string   `json:"name"`
	Policy   string   `json:"policy"`
	Original string   `json:"original"` // the entry's bytes before init --wrap
	Wrapped  string   `json:"wrapped"`  // its bytes as init --wrap wrote them
	// PolicyCreated: init --wrap wrote the policy (else it found one left by an earlier wrap).
	PolicyCreated bool `json:"policy_created"`

	File string `json:"-"` // where this record is kept
}

func (r WrapRecord) String() string {
	where := r.Config
	if len(r.Keys) > 2 {
		where += " (under " + strings.Join(r.Keys[:len(r.Keys)-1], " → ") + ")"
	}
	return fmt.Sprintf("%q in %s", r.Name, where)
}

// PolicyDir is where init --wrap writes its policies: beside init's own policy.
func (w WrapScheme) PolicyDir(e Env) string {
	return filepath.Join(e.ConfigDir, "mcpsandbox", string(w))
}

var unsafeName = lazy.Regexp(`[^A-Za-z0-9._-]+`)

// wrapPolicyPath picks the policy file for a server: one per client, scope and server (and
// project, for a per-project scope: policyBase), never over a policy another wrapped entry uses.
// A policy an earlier init --unwrap left (no record beside it) is used again as it is, the user
// may have widened it, but only for the entry its header names (its config, and its place there,
// and its command): another project's server of the same name gets a policy of its own, and the
// ones passed over are returned, each with why (atk35 F4). Policies named before the project was
// part of the name are looked at too: one written for this entry is used again.
func wrapPolicyPath(dir string, s WrapServer) (path string, reuse bool, passed []PassedPolicy) {
	base, unkeyed := policyBase(s.Target, s.Name)
	bases := []string{base}
	if unkeyed != base {
		bases = append(bases, unkeyed)
	}
	for j, b := range bases {
		for i := 1; ; i++ {
			p := filepath.Join(dir, b+".toml")
			if i > 1 {
				p = filepath.Join(dir, b+"-"+strconv.Itoa(i)+".toml")
			}
			if _, err := os.Lstat(p + WrapRecordSuffix); err == nil {
				continue // another wrapped entry's
			}
			if _, err := os.Lstat(p); err != nil {
				if j == 0 {
					path = p // the first free name of the current scheme
				}
				break
			}
			if why := leftFor(p, s); why != "" {
				passed = append(passed, PassedPolicy{Path: p, Why: why})
				continue
			}
			return p, true, passed
		}
	}
	return path, false, passed
}

// RenderPolicy is the policy init --wrap generates for an entry: the server's name, the
// names of the variables its entry gives it (never their values), no network, nothing to read or
// write beyond what wrap itself grants. [wrap].command stays unset: the entry carries the command.
func (w WrapScheme) RenderPolicy(s WrapServer, path string) ([]byte, error) {
	b := w.renderPolicy(s, path, nil)
	if !slices.Contains(policy.Schemes, string(w)) {
		return b, nil // a build without the wrap scheme: nothing to check it against
	}
	// Variables wrap refuses to pass (PATH, HOME: wrap sets them; LD_*, NODE_OPTIONS: they
	// inject code) are left out of the policy, and it says so.
	dropped := map[string]string{}
	for range 2 {
		_, err := policy.Parse(path, b)
		var pe *policy.Error
		if err == nil || !errors.As(err, &pe) {
			return b, err
		}
		for _, pr := range pe.Problems {
			var i int
			if _, serr := fmt.Sscanf(pr.Key, string(w)+".env[%d]", &i); serr != nil || i >= len(s.EnvNames) {
				return nil, fmt.Errorf("the policy init --wrap generated does not load (a bug in mcpsandbox): %w", err)
			}
			dropped[s.EnvNames[i]] = pr.Msg
		}
		s.EnvNames = slices.DeleteFunc(slices.Clone(s.EnvNames), func(n string) bool { _, ok := dropped[n]; return ok })
		b = w.renderPolicy(s, path, dropped)
	}
	return b, nil
}

func (w WrapScheme) renderPolicy(s WrapServer, path string, dropped map[string]string) []byte {
	var b strings.Builder
	line := commentText{}
	fmt.Fprintf(&b, "# mcpsandbox wrap policy (version 1), written by `mcpsandbox init --wrap` for the server %q\n", s.Name)
	// Where: the file, and the project's key in it for Claude Code's local scope (leftFor reads it)
	// written before the wrapped server's start check: an entry put back after it does not run this (trial39 F6)
	fmt.Fprintf(&b, "# in %s's config %s. Its entry there runs, once wrapped (init says if it put it back):\n", s.Target.Client.Name, line.Replace(s.Target.Where()))
	fmt.Fprintf(&b, "#   mcpsandbox wrap --policy %s -- %s\n", line.Replace(path), line.Replace(s.String()))
	b.WriteString("# Widen it knowingly: `mcpsandbox wrap --explain-denials` names every path or host it refuses.\n")
	undo := s.Target.Spec()
	if p := projectOf(s.Target.Client, s.Target.Scope, s.Target.Path, s.Target.Client.KeyPath); p != "" {
		undo += " --project " + shellword.Quote(p) // init --unwrap restores the given project's entries alone
	}
	fmt.Fprintf(&b, "# Undo: mcpsandbox init --unwrap %s --client %s (restores the entry byte for byte).\n", line.Replace(s.Name), line.Replace(undo))
	b.WriteString("version = 1\n")
	fmt.Fprintf(&b, "scheme  = %s\n", tomlString(string(w)))
	fmt.Fprintf(&b, "name    = %s  # the wrapped server's name\n\n", tomlString(PolicyName(s.Name)))
	b.WriteString("[limits]  # memory and pids are rlimits (cpus is not enforced); timeout bounds each tools/call\n")
	b.WriteString("memory = \"4GiB\"  # address space of each process, not the tree's total: Node's V8 and the Go runtime reserve far more than they use (256MiB stops them at start)\n")
	b.WriteString("pids   = 256     # RLIMIT_NPROC: processes and threads of the server's uid (npx, node and its workers; as root, every process of nobody's counts)\n\n")
	fmt.Fprintf(&b, "[audit]\npath = %s  # JSONL audit of every tools/call (where this init's environment puts it: the client's may differ)\n\n", tomlString(wrapAuditPath()))
	fmt.Fprintf(&b, "[%s]\n", w)
	b.WriteString("# command: unset, the client entry gives it after `--`\n")
	b.WriteString("read    = []     # paths readable besides system dirs and the command's own install dirs\n")
	b.WriteString("write   = []     # dirs writable besides the server's private HOME and /tmp\n")
	fmt.Fprintf(&b, "env     = %s  # variables passed from the client's environment, by name (the entry's env)\n", tomlList(s.EnvNames))
	for _, n := range slices.Sorted(maps.Keys(dropped)) {
		fmt.Fprintf(&b, "# not passed: %s, which the entry sets (%s)\n", n, line.Replace(dropped[n]))
	}
	b.WriteString("network = false  # false | true | [\"api.example.com\", \"host:443\"] (by name, through the egress proxy)\n")
	return []byte(b.String())
}

var badNameRun = lazy.Regexp(`[^A-Za-z0-9_.-]+`)

// PolicyName is a client's server name as a policy's name can hold it (letters, digits, '-',
// '_' and '.', starting with a letter or digit, at most 64): other characters become '-'.
func PolicyName(n string) string {
	n = strings.TrimLeft(badNameRun().ReplaceAllString(n, "-"), "-_.")
	if len(n) > 64 {
		n = n[:64]
	}
	if n == "" {
		return "server"
	}
	return n
}

// commentText makes text fit in a TOML comment: a control character (a newline in an argument)
// becomes '?', so what a comment says stays a comment.
type commentText struct{}

func (commentText) Replace(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

// scopeSuffix is ":scope" when the target is not the client's default scope.
// Spec is the --client value that names the record's client and scope ("vscode:user"), as
// init --wrap's own list names it (trial34 F3: the unwrap list said "vscode", which named
// another scope and restored nothing).
func (r WrapRecord) Spec() string {
	for _, c := range Clients() {
		if c.ID == r.Client {
			return c.ID + scopeSuffix(Target{Client: c, Scope: r.Scope})
		}
	}
	return r.Client + ":" + r.Scope
}

func scopeSuffix(t Target) string {
	if t.Scope == t.Client.Scope() {
		return ""
	}
	return ":" + t.Scope
}

// createExclusive writes a new file, never over one that exists.
func createExclusive(path string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// saveRecord keeps the record beside its policy, readable by its owner only.
func saveRecord(r *WrapRecord) error {
	r.Version = 1
	r.File = r.Policy + WrapRecordSuffix
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(r.File), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(r.File), err)
	}
	mode := os.FileMode(0o600) // it holds the entry's env values
	if mutated("init-wrap-record-readable") {
		mode = 0o644
	}
	return AtomicWrite(r.File, append(b, '\n'), mode)
}

// LoadWrapRecords reads every record in dir, in name order. A record that does not load is an
// error naming it.
func LoadWrapRecords(dir string) ([]WrapRecord, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var out []WrapRecord
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), WrapRecordSuffix) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		var r WrapRecord
		if err := json.Unmarshal(b, &r); err != nil || r.Version != 1 || r.Config == "" || len(r.Keys) == 0 {
			return nil, fmt.Errorf("%s is not a record init --wrap wrote (%v): move it aside", p, err)
		}
		r.File = p
		out = append(out, r)
	}
	return out, nil
}

// wrapAuditPath is the audit log a wrap policy names: the default place as this init sees it,
// not "", which each wrap would resolve in its client's environment (trial32 F10).
func wrapAuditPath() string {
	home, err := os.UserHomeDir()
	if err != nil && xdg.Dir("XDG_STATE_HOME") == "" || mutated("init-audit-path-env") {
		return ""
	}
	return policy.DefaultAuditPath(home)
}
