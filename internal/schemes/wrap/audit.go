package wrap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	sw "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/sandbox"
	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Rules are the wrap scheme's audit rules. Writes in [wrap].write land directly (no layer, no
// protect list: the server is long-running and its client reads what it writes at once), so what
// a write directory is and holds is the whole of what keeps the server's writes from the host.
var Rules = []verify.Rule{
	{ID: "MS501", Severity: verify.High, Title: "a wrap.write directory is, contains or lies in a system directory (the workspace rule), is or contains a home, or lies in a home's dot directory: the host runs what is written there"},
	{ID: "MS502", Severity: verify.Medium, Title: "a wrap.write directory lies in a repository or holds tool or agent configuration: writes there land directly, unjudged"},
	{ID: "MS503", Severity: verify.Medium, Title: "wrap network = true: the server reaches every host"},
	{ID: "MS504", Severity: verify.Medium, Title: "wrap.read exposes a home or secrets directory"},
	{ID: "MS505", Severity: verify.Low, Title: "a wrap.write directory is not the server's uid's to write (as root: nobody's): every write there fails"},
}

const dataDirFix = "name a directory of data the server needs, outside any home's dot directories, repositories and projects (e.g. ~/mcp-data/NAME), or leave wrap.write empty"

func audit(p *policy.Policy, add verify.Add) {
	w := wrapsec.Of(p)
	home, _ := os.UserHomeDir()
	for i, d := range w.Write {
		key := fmt.Sprintf("wrap.write[%d]", i)
		if !filepath.IsAbs(d) {
			continue // the policy's own check refuses it
		}
		resolved := filepath.Clean(d)
		if r, err := filepath.EvalSymlinks(d); err == nil {
			resolved = r // judged as it resolves too: a link to a home is a home
		}
		if err := policy.CheckWorkspacePath(d, resolved, policy.WorkspaceUse{Key: key, Harm: "the server could write what the host runs", Noun: "directory", OwnFix: true}); err != nil && !mutated("wrap-audit-write") {
			add("MS501", key, "wrap.write: %v", dataDirFix, err)
			continue
		}
		if why := inHome(filepath.Clean(d), resolved); why != "" && !mutated("wrap-audit-write") {
			add("MS501", key, "%s %s: the server writes there directly, and the host reads its configuration and runs its programs from there", dataDirFix, d, why)
			continue
		}
		if why := unjudged(resolved); why != "" && !mutated("wrap-audit-write") {
			add("MS502", key, "%s %s: the server's writes land directly (no transactional layer, no protect list), so it can write what tools run when they work there (hooks, .envrc, conftest.py, CLAUDE.md, editor tasks)", dataDirFix, d, why)
		}
		// Landlock lets the server write there; the directory's owner and mode may not (trial35 F2)
		if note, fix := sw.WriteDirNote(d); note != "" {
			add("MS505", key, "%s", fix, note)
		}
	}
	for i, r := range w.Read {
		if s := sa.ExposedSecrets(r, home); s != "" && filepath.IsAbs(r) {
			add("MS504", fmt.Sprintf("wrap.read[%d]", i), "%s %s: the server reads what is there%s", "remove it, or name only the directory the server needs", filepath.Clean(r), exposes(filepath.Clean(r), s), map[bool]string{true: " (keys in ~/.ssh, credentials in ~/.aws, every client's configuration with the env values it holds)"}[s == home])
		}
	}
	if w.Net().Mode == policy.NetAll {
		add("MS503", "wrap.network", "the server can open connections to any host (and DNS): what it reads can leave the machine", `list the hosts it needs: network = ["api.github.com"]`)
	}
}

// exposes says how a read directory reaches s, a home or a secrets directory: it is, contains,
// or lies in a dot directory of it (trial36 F1: it read "~ lets the server read ~").
func exposes(dir, s string) string {
	what := s
	if home, _ := os.UserHomeDir(); s == home {
		what = "the home directory " + s
	}
	switch {
	case dir == s:
		return "is " + what
	case strings.HasPrefix(s+"/", dir+"/"):
		return "contains " + what
	}
	return "lies in a dot directory of " + what
}

// inHome says how a write directory, as written or as it resolves, reaches a home: the
// rule the workspaces follow (policy.HomeReach; the system directories are
// policy.CheckWorkspacePath's); "" when neither does.
func inHome(paths ...string) string {
	for _, d := range paths {
		if why := policy.HomeReach(d); why != "" {
			return why
		}
	}
	return ""
}

// unjudged says what makes a write directory a place tools run from: it lies in (or is) a
// repository, or holds a name of the workspace's protect list at its top; "" when neither.
func unjudged(d string) string {
	for dir := d; ; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			if dir == d {
				return "is a repository"
			}
			return "lies in the repository at " + dir
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	ents, err := os.ReadDir(d)
	if err != nil {
		return ""
	}
	var found []string
	for _, pat := range policy.DefaultProtect {
		if strings.Contains(pat, "/") { // anchored: a path from the directory's top
			if _, err := os.Lstat(filepath.Join(d, pat)); err == nil {
				found = append(found, pat)
			}
			continue
		}
		re, err := policy.CompileGlob(pat)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if re.MatchString(e.Name()) {
				found = append(found, e.Name())
			}
		}
	}
	if len(found) == 0 {
		return ""
	}
	if len(found) > 3 {
		found = append(found[:3], "…")
	}
	return "holds " + strings.Join(found, ", ")
}
