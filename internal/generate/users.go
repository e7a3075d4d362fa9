package generate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// PolicyUser is one client entry, in a config init knows of, that runs serve with a policy file.
type PolicyUser struct {
	Client string // the client's name
	Path   string // its config file
	Where  []string
	Name   string // the server's name
	// Scope is the client's scope the entry is in, as the preview labels them ("user", "local,
	// project /x"): one file can hold two (Claude Code's ~/.claude.json), and an unlabelled
	// line read as the entry being written (trial36 F8).
	Scope string
}

func (u PolicyUser) String() string {
	who := u.Client
	if u.Scope != "" {
		who += " (" + u.Scope + ")"
	}
	s := fmt.Sprintf("%s: %q in %s", who, u.Name, u.Path)
	if len(u.Where) > 0 && !strings.HasPrefix(u.Scope, "local, project ") {
		s += " (under " + strings.Join(u.Where, " → ") + ")"
	}
	return s
}

// userScope is the scope of an entry in t's file: Claude Code's project keys are its local
// scope, a top-level entry the scope whose entries are top-level in that file.
func userScope(c Client, t Target, u PolicyUser, env Env) string {
	if mutated("init-shared-no-scope") {
		return ""
	}
	if len(u.Where) >= 2 && u.Where[0] == "projects" {
		return "local, project " + u.Where[1]
	}
	if len(u.Where) == 0 {
		for _, scope := range c.Scopes() {
			if o, err := ResolveTarget(c.ID+":"+scope, env); err == nil && o.Path == t.Path && len(o.Client.KeyPath) < 2 {
				return scope
			}
		}
	}
	return t.Scope
}

// PolicyUsers lists the entries in every config init knows of (each client's scopes, Claude
// Code's every project) whose arguments name the policy file: changing it changes them all.
func PolicyUsers(policyPath string, env Env) []PolicyUser {
	var out []PolicyUser
	seen := map[string]bool{}
	for _, c := range Clients() {
		for _, scope := range c.Scopes() {
			t, err := ResolveTarget(c.ID+":"+scope, env)
			if err != nil || seen[t.Path] {
				continue
			}
			seen[t.Path] = true
			b, err := ReadConfigFile(t.Path)
			if err != nil {
				continue
			}
			for _, u := range entriesUsing(c, b, policyPath) {
				u.Client, u.Path = c.Name, t.Path
				u.Scope = userScope(c, t, u, env)
				out = append(out, u)
			}
		}
	}
	return out
}

// entriesUsing finds the servers in one config whose args hold policyPath.
func entriesUsing(c Client, src []byte, policyPath string) []PolicyUser {
	if c.Format == "toml" {
		var doc map[string]any
		if _, err := decodeTOML(src, &doc); err != nil {
			return nil
		}
		servers, _ := doc[c.Key].(map[string]any)
		var out []PolicyUser
		for name, v := range servers {
			e, _ := v.(map[string]any)
			args, _ := e["args"].([]any)
			if slices.Contains(args, any(policyPath)) {
				out = append(out, PolicyUser{Name: name})
			}
		}
		return out
	}
	root, err := parseJSONC(src)
	if err != nil {
		return nil
	}
	var out []PolicyUser
	var walk func(n *jnode, where []string)
	walk = func(n *jnode, where []string) {
		for _, m := range n.members {
			if m.val.kind != '{' {
				continue
			}
			if a := m.val.member("args"); a != nil && a.val.kind == '[' {
				var args []string
				if json.Unmarshal(src[a.val.start:a.val.end], &args) == nil && slices.Contains(args, policyPath) {
					out = append(out, PolicyUser{Name: m.key, Where: slices.Clone(where[:max(len(where)-1, 0)])})
				}
				continue
			}
			walk(m.val, append(where, m.key))
		}
	}
	walk(root, nil)
	return out
}
