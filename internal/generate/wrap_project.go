package generate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Wrap state (a policy's name, its reuse, the records init --unwrap restores from) is named by
// client, scope and server name, which are unique within one config file; a per-project scope has
// one file (or one key of ~/.claude.json) in every project, each of which may hold a server of
// the same name (atk35 F4, F8). What follows keys that state by the project too.

// PerProject reports whether the target's config, or its place in it, is the project's: a path
// under {project} (a project's .mcp.json, .cursor/mcp.json, .vscode/mcp.json,
// .gemini/settings.json), or a key naming the project (Claude Code's local scope in ~/.claude.json).
func (t Target) PerProject() bool {
	return projectOf(t.Client, t.Scope, t.Path, t.Client.KeyPath) != ""
}

// projectOf is the project a config (and the keys to its servers) belongs to: the directory its
// scope's path pattern puts at {project}, or the key its scope's keys name the project by; ""
// when the scope is not per project.
func projectOf(c Client, scope, config string, keys []string) string {
	if rest, ok := strings.CutPrefix(c.Paths[scope], "{project}"); ok {
		return strings.TrimSuffix(config, filepath.FromSlash(rest))
	}
	for i, k := range c.Keys[scope] {
		if (k == "{project}" || k == "{repo}") && i < len(keys) {
			return keys[i]
		}
	}
	return ""
}

// Project is the project directory the record's entry belongs to, for a per-project scope (""
// otherwise): init --unwrap --project DIR restores it.
func (r WrapRecord) Project() string {
	for _, c := range Clients() {
		if c.ID == r.Client {
			return projectOf(c, r.Scope, r.Config, r.Keys)
		}
	}
	return ""
}

// Holds reports whether the record is of an entry in this target's config: the same client and
// scope and, for a per-project target, the same file (by path, or device and inode) and the same
// place in it (Claude Code's local scope: this project's key). Another project's entry of the
// same name is not this target's to restore (atk35 F8).
func (t Target) Holds(r WrapRecord) bool {
	if r.Client != t.Client.ID || r.Scope != t.Scope {
		return false
	}
	if !t.PerProject() || mutated("unwrap-other-projects") {
		return true
	}
	return len(r.Keys) > 0 && sameFile(r.Config, t.Path) && slices.Equal(r.Keys[:len(r.Keys)-1], t.Client.keyPath())
}

// sameFile: the same path, or two paths to one file.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// policyBase is the name (without .toml) of a server's wrap policy: client, scope (when not
// the client's default) and server name, and for a per-project target the project too: its
// directory's base name, for the reader, and a hash of the project and the config, so that two
// projects' servers of one name never share a name.
func policyBase(t Target, name string) (base, unkeyed string) {
	unkeyed = t.Client.ID
	if t.Scope != t.Client.Scope() {
		unkeyed += "-" + t.Scope
	}
	unkeyed = unsafeName().ReplaceAllString(unkeyed+"-"+name, "_")
	p := projectOf(t.Client, t.Scope, t.Path, t.Client.KeyPath)
	if p == "" || mutated("wrap-policy-name-unkeyed") {
		return unkeyed, unkeyed
	}
	sum := sha256.Sum256([]byte(p + "\x00" + t.Path))
	dir := unsafeName().ReplaceAllString(filepath.Base(p), "_")
	if len(dir) > 32 {
		dir = dir[:32]
	}
	return unkeyed + "@" + strings.Trim(dir, ".") + "-" + hex.EncodeToString(sum[:4]), unkeyed
}

// PassedPolicy is a policy an earlier init --unwrap left under a name this server's would take,
// not used for it: it was written for another entry.
type PassedPolicy struct {
	Path string
	Why  string
}

func (p PassedPolicy) String() string { return p.Path + ": " + p.Why }

// leftFor says whether the policy at p, left by an earlier init --unwrap (or a wrap whose proof
// failed), was written for this entry: its header names the entry's config (and place in it) and
// its command. "" = it was; else why not.
func leftFor(p string, s WrapServer) string {
	if mutated("wrap-policy-reused-across-projects") {
		return ""
	}
	text, err := ReadConfigFile(p)
	if err != nil {
		return fmt.Sprintf("it does not read (%v)", err)
	}
	line := commentText{}
	var where, cmd string
	var seen bool
	for _, l := range strings.Split(string(text), "\n") {
		l = strings.TrimSuffix(l, "\r")
		if !strings.HasPrefix(l, "#") {
			break // the header ends at the first key
		}
		if rest, ok := strings.CutPrefix(l, "# in "); ok && !seen {
			if _, w, ok := strings.Cut(rest, "'s config "); ok {
				w = strings.TrimSuffix(w, ". Its entry there now runs:") // as written before session 39
				where, seen = strings.TrimSuffix(w, ". Its entry there runs, once wrapped (init says if it put it back):"), true
			}
			continue
		}
		if rest, ok := strings.CutPrefix(l, "#   mcpsandbox wrap --policy "); ok && seen && cmd == "" {
			if c, ok := strings.CutPrefix(rest, line.Replace(p)+" -- "); ok {
				cmd = c
			} else if _, c, ok := strings.Cut(rest, " -- "); ok {
				cmd = c
			}
		}
	}
	if where == "" || cmd == "" {
		return "its header does not name the entry it was written for (init --wrap's first comment lines)"
	}
	wantWhere, wantCmd := line.Replace(s.Target.Where()), line.Replace(s.String())
	gotPath, gotUnder, _ := strings.Cut(where, " (under ")
	_, wantUnder, _ := strings.Cut(wantWhere, " (under ")
	if where != wantWhere && (gotUnder != wantUnder || !sameFile(gotPath, s.Target.Path)) {
		return "it was written for the entry in " + where + ", not " + wantWhere
	}
	if cmd != wantCmd {
		return "it was written for the command " + cmd + ", not " + wantCmd
	}
	return ""
}
