// Package section is the allowlist scheme's part of the policy file, its [allowlist] table: the workspace, the pinned commands, the environment, the network and the protect list (policy.Section, registered
// with the policy package when linked).
package section

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Name is the hardened host-exec scheme's name and its section's table.
const Name = "allowlist"

func init() {
	policy.RegisterSection(Name, 10, func() policy.Section { return new(Allowlist) })
}

// Of is p's allowlist section.
func Of(p *policy.Policy) *Allowlist { return p.SectionFor(Name).(*Allowlist) }

// WorkspaceDir is the commands' working directory (Policy.WorkspaceDir).
func (a *Allowlist) WorkspaceDir() string { return a.Workspace }

// Allowlist is the hardened host-exec scheme.
type Allowlist struct {
	Workspace string `toml:"workspace" json:"workspace"`
	// Egress is the `network` key as written: false, true or a list of hosts. Read it through
	// Net(); set it with SetNet.
	Egress   policy.Network    `toml:"network" json:"network"`
	Env      map[string]string `toml:"env" json:"env"`
	Commands []policy.Command  `toml:"commands" json:"commands"`
	// User is "uid:gid" the commands run as when serve runs as root. "" = the workspace owner,
	// or 65534:65534 (nobody) when root owns the workspace.
	User string `toml:"user,omitempty" json:"user,omitempty"`
	// MaxFileSize caps any single file a command writes (RLIMIT_FSIZE).
	MaxFileSize policy.Size `toml:"max_file_size" json:"max_file_size"`
	// ReadPaths are extra host paths commands may read (Landlock); system library dirs are implied.
	ReadPaths []string `toml:"read_paths,omitempty" json:"read_paths,omitempty"`
	// Protect are workspace paths (globs, relative to the workspace) that commands may not write:
	// files the host runs or obeys later without anyone asking. They extend DefaultProtect; an
	// entry "!NAME" drops NAME from the defaults. See Protected.
	Protect []string `toml:"protect,omitempty" json:"protect,omitempty"`
	// HardLinks says what happens to a path argument naming a regular file with more than one
	// link (Landlock judges paths, so a hard link can reach a file outside the workspace):
	// "refuse" (the default, also "") or "read-only" (allowed, and mounted read-only for the call).
	HardLinks string `toml:"hardlinks,omitempty" json:"hardlinks,omitempty"`
}

// Hard-link modes for Allowlist.HardLinks.
const (
	HardLinksRefuse   = "refuse"
	HardLinksReadOnly = "read-only"
)

// Protected is the effective protect list: DefaultProtect without the "!NAME" entries of
// Protect, plus Protect's other entries.
// ReadDirs are the extra host paths commands may read.
func (a *Allowlist) ReadDirs() (string, []string) { return "allowlist.read_paths", a.ReadPaths }

func (a *Allowlist) Protected() []string {
	drop := map[string]bool{}
	var add []string
	for _, p := range a.Protect {
		if name, ok := strings.CutPrefix(p, "!"); ok {
			drop[name] = true
		} else {
			add = append(add, p)
		}
	}
	var out []string
	for _, p := range policy.DefaultProtect {
		if !drop[p] {
			out = append(out, p)
		}
	}
	return append(out, add...)
}

// Command looks an allowlisted command up by name.
func (a *Allowlist) Command(name string) (*policy.Command, bool) {
	for i := range a.Commands {
		if a.Commands[i].Name == name {
			return &a.Commands[i], true
		}
	}
	return nil, false
}

func (a *Allowlist) Validate(active bool) []policy.Problem {
	var ps []policy.Problem
	add := func(key, msg, fix string, args ...any) {
		ps = append(ps, policy.Problem{Key: key, Msg: fmt.Sprintf(msg, args...), Fix: fix})
	}
	switch {
	case a.Workspace == "":
		if active {
			add("allowlist.workspace", "missing", `set workspace = "/absolute/dir" (the only place commands may write)`)
		}
	case !filepath.IsAbs(a.Workspace):
		add("allowlist.workspace", "%q is not absolute", policy.AbsFix(a.Workspace, "use an absolute path"), a.Workspace)
	case filepath.Clean(a.Workspace) == "/":
		add("allowlist.workspace", "the workspace cannot be /", "use a dedicated directory such as ~/ai-workspace")
	}
	ps = append(ps, policy.ValidateNetwork("allowlist.network", a.Net(), false)...)
	for k, v := range a.Env {
		key := "allowlist.env." + k
		switch {
		case !policy.ValidEnvName(k):
			add(key, "%q is not a valid variable name", "use letters, digits and '_'", k)
		case k == "PATH":
			add(key, "PATH is fixed by mcpsandbox", "remove it: commands run by pinned absolute path")
		case policy.EnvRefused(k) && !policy.ProgramWordOK(k, v):
			add(key, "%s lets the environment inject code into allowlisted binaries", envFix(k), k)
		}
	}
	if active && len(a.Commands) == 0 {
		add("allowlist.commands", "no commands are allowlisted", "add [[allowlist.commands]] entries (mcpsandbox init --allow wc,sort writes them pinned)")
	}
	seen := map[string]bool{}
	for i, c := range a.Commands {
		key := "allowlist.commands[" + strconv.Itoa(i) + "]"
		if !policy.ValidCommandName(c.Name) {
			add(key+".name", "%q is not a valid command name", "use letters, digits and '._+-'", c.Name)
		} else if seen[c.Name] {
			add(key+".name", "%q is allowlisted twice", "keep one entry per name", c.Name)
		}
		seen[c.Name] = true
		switch {
		case c.Path == "":
			add(key+".path", "missing", "give the absolute path of the binary, e.g. /usr/bin/"+c.Name)
		case !filepath.IsAbs(c.Path) || filepath.Clean(c.Path) != c.Path:
			add(key+".path", "%q is not a clean absolute path", "give the absolute path, e.g. /usr/bin/"+c.Name, c.Path)
		}
		if !policy.ValidSHA256(c.SHA256) {
			add(key+".sha256", "%q is not a sha256 (64 lowercase hex digits)", policy.SHA256Fix(c.Name, c.Path), c.SHA256)
		}
		for j, g := range c.DenyArgs {
			if _, err := policy.CompileGlob(g); err != nil {
				add(fmt.Sprintf("%s.deny_args[%d]", key, j), "%q is not a valid glob: %v", "use * ? and [..] only, balanced", g, err)
			}
		}
	}
	if a.User != "" && !policy.ValidUIDGID(a.User) {
		add("allowlist.user", "%q is not uid:gid", `use numbers, e.g. "65534:65534"`, a.User)
	}
	if a.MaxFileSize < 1<<20 {
		add("allowlist.max_file_size", "%s is below 1MiB", `use e.g. "64MiB"`, a.MaxFileSize)
	}
	for i, g := range a.Protect {
		key := fmt.Sprintf("allowlist.protect[%d]", i)
		name, trim := strings.CutPrefix(g, "!")
		switch {
		case name == "":
			add(key, "empty pattern", `write a path relative to the workspace, e.g. ".husky" or "scripts/hooks/*"`)
		case trim && !slices.Contains(policy.DefaultProtect, name):
			add(key, "%q trims %q, which is not in the default protect list", "trim an entry of the default list exactly as `mcpsandbox explain` prints it, or drop the '!'", g, name)
		case filepath.IsAbs(name) || slices.Contains(strings.Split(name, "/"), ".."):
			add(key, "%q is not a path inside the workspace", `use a path relative to the workspace without "..", e.g. ".husky"`, g)
		default:
			if _, err := policy.CompileGlob(name); err != nil {
				add(key, "%q is not a valid glob: %v", "use * ? and [..] only, balanced", g, err)
			}
		}
	}
	switch a.HardLinks {
	case "", HardLinksRefuse, HardLinksReadOnly:
	default:
		add("allowlist.hardlinks", "%q is not a hard-link mode", `use "refuse" (the default) or "read-only"`, a.HardLinks)
	}
	for i, r := range a.ReadPaths {
		if !filepath.IsAbs(r) {
			add(fmt.Sprintf("allowlist.read_paths[%d]", i), "%q is not absolute", policy.AbsFix(r, "use absolute paths"), r)
		}
	}
	return ps
}

// Net is the effective allowlist network: none, all or a host list.
func (a *Allowlist) Net() policy.Network {
	if a.Egress.Mode == policy.NetAll {
		return policy.Network{Mode: policy.NetAll}
	}
	if a.Egress.Mode == policy.NetHosts || a.Egress.Mode == policy.NetNamed {
		return a.Egress
	}
	return policy.Network{Mode: policy.NetNone}
}

// AllHosts reports whether network = true: every host, with no proxy.
func (a *Allowlist) AllHosts() bool { return a.Net().Mode == policy.NetAll }

// SetNet sets the allowlist network.
func (a *Allowlist) SetNet(n policy.Network) { a.Egress = n }

// Network is the `network` key: false, true or a host list.
func (a *Allowlist) Network() (policy.Network, bool) { return a.Net(), true }

// SetNetwork sets the `network` key.
func (a *Allowlist) SetNetwork(n policy.Network) bool { a.SetNet(n); return true }

func (a *Allowlist) Defaults() {
	*a = Allowlist{
		Env:         map[string]string{"LANG": "C.UTF-8"},
		MaxFileSize: 64 << 20,
	}
}

// BeforeDecode: a file's env is the complete environment, never merged with the default.
func (a *Allowlist) BeforeDecode() { a.Env = nil }

func (a *Allowlist) AfterDecode(defined func(...string) bool) {
	a.SetNet(a.Net())
	if !defined(Name, "env") {
		a.Env = map[string]string{"LANG": "C.UTF-8"}
	}
}

func (a *Allowlist) Payload() any {
	c := *a
	c.SetNet(c.Net())
	return c
}

// Copy is a deep copy: its lists and maps are its own.
func (a *Allowlist) Copy() policy.Section {
	c := *a
	a = &c
	a.Commands = slices.Clone(a.Commands)
	for i := range a.Commands {
		a.Commands[i].DenyArgs = slices.Clone(a.Commands[i].DenyArgs)
	}
	a.ReadPaths = slices.Clone(a.ReadPaths)
	a.Protect = slices.Clone(a.Protect)
	a.Env = maps.Clone(a.Env)
	return a
}

// Summary: the workspace, the commands on one line, the network.
func (a *Allowlist) Summary() []string {
	names := make([]string, len(a.Commands))
	for i, c := range a.Commands {
		names[i] = c.Name
	}
	return []string{
		"workspace " + a.Workspace,
		fmt.Sprintf("commands (%d, each pinned by sha256): %s", len(names), strings.Join(names, ", ")),
		"network " + a.Net().String()}
}

// envFix is what to do with a refused allowlist.env name.
func envFix(name string) string {
	if policy.ProgramWordOK(name, "cat") {
		return `remove it, or give it one bare program name found on PATH (PAGER = "cat")`
	}
	return "remove it"
}
