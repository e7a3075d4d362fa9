package generate

import (
	"fmt"
	"slices"
	"strings"
)

// EnvFormat is how a client builds a stdio server's environment and how an entry names a
// variable for it to pass (internal/templates/clients.toml, [client.env]).
type EnvFormat struct {
	Inherit    string   `toml:"inherit"`     // "all", "redacted" or "listed"
	Ref        string   `toml:"ref"`         // an env value naming a variable; {var} = its name
	ListKey    string   `toml:"list_key"`    // instead: the key listing names to forward
	NoRef      string   `toml:"no_ref"`      // why an entry cannot name one; {var} = its name
	Pass       []string `toml:"pass"`        // always passed ("redacted"), or the only ones ("listed")
	Redact     []string `toml:"redact"`      // "redacted": name parts that drop a variable
	KeepPrefix []string `toml:"keep_prefix"` // "redacted": names never dropped
	Block      []string `toml:"block"`       // "redacted": names always dropped
}

// CanName reports whether the client's entry can name a variable for it to pass.
func (c Client) CanName() bool {
	if mutated("init-entry-env") {
		return false
	}
	return c.Env != nil && (c.Env.Ref != "" || c.Env.ListKey != "")
}

// EnvNote says what the user must do for variables the client's entry cannot name ("" = none).
func (c Client) EnvNote(names []string) string {
	if len(names) == 0 || c.CanName() || c.Env == nil || c.Env.NoRef == "" {
		return ""
	}
	return strings.ReplaceAll(c.Env.NoRef, "{var}", strings.Join(names, " and "))
}

// ServerEnv is the environment the client starts an entry with, when the client itself runs in
// parent: its own inheritance rule, then the variables the entry names (their values taken from
// parent, as the client expands them). A client the catalogue says nothing of passes parent.
func (c Client) ServerEnv(parent []string, e ServerEntry) []string {
	f := c.Env
	if mutated("init-client-env-parent") {
		f = nil
	}
	if f == nil {
		return setAll(slices.Clone(parent), e.Set)
	}
	var out []string
	for _, kv := range parent {
		name, _, _ := strings.Cut(kv, "=")
		if f.passes(name) {
			out = append(out, kv)
		}
	}
	if c.CanName() {
		for _, name := range e.Env {
			if v, ok := lookupEnv(parent, name); ok {
				out = setEnv(out, name, v)
			}
		}
	}
	return setAll(out, e.Set)
}

// setAll sets each NAME=value of set in env, as an entry's env values are: over the client's own.
func setAll(env, set []string) []string {
	for _, kv := range set {
		name, v, _ := strings.Cut(kv, "=")
		env = setEnv(env, name, v)
	}
	return env
}

// passes reports whether the client hands the variable name on by itself.
func (f *EnvFormat) passes(name string) bool {
	up := strings.ToUpper(name)
	switch f.Inherit {
	case "listed":
		return slices.Contains(f.Pass, up) || slices.Contains(f.Pass, name)
	case "redacted":
		for _, p := range f.KeepPrefix {
			if strings.HasPrefix(up, p) {
				return true
			}
		}
		if slices.Contains(f.Pass, up) {
			return true
		}
		if slices.Contains(f.Block, up) {
			return false
		}
		for _, r := range f.Redact {
			if strings.Contains(up, r) {
				return false
			}
		}
	}
	return true
}

// envRef is how the client's entry names the variable.
func (c Client) envRef(name string) string {
	return strings.ReplaceAll(c.Env.Ref, "{var}", name)
}

func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

func setEnv(env []string, name, v string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	return append(out, name+"="+v)
}

// describeInherit says in a few words what the client passes a server.
func (c Client) describeInherit() string {
	if c.Env == nil {
		return "its own environment"
	}
	switch c.Env.Inherit {
	case "listed":
		return fmt.Sprintf("only %d variables of its own (%s…) and those the entry names", len(c.Env.Pass), strings.Join(c.Env.Pass[:3], ", "))
	case "redacted":
		return "its own environment less every variable named like a secret (*KEY*, *TOKEN*, …), plus those the entry names"
	}
	return "its own environment"
}
