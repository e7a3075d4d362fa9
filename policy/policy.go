// Package policy is the shared vocabulary of mcpsandbox: the policy file (version 1), its defaults,
// validation with file:line problems, and a canonical hash. It imports no other mcpsandbox package.
package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// Defaults of the boundary limits (see Limits).
const (
	DefaultMaxSessions       = 64
	DefaultSessionIdle       = 30 * time.Minute
	DefaultMaxConnections    = 256
	DefaultEgressConnections = 32
	DefaultWorkspaceQuota    = 256 << 20
	DefaultOnInterrupt       = "discard"
	DefaultMaxFileBytes      = 4 << 20
	// MaxFileBytes is the ceiling of limits.max_file_bytes: a file's base64 must fit in one
	// stdio message (16MiB).
	MaxFileBytes = 10 << 20
)

// MaxTimeout is the hard ceiling on limits.timeout.
const MaxTimeout = 10 * time.Minute

// Policy is policy file version 1.
type Policy struct {
	Version int    `toml:"version" json:"version"`
	Scheme  string `toml:"scheme" json:"scheme"`
	Name    string `toml:"name" json:"name"`
	Limits  Limits `toml:"limits" json:"limits"`
	Audit   Audit  `toml:"audit" json:"audit"`
	// sections are every registered scheme's [table] (SectionOf), each filled with its
	// defaults and whatever the file wrote; only the active scheme's is hashed and saved.
	sections map[string]Section
	// File is the file the policy was loaded from ("" when built in memory): serve checks who
	// could have written it (CheckFileSafe). Not part of the policy's meaning or hash.
	File string `toml:"-" json:"-"`
}

// Limits apply to every scheme.
type Limits struct {
	Timeout        Duration `toml:"timeout" json:"timeout"`
	MaxOutputBytes Size     `toml:"max_output_bytes" json:"max_output_bytes"`
	MaxConcurrent  int      `toml:"max_concurrent" json:"max_concurrent"`
	Memory         Size     `toml:"memory" json:"memory"`
	Pids           int      `toml:"pids" json:"pids"`
	CPUs           float64  `toml:"cpus" json:"cpus"`
	// Bounds on what reaches serve from its clients and sandboxes (issue 22): each has a
	// default, and past each the request is refused with the key's name.
	MaxSessions       int      `toml:"max_sessions" json:"max_sessions"`             // live MCP sessions over HTTP at once
	SessionIdle       Duration `toml:"session_idle" json:"session_idle"`             // a session idle this long is ended, its sandboxes with it
	MaxConnections    int      `toml:"max_connections" json:"max_connections"`       // open HTTP connections at once
	EgressConnections int      `toml:"egress_connections" json:"egress_connections"` // egress proxy connections one sandbox holds at once
	// The transactional workspace (issue 23): what one call may leave behind in the workspace,
	// and what happens to the writes of a call that timed out or was cancelled.
	WorkspaceQuota Size   `toml:"workspace_quota" json:"workspace_quota"`
	OnInterrupt    string `toml:"on_interrupt" json:"on_interrupt"` // "discard" | "commit"
	// MaxFileBytes bounds one file the file tools move (write_file, read_file); 0 = no file
	// tools (issue 27).
	MaxFileBytes Size `toml:"max_file_bytes" json:"max_file_bytes"`
}

// Audit configures the tamper-evident call log.
type Audit struct {
	Path string `toml:"path" json:"path"` // "" = default under the XDG state dir
}

// Default returns a policy with every default filled in for the given scheme.
func Default(scheme string) *Policy {
	p := &Policy{
		Version: 1,
		Scheme:  scheme,
		Name:    "sandbox",
		Limits: Limits{
			Timeout:        Duration{30 * time.Second},
			MaxOutputBytes: 64 << 10,
			MaxConcurrent:  4,
			Memory:         256 << 20,
			Pids:           64,
			CPUs:           0.5,

			MaxSessions:       DefaultMaxSessions,
			SessionIdle:       Duration{DefaultSessionIdle},
			MaxConnections:    DefaultMaxConnections,
			EgressConnections: DefaultEgressConnections,
			WorkspaceQuota:    DefaultWorkspaceQuota,
			OnInterrupt:       DefaultOnInterrupt,
			MaxFileBytes:      DefaultMaxFileBytes,
		},
	}
	p.sections = newSections()
	p.eachSection(func(_ string, s Section) { s.Defaults() })
	p.schemeLimitDefaults(func(...string) bool { return false })
	return p
}

// Hash is the sha256 (hex) of the effective policy: the common sections plus the active scheme's
// section, in a canonical JSON form, so two files that mean the same thing hash the same.
func (p *Policy) Hash() string {
	eff := struct {
		Version int    `json:"version"`
		Scheme  string `json:"scheme"`
		Name    string `json:"name"`
		Limits  Limits `json:"limits"`
		Audit   Audit  `json:"audit"`
		Section any    `json:"section"`
	}{p.Version, p.Scheme, p.Name, p.Limits, p.Audit, nil}
	if sec := p.Section(); sec != nil {
		eff.Section = sec.Payload()
	}
	b, _ := json.Marshal(eff) // cannot fail: plain data types only
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// interpreters are programs that run whatever code, script or program they are given, or write
// wherever their input (not their arguments) says: sed (its e and w commands), tar, cpio, zip,
// unzip, rsync and patch (archive and diff contents name the files written; some run programs),
// pagers and man (a shell escape). Allowlisting one allows anything, whatever else the allowlist
// says; the argument check cannot see inside a script or an archive.
var interpreters = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`python pypy node nodejs deno bun ruby perl php lua luajit tclsh wish R Rscript
		julia bash sh dash zsh ksh mksh fish csh tcsh busybox awk gawk mawk nawk env xargs nohup timeout nice
		stdbuf make gdb vi vim nvim emacs ed ex git ssh docker podman kubectl sudo su doas find parallel watch
		script expect
		sed tar cpio zip unzip rsync patch less more man`) {
		interpreters[n] = true
	}
}

// InterpreterNames lists the interpreter and program-runner names IsInterpreter knows, sorted.
func InterpreterNames() []string {
	out := make([]string, 0, len(interpreters))
	for n := range interpreters {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// IsInterpreter reports whether a command name (or a binary's base name) is an interpreter or
// program runner; version suffixes count ("python3.11", "perl5").
func IsInterpreter(name string) bool {
	return interpreters[strings.TrimRight(name, "0123456789.")]
}

// Clone is a deep copy: changing the copy's lists or maps never reaches p.
func (p *Policy) Clone() *Policy {
	c := *p
	c.sections = make(map[string]Section, len(p.sections))
	for name, s := range p.sections {
		c.sections[name] = s.Copy()
	}
	return &c
}
