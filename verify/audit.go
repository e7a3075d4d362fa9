// Package verify audits a policy statically, checks the host, and explains which threats the
// policy's layers enforce on this host. The adversarial replay itself lives in harness.
package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/serve/allowlist"
)

// Severity orders findings.
type Severity string

// Severities, most serious first.
const (
	High   Severity = "high"
	Medium Severity = "medium"
	Low    Severity = "low"
	Info   Severity = "info"
)

// Finding is one static audit result. Rule ids are stable: scripts may filter on them.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Key      string   `json:"key"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix"`
}

// Rule describes one audit rule.
type Rule struct {
	ID       string
	Severity Severity
	Title    string
}

// Rules lists every rule the audit applies, for `verify --rules` and the README.
var Rules = []Rule{
	{"MS101", High, "an interpreter or program runner is allowlisted: arbitrary code"},
	{"MS102", High, "an allowlisted binary, or a directory above it, is writable by someone other than root"},
	{"MS103", High, "an allowlisted binary is missing or no longer matches its pinned sha256"},
	{"MS104", High, "allowlist.env passes a secret-looking variable to commands"},
	{"MS105", High, "the workspace is, or contains, a home directory or a system directory"},
	{"MS106", Medium, "the workspace is world-writable"},
	{"MS107", Medium, "allowlist network = true"},
	{"MS108", Medium, "allow_outside_paths lets a command's path arguments leave the workspace"},
	{"MS109", Medium, "read_paths exposes a home or secrets directory"},
	{"MS110", Medium, "a command lacks the deny_args its dangerous options need"},
	{"MS111", High, "the workspace does not exist"},
	{"MS201", High, "docker network is not \"none\""},
	{"MS202", High, "docker user is root or unset"},
	{"MS203", Medium, "docker root filesystem is writable (read_only = false)"},
	{"MS204", Medium, "the docker workspace mount is writable"},
	{"MS205", Info, "no gVisor runtime: containers share the host kernel"},
	{"MS301", High, "an E2B API key is written in the policy file"},
	{"MS302", Medium, "E2B sandboxes may reach the internet"},
	{"MS303", Low, "E2B sandboxes are reused for a whole session: calls see each other's files"},
	{"MS401", Low, "timeout above 2 minutes"},
	{"MS402", Low, "output cap above 1MiB"},
	{"MS403", Low, "limits above what one call needs (memory > 2GiB, pids > 512, max_concurrent > 16)"},
	{"MS404", High, "the policy file is writable by others: anyone could loosen it"},
	{"MS405", Low, "the audit log lives in a world-writable directory"},
}

func rule(id string) Rule {
	for _, r := range Rules {
		if r.ID == id {
			return r
		}
	}
	panic("verify: unknown rule " + id) // a programming error, not user input
}

var secretName = regexp.MustCompile(`(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)`)

var e2bKey = regexp.MustCompile(`e2b_[0-9a-zA-Z]{20,}`)

// Audit checks a policy (and, where given, its file's text and path) against every rule.
func Audit(p *policy.Policy, path string) []Finding {
	var fs []Finding
	add := func(id, key, msg, fix string, args ...any) {
		r := rule(id)
		fs = append(fs, Finding{Rule: id, Severity: r.Severity, Key: key, Message: fmt.Sprintf(msg, args...), Fix: fix})
	}
	switch p.Scheme {
	case policy.SchemeAllowlist:
		auditAllowlist(p, add)
	case policy.SchemeDocker:
		d := p.Docker
		if d.Network != "none" {
			add("MS201", "docker.network", "containers join network %q: they can reach the host's network and the internet", `set network = "none"`, d.Network)
		}
		if u, _, _ := strings.Cut(d.User, ":"); d.User == "" || u == "0" || u == "root" {
			add("MS202", "docker.user", "code runs as root in the container (user = %q)", `set user = "65534:65534"`, d.User)
		}
		if !d.ReadOnly {
			add("MS203", "docker.read_only", "code can rewrite the container's filesystem, including its tools", "set read_only = true (a tmpfs /tmp stays writable)")
		}
		if d.Workspace != "" && d.WorkspaceWritable {
			add("MS204", "docker.workspace_writable", "code can write %s on the host", "set workspace_writable = false unless code must write results there", d.Workspace)
		}
		if d.Runtime == "" {
			add("MS205", "docker.runtime", "containers share the host kernel: a kernel bug is an escape", `install gVisor and set runtime = "runsc"`)
		}
	case policy.SchemeE2B:
		if p.E2B.AllowInternet {
			add("MS302", "e2b.allow_internet", "sandboxes can reach the internet: anything they read can leave", "set allow_internet = false")
		}
		if p.E2B.Reuse == "session" {
			add("MS303", "e2b.reuse", "one sandbox serves a whole session: a call sees what earlier calls left", `set reuse = "call" for a fresh sandbox each call`)
		}
	}
	l := p.Limits
	if l.Timeout.Duration > 2*time.Minute {
		add("MS401", "limits.timeout", "a call may run %s", `use "30s" unless calls need longer`, l.Timeout)
	}
	if l.MaxOutputBytes > 1<<20 {
		add("MS402", "limits.max_output_bytes", "a call may return %s per stream into the client's context", `use "64KiB"`, l.MaxOutputBytes)
	}
	if l.Memory > 2<<30 || l.Pids > 512 || l.MaxConcurrent > 16 {
		add("MS403", "limits", "memory %s, pids %d, max_concurrent %d", "use memory <= 2GiB, pids <= 512, max_concurrent <= 16", l.Memory, l.Pids, l.MaxConcurrent)
	}
	if path != "" {
		if b, err := os.ReadFile(path); err == nil && e2bKey.Match(b) {
			add("MS301", "e2b.api_key_env", "%s holds what looks like an E2B API key", "remove it; put the key in the environment variable named by api_key_env", path)
		}
		if st, err := os.Stat(path); err == nil {
			if st.Mode()&0o022 != 0 {
				add("MS404", "", "%s is writable by group or others (mode %v)", "chmod go-w "+path, path, st.Mode().Perm())
			}
		}
	}
	if p.Audit.Path != "" {
		if st, err := os.Stat(filepath.Dir(p.Audit.Path)); err == nil && st.Mode()&0o002 != 0 {
			add("MS405", "audit.path", "%s is in a world-writable directory: others can replace or pre-create the log", "use a directory only you can write, or \"\" for the default", p.Audit.Path)
		}
	}
	slices.SortStableFunc(fs, func(a, b Finding) int { return severityRank(a.Severity) - severityRank(b.Severity) })
	return fs
}

func severityRank(s Severity) int { return slices.Index([]Severity{High, Medium, Low, Info}, s) }

// HasHigh reports whether any finding is high severity.
func HasHigh(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Severity == High })
}

func auditAllowlist(p *policy.Policy, add func(id, key, msg, fix string, args ...any)) {
	a := p.Allowlist
	for i, c := range a.Commands {
		key := fmt.Sprintf("allowlist.commands[%d]", i)
		base := filepath.Base(c.Path)
		if policy.IsInterpreter(c.Name) || policy.IsInterpreter(base) {
			add("MS101", key, "%q (%s) runs whatever code or program it is given: the allowlist pins nothing", "remove it and use the docker scheme for code execution", c.Name, c.Path)
		}
		if err := allowlist.CheckOwnership(c.Path); err != nil && !os.IsNotExist(err) {
			add("MS102", key+".path", "%v", "move the binary to a root-owned, non-writable location and re-pin it", err)
		}
		if sum, err := generate.HashFile(c.Path); err != nil {
			add("MS103", key+".path", "%s cannot be read: %v", "fix the path or re-run mcpsandbox init", c.Path, err)
		} else if sum != c.SHA256 {
			add("MS103", key+".sha256", "%s changed since it was pinned (sha256 %.12s…, pinned %.12s…)", "check why it changed (an upgrade?), then re-pin: sha256sum "+c.Path, c.Path, sum, c.SHA256)
		}
		if c.AllowOutsidePaths {
			add("MS108", key+".allow_outside_paths", "%q may name paths outside the workspace (the kernel layer still confines reads to system dirs)", "remove allow_outside_paths", c.Name)
		}
		for _, want := range generate.DefaultDenyArgs[base] {
			if !slices.Contains(c.DenyArgs, want) {
				add("MS110", key+".deny_args", "%q lacks %q: that option reads or writes files, or runs programs", fmt.Sprintf("add %q to deny_args", want), c.Name, want)
			}
		}
	}
	for k := range a.Env {
		if secretName.MatchString(k) {
			add("MS104", "allowlist.env."+k, "%s is passed to every command: any command that prints its environment leaks it", "remove it from allowlist.env", k)
		}
	}
	if a.Network {
		add("MS107", "allowlist.network", "commands can open sockets: TCP, UDP, DNS and unix sockets on the host", "set network = false")
	}
	home, _ := os.UserHomeDir()
	sensitive := []string{home, "/root", "/home", "/etc", "/usr", "/var", "/bin", "/sbin", "/lib", "/boot", "/proc", "/sys", "/dev"}
	ws := filepath.Clean(a.Workspace)
	for _, s := range sensitive {
		if s != "" && (ws == s || strings.HasPrefix(s+"/", ws+"/")) {
			add("MS105", "allowlist.workspace", "the workspace %s is or contains %s: commands may read and write all of it", "use a dedicated directory such as ~/ai-workspace", ws, s)
			break
		}
	}
	if st, err := os.Stat(ws); err != nil {
		add("MS111", "allowlist.workspace", "%s: %v", "create it: mkdir -p "+ws, ws, err)
	} else if st.Mode()&0o002 != 0 && st.Mode()&os.ModeSticky == 0 {
		add("MS106", "allowlist.workspace", "%s is world-writable (mode %v): any local user can plant files commands will read", "chmod o-w "+ws, ws, st.Mode().Perm())
	}
	for i, r := range a.ReadPaths {
		r = filepath.Clean(r)
		for _, s := range []string{home, "/root", "/home", "/etc"} {
			if s != "" && (r == s || strings.HasPrefix(s+"/", r+"/") || strings.HasPrefix(r, s+"/.")) {
				add("MS109", fmt.Sprintf("allowlist.read_paths[%d]", i), "%s lets commands read %s", "remove it, or name only the directory commands need", r, s)
				break
			}
		}
	}
}
