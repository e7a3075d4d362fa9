// Package verify audits a policy statically, checks the host, and explains which threats the
// policy's layers enforce on this host. The adversarial replay itself lives in harness.
package verify

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/homelinks"
	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"github.com/mcpsandbox/mcpsandbox/policy"
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

// CommonRules apply to every scheme; each scheme adds its own (MS1xx allowlist, MS2xx docker, MS5xx wrap,
// MS3xx e2b) through its Auditor.
var CommonRules = []Rule{
	{"MS301", High, "an E2B API key is written in the policy file"},
	{"MS401", Low, "timeout above 2 minutes"},
	{"MS402", Low, "output cap above 1MiB"},
	{"MS403", Low, "limits above what one call needs (memory > 2GiB, pids > 512, max_concurrent > 16)"},
	{"MS404", High, "the policy file or its directory is writable by others, or owned by another user: serve refuses it"},
	{"MS405", High, "the audit log or a directory above it is writable by others, or owned by another user: serve refuses it"},
	{"MS406", High, "the policy file or the audit log lies inside the workspace or a wrap.write directory, where sandboxed code writes: serve and wrap refuse it"},
	{"MS407", High, "the audit log lies inside allowlist.read_paths, wrap.read or the docker workspace, where sandboxed code reads: serve and wrap refuse it"},
	{"MS408", Medium, "the policy file has the section of another scheme, which serve ignores (scheme changed by hand: its workspace, commands or image do nothing)"},
	{"MS409", High, "the workspace or audit.path lies where this user cannot reach: the policy was written for another user or machine"},
	{"MS410", Medium, "a client config (or another file of your home the host starts programs from) is a link into the workspace: it lives where calls write"},
}

// Add records one finding of rule id at the policy key, with a message and its fix.
type Add func(id, key, msg, fix string, args ...any)

// Auditor is what a scheme contributes to the static audit: its rules, and the check that
// applies them to a policy of that scheme.
type Auditor struct {
	Rules []Rule
	Check func(p *policy.Policy, add Add)
}

// SecretName matches environment variable names that look like they hold a secret.
var SecretName = lazy.Regexp(`(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)`)

var e2bKey = lazy.Regexp(`e2b_[0-9a-zA-Z]{20,}`)

// Audit checks a policy (and, where given, its file's text and path) against the common rules
// and its scheme's.
func Audit(p *policy.Policy, path string, a Auditor) []Finding {
	var fs []Finding
	add := func(id, key, msg, fix string, args ...any) {
		i := slices.IndexFunc(a.Rules, func(r Rule) bool { return r.ID == id })
		r := Rule{ID: id, Severity: High} // an unlisted id is a programming error: shown, never dropped
		if i >= 0 {
			r = a.Rules[i]
		} else if j := slices.IndexFunc(CommonRules, func(r Rule) bool { return r.ID == id }); j >= 0 {
			r = CommonRules[j]
		}
		fs = append(fs, Finding{Rule: id, Severity: r.Severity, Key: key, Message: fmt.Sprintf(msg, args...), Fix: fix})
	}
	if a.Check != nil {
		a.Check(p, add)
	}
	l := p.Limits
	if l.Timeout.Duration > 2*time.Minute {
		add("MS401", "limits.timeout", "a call may run %s", `use "30s" unless calls need longer`, l.Timeout)
	}
	if l.MaxOutputBytes > 1<<20 {
		add("MS402", "limits.max_output_bytes", "a call may return %s per stream into the client's context", `use "64KiB"`, l.MaxOutputBytes)
	}
	// above what one call needs, or what the scheme's own defaults give (wrap's 4GiB and 256 pids
	// for a whole runtime, which init writes: flagged as too much, trial34 F8)
	maxMem, maxPids := policy.Size(2<<30), 512
	if def := policy.Default(p.Scheme); def != nil {
		maxMem, maxPids = max(maxMem, def.Limits.Memory), max(maxPids, def.Limits.Pids)
	}
	if l.Memory > maxMem || l.Pids > maxPids || l.MaxConcurrent > 16 {
		add("MS403", "limits", "memory %s, pids %d, max_concurrent %d", fmt.Sprintf("use memory <= %s, pids <= %d, max_concurrent <= 16", maxMem, maxPids), l.Memory, l.Pids, l.MaxConcurrent)
	}
	if path != "" {
		b, err := os.ReadFile(path)
		if err == nil && e2bKey().Match(b) {
			add("MS301", "e2b.api_key_env", "%s holds what looks like an E2B API key", "remove it; put the key in the environment variable named by api_key_env", path)
		}
		if err == nil {
			unusedSections(p, b, add)
		}
		// The same judgement serve makes at start-up, so the checker agrees with the enforcer.
		if err := policy.CheckFileSafe(path); err != nil && !os.IsNotExist(errors.Unwrap(err)) {
			refused(add, "MS404", "", "serve refuses it until then", "make the file and every directory above it writable only by you or root (serve refuses it until then)", err)
		}
	}
	// The same judgement serve makes at start-up.
	auditPath := p.Audit.Path
	if auditPath == "" {
		auditPath, _ = audit.DefaultPath()
	}
	if err := policy.CheckOwnFiles(p.WorkspaceDir(), path, auditPath); err != nil {
		refused(add, "MS406", ownKey(err), "serve and wrap refuse it", "keep the policy and the audit log outside the workspace", err)
	}
	for _, d := range p.WriteDirs() {
		if err := policy.CheckOwnFilesIn(d, "the wrap.write directory", "the wrapped server writes", path, auditPath); err != nil {
			refused(add, "MS406", ownKey(err), "serve and wrap refuse it", "keep the policy and the audit log outside every directory sandboxed code writes", err)
		}
	}
	if key, dirs := p.ReadDirs(); len(dirs) > 0 {
		if err := policy.CheckAuditNotReadIn(dirs, key, auditPath); err != nil {
			refused(add, "MS407", "audit.path", "serve and wrap refuse it", "keep the audit log outside every directory sandboxed code reads", err)
		}
	}
	if ws := p.WorkspaceDir(); ws != "" && !mutated("verify-client-config-into-workspace") {
		homeLinksInto(p.Scheme+".workspace", ws, add)
	}
	// The same judgement serve makes as it opens the log (atk35 F5); a log not made yet, by the
	// directory it will be made in (a sticky one, as /tmp, is serve's to make it in).
	if _, err := os.Lstat(auditPath); err == nil {
		if err := policy.CheckAuditPlaceSafe(auditPath); err != nil {
			refused(add, "MS405", "audit.path", "serve and wrap refuse it", "make the log and every directory above it writable only by you or root, or use \"\" for the default", err)
		}
	} else if st, err := os.Stat(filepath.Dir(auditPath)); err == nil && st.Mode()&0o002 != 0 && st.Mode()&os.ModeSticky == 0 {
		add("MS405", "audit.path", "%s is to be made in a directory everyone may write: serve refuses it", "use a directory only you can write, or \"\" for the default", auditPath)
	}
	fs = foreign(p, path, fs)
	slices.SortStableFunc(fs, func(a, b Finding) int { return severityRank(a.Severity) - severityRank(b.Severity) })
	return fs
}

// foreign says once, plainly, that the policy was written for another user or machine when its
// workspace or audit.path lies where this user cannot reach, in place of what each other rule
// found at those keys ("permission denied … create it: mkdir -p" in someone else's home, trial38 F1).
func foreign(p *policy.Policy, path string, fs []Finding) []Finding {
	fps := p.ForeignPaths()
	if len(fps) == 0 || mutated("verify-foreign-policy") {
		return fs
	}
	keys := map[string]bool{}
	for _, f := range fps {
		keys[f.Key] = true
	}
	fs = slices.DeleteFunc(fs, func(f Finding) bool { return keys[f.Key] })
	err := policy.ForeignError(path, fps)
	msg, fix, _ := strings.Cut(err.Error(), ". Make ")
	fix = "make " + fix
	key := fps[0].Key
	if len(fps) > 1 {
		key = fps[0].Key + ", " + fps[1].Key
	}
	return append(fs, Finding{Rule: "MS409", Severity: High, Key: key, Message: msg, Fix: fix})
}

// refused records serve's refusal err of the policy's own files under rule id. One that carries
// its own concrete fix (policy.FixError: chmod o-w FILE, move the policy) shows that fix once,
// on the finding's fix line, and its problem with who refuses it as the message; any other error
// (the file cannot be read) shows whole, with the rule's general fix.
// ownKey is the key an MS406 finding names: audit.path for the audit log, none for the policy
// file (no key of the policy places it; it was labelled audit.path, trial36 F9).
func ownKey(err error) string {
	if strings.HasPrefix(err.Error(), "the policy file ") && !mutated("policy-fix-generic") {
		return ""
	}
	return "audit.path"
}

func refused(add Add, id, key, who, fix string, err error) {
	var fe *policy.FixError
	if errors.As(err, &fe) {
		add(id, key, "%s; %s", fe.Fix, fe.Problem, who)
		return
	}
	add(id, key, "%v", fix, err)
}

func severityRank(s Severity) int { return slices.Index([]Severity{High, Medium, Low, Info}, s) }

// HasHigh reports whether any finding is high severity.
func HasHigh(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Severity == High })
}

// unusedSections: a [NAME] table of a scheme other than the policy's is decoded and ignored, so a
// scheme changed by hand (scheme = "docker" over an allowlist policy) silently drops the
// workspace and commands the file still shows.
func unusedSections(p *policy.Policy, text []byte, add Add) {
	if mutated("verify-unused-section") {
		return
	}
	for _, o := range policy.OtherSections(text, p.Scheme) {
		what, fix := o.Says(p.Scheme)
		add("MS408", o.Name, "%s", fix, what)
	}
}

// homeLinksInto adds MS410 for each file of this user's home that is a link into the workspace
// ws (a dotfiles directory used as the workspace: ~/.cursor/mcp.json -> dots/cursor/mcp.json):
// the client reads what a call there writes as the command it starts on the host at its next
// start (atk40 F6). serve protects such files from calls (internal/homelinks); verify names them,
// since the safe layout keeps them out of the workspace.
func homeLinksInto(key, ws string, add Add) {
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return
	}
	homes := homelinks.Homes(-1)
	if len(homes) == 0 {
		return
	}
	f := homelinks.Find(homes[:1], real)
	targets := slices.Sorted(maps.Keys(f.Targets))
	for _, t := range targets {
		name := f.Targets[t]
		link := filepath.Join(homes[0], strings.TrimPrefix(name, "~/"))
		add("MS410", key, "%s is a link to %s, in the workspace: the host reads it (a client's config says which servers it starts) where calls write; serve protects it from calls, "+
			"but one rule is all that keeps a call's write_file from deciding what your client starts",
			fmt.Sprintf("keep it out of the workspace: replace the link with the file (cp --remove-destination %s %s), or use a workspace that does not hold your dotfiles", shellword.Quote(t), shellword.Quote(link)),
			name, t)
	}
	if f.Cut {
		add("MS410", key, "your home has more than %d entries where clients keep their configs: links past them were not looked at", "look at the rest by hand: ls -l ~/.* ~/.config/*", homelinks.MaxEntries)
	}
	if f.Short && !mutated("verify-ms410-short") {
		// past the known places a link into the workspace is not seen by serve either (atk41 F5)
		add("MS410", key, "your home has more than %d entries in its dot-directories (the walk stopped in %s): its client configs and start files were looked at whole, but a link into the workspace past the bound is seen neither here nor by serve, which then lets calls rewrite what it leads to",
			fmt.Sprintf("look at the rest by hand (find ~/.[!.]* -type l -lname %s), and keep a dotfile you link into the workspace in its protect list; or move the bulky directory out of the home", shellword.Quote(real+"/*")),
			homelinks.MaxEntries, f.CutAt)
	}
}
