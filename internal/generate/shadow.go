package generate

import (
	"encoding/json"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Shadowing finds, for each target planned, a server of the same name in another scope of the
// same client (Claude Code's local, project and user scopes; Gemini CLI's project and user
// settings) that differs from the entry written: the client starts only one of them, and which
// is its own rule (Claude Code: local over project over user), so init's proof of the entry it
// writes may say nothing of the server the client will run. A scope written in the same init
// holds this very entry and is no conflict.
func (cp *ClientPlan) Shadowing(name string, e ServerEntry, env Env) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range cp.Targets {
		for _, s := range t.Client.Scopes() {
			o, err := ResolveTarget(t.Client.ID+":"+s, env)
			key := t.Client.ID + ":" + s
			if err != nil || s == t.Scope || seen[key] || slices.ContainsFunc(cp.Targets, func(x Target) bool { return x.Client.ID == t.Client.ID && x.Scope == s }) {
				continue
			}
			theirs, ok := cp.entryIn(o, name)
			if !ok {
				continue
			}
			doc, err := Merge(o.Client, nil, name, e, false)
			if err != nil {
				continue
			}
			ours, ok := rawEntry(o, doc, name)
			if ok && o.Client.sameServer(theirs, ours) || mutated("init-shadow-silent") || sameEntryPlace(o, t) {
				continue
			}
			seen[key] = true
			out = append(out, fmt.Sprintf("%s also has a different server named %q in its %s scope, %s: %s. "+
				"Remove that one (%s), or %s",
				t.Client.Name, name, s, o.Where(), whichRuns(t.Client, t.Scope, s), removeHint(o.Client, name, s, o.Path), cp.rename()))
		}
		if w := cp.otherProjectsShadow(t, name, e, env); w != "" && !seen["projects:"+t.Path] {
			seen["projects:"+t.Path] = true
			out = append(out, w)
		}
	}
	return out
}

// otherProjectsShadow: a Claude Code entry for every project (its user scope) is not the one
// started in a project whose local scope has a different server of that name, and ~/.claude.json
// keeps every project's local scope (trial32 F5: Claude Code itself warned; init checked only the
// current project's). Those projects are named, with how to remove theirs.
func (cp *ClientPlan) otherProjectsShadow(t Target, name string, e ServerEntry, env Env) string {
	if t.Client.ID != "claude-code" || t.Scope != "user" || mutated("init-shadow-other-projects") {
		return ""
	}
	var src []byte
	if ch := cp.Change(t); ch != nil && ch.New != nil {
		src = ch.New
	} else if b, err := ReadConfigFile(t.Path); err == nil {
		src = b
	}
	var doc struct {
		Projects map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if len(src) == 0 || json.Unmarshal(src, &doc) != nil {
		return ""
	}
	ours, err := Merge(t.Client, nil, name, e, false)
	if err != nil {
		return ""
	}
	oursRaw, ok := rawEntry(t, ours, name)
	if !ok {
		return ""
	}
	local := ""
	if lt, err := ResolveTarget("claude-code", env); err == nil && len(lt.Client.KeyPath) > 1 {
		local = lt.Client.KeyPath[1] // the current project's: the scope loop above judged it
	}
	var projects []string
	for p, pr := range doc.Projects {
		theirs, ok := pr.MCPServers[name]
		if !ok || p == local || t.Client.sameServer(theirs, oursRaw) {
			continue
		}
		projects = append(projects, p)
	}
	if len(projects) == 0 {
		return ""
	}
	slices.Sort(projects)
	shown := projects
	if len(shown) > 5 {
		shown = append(slices.Clone(shown[:5]), fmt.Sprintf("and %d more", len(projects)-5))
	}
	return fmt.Sprintf("Claude Code has a different server named %q in the local scope of %d other project(s) (%s): there it starts that one, not the one written now for every project. "+
		"Remove it in each (cd PROJECT && claude mcp remove %s -s local), or %s",
		name, len(projects), strings.Join(shown, ", "), shellword.Quote(name), cp.rename())
}

// sameEntryPlace says whether scope o names the very entry t does: the same file and the same
// place in it (Gemini CLI's project settings are its user settings when the project is the
// home directory, and the client reads them once). Not a second server.
func sameEntryPlace(o, t Target) bool {
	if mutated("init-shadow-same-file") {
		return false
	}
	if !slices.Equal(o.Client.keyPath(), t.Client.keyPath()) {
		return false
	}
	return samePath(o.Path, t.Path)
}

// samePath says whether paths a and b name one file, also one not made yet: the same name in
// the same directory (~/.cursor/mcp.json and, the project being ~ by a link, its project path).
func samePath(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if a == b {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	switch {
	case err1 == nil && err2 == nil:
		return os.SameFile(sa, sb)
	case err1 == nil || err2 == nil:
		return false // one is there, the other not
	case filepath.Base(a) != filepath.Base(b) || filepath.Dir(a) == a || filepath.Dir(b) == b:
		return false
	}
	return samePath(filepath.Dir(a), filepath.Dir(b))
}

// entryIn is the raw entry of that name in o's config as this plan leaves it (its planned
// contents when init changes that file too, such as ~/.claude.json for two scopes).
func (cp *ClientPlan) entryIn(o Target, name string) ([]byte, bool) {
	var src []byte
	if ch := cp.Change(o); ch != nil && ch.New != nil {
		src = ch.New
	} else {
		b, err := ReadConfigFile(o.Path)
		if err != nil {
			return nil, false
		}
		src = b
	}
	return rawEntry(o, src, name)
}

// rawEntry is the raw entry of that name in the servers of o's config text.
func rawEntry(o Target, src []byte, name string) ([]byte, bool) {
	list, err := listEntries(o, src)
	if err != nil {
		return nil, false
	}
	i := slices.IndexFunc(list, func(w WrapServer) bool { return w.Name == name })
	if i < 0 {
		return nil, false
	}
	return list[i].Raw, true
}

// removeHint is how to remove server name from a client's scope: the client's own command, or
// where to delete it by hand.
func removeHint(c Client, name, scope, path string) string {
	if mutated("init-shadow-remove-hint") { // every client told Claude Code's command
		return "for Claude Code: claude mcp remove " + name + " -s " + scope
	}
	if c.Remove == "" {
		return fmt.Sprintf("delete %q from %s", name, path)
	}
	return strings.NewReplacer("{name}", shellword.Quote(name), "{scope}", scope).Replace(c.Remove)
}

// scopeWins is, for a client whose precedence between its scopes is known, its scopes from the
// one it starts to the one it ignores for a server of the same name: Claude Code's local over
// project over user (its docs, and `claude mcp list` starts the local one); Gemini CLI's project
// settings over the user's (trial38 F1: the committed .gemini/settings.json ran, the teammate's
// own entry was not even listed).
var scopeWins = map[string][]string{
	"claude-code": {"local", "project", "user"},
	"gemini":      {"project", "user"},
}

// whichRuns says which of the two same-named servers the client starts: plainly where its
// precedence is known, else that it starts only one.
func whichRuns(c Client, written, other string) string {
	order := scopeWins[c.ID]
	w, o := slices.Index(order, written), slices.Index(order, other)
	if w < 0 || o < 0 || mutated("init-shadow-which-runs") {
		return "it starts only one of the two, so the one written now may not be the one it runs"
	}
	if w < o {
		return fmt.Sprintf("%s starts the one in its %s scope, the one written now (its %s scope loses)", c.Name, written, other)
	}
	return fmt.Sprintf("%s starts the one in its %s scope, NOT the one written now in its %s scope, which it ignores while that one is there", c.Name, other, written)
}
