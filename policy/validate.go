package policy

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"
)

// validate returns every problem; defined reports whether a key was written in the file, so
// sections of schemes not in use are checked only when present.
func (p *Policy) validate(defined func(...string) bool) []Problem {
	var ps []Problem
	add := func(key, msg, fix string, args ...any) {
		ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf(msg, args...), Fix: fix})
	}
	switch {
	case !defined("version"):
		add("version", "missing", "add `version = 1` at the top of the file")
	case p.Version != 1:
		add("version", "version %d is not supported by this mcpsandbox", "use `version = 1` or upgrade mcpsandbox", p.Version)
	}
	if !slices.Contains(Schemes, p.Scheme) {
		if p.Scheme == "" {
			add("scheme", "missing", "add scheme = "+schemeChoices())
		} else {
			add("scheme", "unknown scheme %q", "use "+schemeChoices(), p.Scheme)
		}
	}
	if !ValidName(p.Name) {
		add("name", "%q is not a valid server name", "use letters, digits, '-', '_' or '.', at most 64 characters", p.Name)
	}

	p.Limits.problems(add)
	if p.Audit.Path != "" && !filepath.IsAbs(p.Audit.Path) {
		add("audit.path", "%q is not absolute", `use an absolute path, or "" for the default under $XDG_STATE_HOME`, p.Audit.Path)
	}

	// a section is checked when it is the scheme's, or when the file writes it
	p.eachSection(func(name string, sec Section) {
		if p.Scheme == name || defined(name) {
			ps = append(ps, sec.Validate(p.Scheme == name)...)
		}
	})
	return ps
}

// problems adds each limit outside its range.
func (l Limits) problems(add func(key, msg, fix string, args ...any)) {
	if l.Timeout.Duration <= 0 {
		add("limits.timeout", "must be positive", `use e.g. "30s"`)
	} else if l.Timeout.Duration > MaxTimeout {
		add("limits.timeout", "%s is over the hard maximum of %s", `use at most "10m"`, l.Timeout, MaxTimeout)
	}
	if l.MaxOutputBytes < 1024 || l.MaxOutputBytes > 64<<20 {
		add("limits.max_output_bytes", "%s is outside 1KiB..64MiB", `use e.g. "64KiB"`, l.MaxOutputBytes)
	}
	if l.MaxConcurrent < 1 || l.MaxConcurrent > 256 {
		add("limits.max_concurrent", "%d is outside 1..256", "use e.g. 4", l.MaxConcurrent)
	}
	if l.Memory < 16<<20 {
		add("limits.memory", "%s is below 16MiB: nothing useful starts", `use e.g. "256MiB"`, l.Memory)
	}
	if l.Pids < 1 || l.Pids > 32768 {
		add("limits.pids", "%d is outside 1..32768", "use e.g. 64", l.Pids)
	}
	// written so that NaN (TOML's nan, which compares false with everything) fails too
	if !(l.CPUs > 0 && l.CPUs <= 1024) && !(mutated("policy-cpus-finite") && math.IsNaN(l.CPUs)) {
		add("limits.cpus", "%g is not a number above 0 and at most 1024", "use e.g. 0.5 (half a core)", l.CPUs)
	}
	if l.MaxSessions < 1 || l.MaxSessions > 4096 {
		add("limits.max_sessions", "%d is outside 1..4096", "use e.g. 64", l.MaxSessions)
	}
	if l.SessionIdle.Duration < time.Minute || l.SessionIdle.Duration > 24*time.Hour {
		add("limits.session_idle", "%s is outside 1m..24h", `use e.g. "30m"`, l.SessionIdle)
	}
	if l.MaxConnections < 8 || l.MaxConnections > 8192 {
		add("limits.max_connections", "%d is outside 8..8192", "use e.g. 256", l.MaxConnections)
	}
	if l.EgressConnections < 1 || l.EgressConnections > 1024 {
		add("limits.egress_connections", "%d is outside 1..1024", "use e.g. 32", l.EgressConnections)
	}
	if l.WorkspaceQuota < 1<<20 || l.WorkspaceQuota > 1<<40 {
		add("limits.workspace_quota", "%s is outside 1MiB..1TiB", `use e.g. "256MiB"`, l.WorkspaceQuota)
	}
	if l.MaxFileBytes < 0 || l.MaxFileBytes > MaxFileBytes {
		add("limits.max_file_bytes", "%s is outside 0..%s", `use e.g. "4MiB", or 0 for no file tools`, l.MaxFileBytes, Size(MaxFileBytes))
	}
	if l.OnInterrupt != "discard" && l.OnInterrupt != "commit" {
		add("limits.on_interrupt", "%q is neither \"discard\" nor \"commit\"", `use "discard" (a timed-out call's half-done writes never reach the workspace) or "commit"`, l.OnInterrupt)
	}
}

// CheckLimit says what is wrong with the limit key ("limits.memory") of l, or nil: init judges
// an answer by the policy's own rule as it is given, not at the end.
func (l Limits) CheckLimit(key string) *Problem {
	var pb *Problem
	l.problems(func(k, msg, fix string, args ...any) {
		if k == key && pb == nil {
			pb = &Problem{Key: k, Msg: fmt.Sprintf(msg, args...), Fix: fix}
		}
	})
	return pb
}
