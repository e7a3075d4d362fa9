// Package section is the wrap scheme's part of the policy file, its [wrap] table: the wrapped server's command, what it may read and write, its environment by name, its network and the tool policy (policy.Section, registered
// with the policy package when linked).
package section

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Name is the name of the scheme that sandboxes somebody else's stdio MCP server
// (`mcpsandbox wrap`), and its section's table.
const Name = "wrap"

func init() {
	policy.RegisterSection(Name, 40, func() policy.Section { return new(Wrap) })
}

// Of is p's wrap section.
func Of(p *policy.Policy) *Wrap { return p.SectionFor(Name).(*Wrap) }

// Wrap bounds a wrapped stdio MCP server: the allowlist scheme's kernel layers around a command
// the policy names (or `mcpsandbox wrap -- CMD…` gives), its JSON-RPC relayed and audited.
type Wrap struct {
	// Command is the server's argv; empty: the command line of `mcpsandbox wrap -- CMD…` gives it.
	Command []string `toml:"command" json:"command"`
	// Read are paths the server may read besides the system dirs and its own install dirs.
	Read []string `toml:"read" json:"read"`
	// Write are directories the server may write besides its private HOME and /tmp.
	Write []string `toml:"write" json:"write"`
	// Env names variables passed from the client's environment (values never in the file).
	Env []string `toml:"env" json:"env"`
	// Egress is the `network` key: false, true or a list of hosts (serve's egress proxy).
	Egress policy.Network `toml:"network" json:"network"`
	Tools  WrapTools      `toml:"tools" json:"tools"`
	// ServerRequests are the requests the server may send the client beyond ping and
	// roots/list (ServerRequestsAlways): sampling/createMessage runs the user's model on the
	// server's prompt, elicitation/create asks the user for input in the server's words. The
	// relay refuses the rest to the server, unseen by the client.
	ServerRequests []string `toml:"server_requests,omitempty" json:"server_requests,omitempty"`
}

// ServerRequestsAlways are the server's requests the relay always passes to the client.
var ServerRequestsAlways = []string{"ping", "roots/list"}

// ServerRequestsOptIn are the server's requests a policy may let through (wrap.server_requests).
var ServerRequestsOptIn = []string{"sampling/createMessage", "elicitation/create"}

// ServerMayAsk says whether the server's request method reaches the client.
func (w *Wrap) ServerMayAsk(method string) bool {
	return slices.Contains(ServerRequestsAlways, method) || slices.Contains(w.ServerRequests, method)
}

// WrapTools is the relay's tool policy.
type WrapTools struct {
	Allow            []string    `toml:"allow" json:"allow"` // globs; empty = every tool
	Deny             []string    `toml:"deny" json:"deny"`   // globs; win over allow
	HideDenied       bool        `toml:"hide_denied" json:"hide_denied"`
	MaxArgumentBytes policy.Size `toml:"max_argument_bytes" json:"max_argument_bytes"`
}

// MaxWrapArgumentBytes is the ceiling of wrap.tools.max_argument_bytes: a tools/call's whole
// frame is bounded by the relay's frame limit (4 MiB) anyway.
const MaxWrapArgumentBytes = 4 << 20

// WrapVerdict is what the tool policy says of a tool name: "" = allowed, else the rule that
// refuses it ("wrap.tools.deny[0]", "wrap.tools.allow").
func (t *WrapTools) WrapVerdict(name string) string {
	for i, g := range t.Deny {
		if policy.GlobMatches(g, name) {
			return fmt.Sprintf("wrap.tools.deny[%d] (%q)", i, g)
		}
	}
	if len(t.Allow) == 0 {
		return ""
	}
	for _, g := range t.Allow {
		if policy.GlobMatches(g, name) {
			return ""
		}
	}
	return "wrap.tools.allow (the tool is not listed)"
}

func (w *Wrap) Validate(active bool) []policy.Problem {
	var ps []policy.Problem
	add := func(key, msg, fix string, args ...any) {
		ps = append(ps, policy.Problem{Key: key, Msg: fmt.Sprintf(msg, args...), Fix: fix})
	}
	for i, a := range w.Command {
		if i == 0 && strings.TrimSpace(a) == "" {
			add("wrap.command[0]", "the program is empty", `name the server's program, e.g. command = ["npx", "-y", "@modelcontextprotocol/server-everything"]`)
		}
		if strings.IndexByte(a, 0) >= 0 {
			add(fmt.Sprintf("wrap.command[%d]", i), "contains a NUL byte", "remove it")
		}
	}
	for _, l := range []struct {
		key   string
		paths []string
	}{{"wrap.read", w.Read}, {"wrap.write", w.Write}} {
		for i, p := range l.paths {
			k := fmt.Sprintf("%s[%d]", l.key, i)
			switch {
			case !filepath.IsAbs(p):
				add(k, "%q is not absolute", policy.AbsFix(p, "use an absolute path"), p)
			case filepath.Clean(p) == "/":
				add(k, "/ would open the whole machine", "name the directories the server needs")
			}
		}
	}
	for i, k := range w.Env {
		key := fmt.Sprintf("wrap.env[%d]", i)
		switch {
		case !policy.ValidEnvName(k):
			add(key, "%q is not a variable name", `list names only, e.g. env = ["GITHUB_TOKEN"]; the values come from the client's environment`, k)
		case k == "PATH" || k == "HOME" || k == "TMPDIR":
			add(key, "%s is set by wrap", "remove it", k)
		case policy.EnvRefused(k):
			add(key, "%s lets the environment inject code into the server", "remove it", k)
		}
	}
	if w.Egress.Mode == policy.NetNamed {
		add("wrap.network", "%q: wrap.network takes false, true or a list of hosts", `use false (no network) or a list such as ["api.github.com"]`, w.Egress.Name)
	} else {
		ps = append(ps, policy.ValidateNetwork("wrap.network", w.Net(), false)...)
	}
	for _, l := range []struct {
		key   string
		globs []string
	}{{"wrap.tools.allow", w.Tools.Allow}, {"wrap.tools.deny", w.Tools.Deny}} {
		for i, g := range l.globs {
			if _, err := policy.CompileGlob(g); err != nil || g == "" {
				add(fmt.Sprintf("%s[%d]", l.key, i), "%q is not a valid tool-name glob", "use a tool name, or * ? and [..], balanced", g)
			}
		}
	}
	if w.Tools.MaxArgumentBytes < 1 || w.Tools.MaxArgumentBytes > MaxWrapArgumentBytes {
		add("wrap.tools.max_argument_bytes", "%s is outside 1B..4MiB", "use e.g. 65536", w.Tools.MaxArgumentBytes)
	}
	for i, m := range w.ServerRequests {
		if !slices.Contains(ServerRequestsOptIn, m) {
			add(fmt.Sprintf("wrap.server_requests[%d]", i), "%q is not a request a server may be let to send its client (ping and roots/list always pass)",
				"use "+strings.Join(ServerRequestsOptIn, " or "), m)
		}
	}
	return ps
}

// WriteDirs are the directories the wrapped server may write besides its private HOME and /tmp.
func (w *Wrap) WriteDirs() []string { return w.Write }

// ReadDirs are the paths the wrapped server may read besides the system's and its install dirs.
func (w *Wrap) ReadDirs() (string, []string) { return "wrap.read", w.Read }

// Net is the effective network: none, all or a host list.
func (w *Wrap) Net() policy.Network {
	switch w.Egress.Mode {
	case policy.NetAll:
		return policy.Network{Mode: policy.NetAll}
	case policy.NetHosts, policy.NetNamed:
		return w.Egress
	}
	return policy.Network{Mode: policy.NetNone}
}

// Network is the `network` key: false, true or a host list.
func (w *Wrap) Network() (policy.Network, bool) { return w.Net(), true }

// SetNetwork sets the `network` key.
func (w *Wrap) SetNetwork(n policy.Network) bool { w.Egress = n; return true }

func (w *Wrap) Defaults() {
	*w = Wrap{Tools: WrapTools{HideDenied: true, MaxArgumentBytes: 64 << 10}}
}

// BeforeDecode: a file's lists replace the defaults (which are empty anyway).
func (w *Wrap) BeforeDecode() {}

// Wrap's own defaults for limits.memory and limits.pids: a wrapped server is a whole runtime,
// not one command. Under the common 256MiB of address space a Go server dies before it answers
// (its runtime reserves ~768MiB at start) and node needs about 1GiB; its threads count as pids.
const (
	WrapDefaultMemory = 4 << 30
	WrapDefaultPids   = 256
)

// LimitDefaults gives a wrap policy its own memory and pids defaults where the file sets none.
func (w *Wrap) LimitDefaults(l *policy.Limits, defined func(...string) bool) {
	if !defined("limits", "memory") {
		l.Memory = WrapDefaultMemory
	}
	if !defined("limits", "pids") {
		l.Pids = WrapDefaultPids
	}
}

func (w *Wrap) AfterDecode(func(...string) bool) { w.Egress = w.Net() }

func (w *Wrap) Payload() any {
	c := *w
	c.Egress = c.Net()
	for _, l := range []*[]string{&c.Command, &c.Read, &c.Write, &c.Env, &c.Tools.Allow, &c.Tools.Deny} {
		if *l == nil {
			*l = []string{}
		}
	}
	return c
}

// Copy is a deep copy: its lists and maps are its own.
func (w *Wrap) Copy() policy.Section {
	c := *w
	w = &c
	w.Command = slices.Clone(w.Command)
	w.Read, w.Write, w.Env = slices.Clone(w.Read), slices.Clone(w.Write), slices.Clone(w.Env)
	w.Tools.Allow, w.Tools.Deny = slices.Clone(w.Tools.Allow), slices.Clone(w.Tools.Deny)
	w.ServerRequests = slices.Clone(w.ServerRequests)
	return w
}

// Summary: the command, the paths, the network, the tool policy.
func (w *Wrap) Summary() []string {
	cmd := "given on the command line (mcpsandbox wrap -- CMD…)"
	if len(w.Command) > 0 {
		cmd = strings.Join(w.Command, " ")
	}
	tools := "every tool"
	if len(w.Tools.Allow) > 0 || len(w.Tools.Deny) > 0 {
		tools = fmt.Sprintf("allow %v, deny %v (hidden: %s)", w.Tools.Allow, w.Tools.Deny, policy.OnOff(w.Tools.HideDenied))
	}
	return []string{"command " + cmd,
		fmt.Sprintf("reads %d extra paths, writes %d extra dirs besides its own HOME and /tmp; env passed by name: %v", len(w.Read), len(w.Write), w.Env),
		"network " + w.Net().String(),
		fmt.Sprintf("tools: %s; arguments at most %s", tools, w.Tools.MaxArgumentBytes)}
}
