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
}

func (u PolicyUser) String() string {
	s := fmt.Sprintf("%s: %q in %s", u.Client, u.Name, u.Path)
	if len(u.Where) > 0 {
		s += " (under " + strings.Join(u.Where, " → ") + ")"
	}
	return s
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
