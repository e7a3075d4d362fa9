// Package policy is the shared vocabulary of mcpsandbox: the policy file (version 1), its defaults,
// validation with file:line problems, and a canonical hash. It imports no other mcpsandbox package.
package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"
)

// Scheme names.
const (
	SchemeAllowlist = "allowlist"
	SchemeDocker    = "docker"
	SchemeE2B       = "e2b"
)

// Schemes lists every scheme in the order the product presents them.
var Schemes = []string{SchemeAllowlist, SchemeDocker, SchemeE2B}

// Defaults of the boundary limits (see Limits).
const (
	DefaultMaxSessions       = 64
	DefaultSessionIdle       = 30 * time.Minute
	DefaultMaxConnections    = 256
	DefaultEgressConnections = 32
)

// MaxTimeout is the hard ceiling on limits.timeout.
const MaxTimeout = 10 * time.Minute

// Policy is policy file version 1.
type Policy struct {
	Version   int       `toml:"version" json:"version"`
	Scheme    string    `toml:"scheme" json:"scheme"`
	Name      string    `toml:"name" json:"name"`
	Limits    Limits    `toml:"limits" json:"limits"`
	Audit     Audit     `toml:"audit" json:"audit"`
	Allowlist Allowlist `toml:"allowlist" json:"allowlist"`
	Docker    Docker    `toml:"docker" json:"docker"`
	E2B       E2B       `toml:"e2b" json:"e2b"`
	// File is the file the policy was loaded from ("" when built in memory): serve checks who
	// could have written it (CheckFileSafe). Not part of the policy's meaning or hash.
	File string `toml:"-" json:"-"`
}

// Limits apply to every scheme.
type Limits struct {
	Timeout        Duration `toml:"timeout" json:"timeout"`
	MaxOutputBytes Size     `toml:"max_output_bytes" json:"max_output_bytes"`
	MaxConcurrent  int      `toml:"max_concurrent" json:"max_concurrent"`
	Memory         Size     `toml:"memory" json:"memory"`
	Pids           int      `toml:"pids" json:"pids"`
	CPUs           float64  `toml:"cpus" json:"cpus"`
	// Bounds on what reaches serve from its clients and sandboxes (issue 22): each has a
	// default, and past each the request is refused with the key's name.
	MaxSessions       int      `toml:"max_sessions" json:"max_sessions"`             // live MCP sessions over HTTP at once
	SessionIdle       Duration `toml:"session_idle" json:"session_idle"`             // a session idle this long is ended, its sandboxes with it
	MaxConnections    int      `toml:"max_connections" json:"max_connections"`       // open HTTP connections at once
	EgressConnections int      `toml:"egress_connections" json:"egress_connections"` // egress proxy connections one sandbox holds at once
}

// Audit configures the tamper-evident call log.
type Audit struct {
	Path string `toml:"path" json:"path"` // "" = default under the XDG state dir
}

// Allowlist is the hardened host-exec scheme.
type Allowlist struct {
	Workspace string `toml:"workspace" json:"workspace"`
	// Network is the all-or-nothing view of the `network` key that older code reads: true = all.
	// A host list lives in Egress (false here, so code that knows no lists keeps the sandbox
	// offline). Read the key through Net(); set it with SetNet.
	Network bool `toml:"-" json:"-"`
	// Egress is the `network` key as written: false, true or a list of hosts (see Network).
	Egress   Network           `toml:"network" json:"network"`
	Env      map[string]string `toml:"env" json:"env"`
	Commands []Command         `toml:"commands" json:"commands"`
	// User is "uid:gid" the commands run as when serve runs as root. "" = the workspace owner,
	// or 65534:65534 (nobody) when root owns the workspace.
	User string `toml:"user,omitempty" json:"user,omitempty"`
	// MaxFileSize caps any single file a command writes (RLIMIT_FSIZE).
	MaxFileSize Size `toml:"max_file_size" json:"max_file_size"`
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

// DefaultProtect are workspace files and directories that run programs or steer the host (or the
// next agent session) without anyone asking: version-control hooks and config, hook managers,
// package-manager and tool-manager rc files that name programs, editor and devcontainer tasks,
// CI workflows, agent instruction and MCP files, compiled Python caches and installed
// dependencies. A pattern without "/" matches that name at any depth; a pattern with "/" is
// anchored at the workspace root. A match protects everything under it too. Project files people
// edit on purpose (Makefile, package.json, pyproject.toml, source code) are deliberately absent:
// anything written in the workspace is model-controlled content, to be reviewed as such.
var DefaultProtect = []string{
	// version control and hook managers
	".git", ".hg", ".svn", ".gitmodules", ".gitattributes", ".husky", ".githooks",
	".pre-commit-config.yaml", ".lefthook.yml", ".lefthook.yaml", "lefthook.yml", "lefthook.yaml",
	".lefthook-local.yml", "lefthook-local.yml", ".overcommit.yml",
	// package, tool and toolchain managers that run what their config names
	".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "bunfig.toml", ".envrc", ".tool-versions",
	".mise.toml", "mise.toml", ".mise", ".cargo", "rust-toolchain", "rust-toolchain.toml", ".bazelrc",
	".mvn", "gradle/wrapper", ".pdbrc", ".gdbinit", ".lldbinit", ".exrc", ".nvimrc", ".nvim.lua",
	"conftest.py", "__pycache__", "*.pyc", ".venv", "node_modules",
	// editors, devcontainers and their tasks
	".vscode", ".idea", ".fleet", ".zed", "*.code-workspace", ".devcontainer", ".devcontainer.json",
	// CI
	".github/workflows", ".github/actions", ".gitlab-ci.yml", ".circleci", ".travis.yml", ".buildkite",
	".drone.yml", "azure-pipelines.yml", "bitbucket-pipelines.yml", "Jenkinsfile",
	// agent instructions and MCP configuration the next session obeys
	"CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENT.md", "GEMINI.md", ".claude", ".cursor", ".cursorrules",
	".windsurfrules", ".clinerules", ".github/copilot-instructions.md", ".aider.conf.yml", ".continue",
	".mcp.json",
}

// Protected is the effective protect list: DefaultProtect without the "!NAME" entries of
// Protect, plus Protect's other entries.
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
	for _, p := range DefaultProtect {
		if !drop[p] {
			out = append(out, p)
		}
	}
	return append(out, add...)
}

// Command is one allowlisted, pinned binary.
type Command struct {
	Name     string   `toml:"name" json:"name"`
	Path     string   `toml:"path" json:"path"`
	SHA256   string   `toml:"sha256" json:"sha256"`
	DenyArgs []string `toml:"deny_args,omitempty" json:"deny_args,omitempty"`
	// AllowOutsidePaths lets path-like arguments resolve outside the workspace (reads only:
	// the kernel still confines writes to the workspace).
	AllowOutsidePaths bool `toml:"allow_outside_paths,omitempty" json:"allow_outside_paths,omitempty"`
}

// Docker is the container-per-call scheme.
type Docker struct {
	Image string `toml:"image" json:"image"`
	// Network is the docker-network view of the `network` key that older code reads: "none" or a
	// docker network name. A host list lives in Egress ("none" here, so code that knows no lists
	// keeps containers offline). Read the key through Net(); set it with SetNet.
	Network string `toml:"-" json:"-"`
	// Egress is the `network` key as written: "none", a docker network name or a list of hosts.
	Egress            Network `toml:"network" json:"network"`
	ReadOnly          bool    `toml:"read_only" json:"read_only"`
	User              string  `toml:"user" json:"user"`
	Workspace         string  `toml:"workspace" json:"workspace"`
	WorkspaceWritable bool    `toml:"workspace_writable" json:"workspace_writable"`
	Runtime           string  `toml:"runtime" json:"runtime"`
	Pool              int     `toml:"pool" json:"pool"`
}

// E2B is the cloud-sandbox proxy scheme.
type E2B struct {
	Template       string   `toml:"template" json:"template"`
	APIKeyEnv      string   `toml:"api_key_env" json:"api_key_env"`
	APIURL         string   `toml:"api_url" json:"api_url"`
	SandboxTimeout Duration `toml:"sandbox_timeout" json:"sandbox_timeout"`
	Reuse          string   `toml:"reuse" json:"reuse"`
	AllowInternet  bool     `toml:"allow_internet" json:"allow_internet"`
}

// Default returns a policy with every default filled in for the given scheme.
func Default(scheme string) *Policy {
	return &Policy{
		Version: 1,
		Scheme:  scheme,
		Name:    "sandbox",
		Limits: Limits{
			Timeout:        Duration{30 * time.Second},
			MaxOutputBytes: 64 << 10,
			MaxConcurrent:  4,
			Memory:         256 << 20,
			Pids:           64,
			CPUs:           0.5,

			MaxSessions:       DefaultMaxSessions,
			SessionIdle:       Duration{DefaultSessionIdle},
			MaxConnections:    DefaultMaxConnections,
			EgressConnections: DefaultEgressConnections,
		},
		Allowlist: Allowlist{
			Env:         map[string]string{"LANG": "C.UTF-8"},
			MaxFileSize: 64 << 20,
		},
		Docker: Docker{
			Image:    "python:3.12-slim",
			Network:  "none",
			Egress:   Network{Mode: NetNone, Name: "none"},
			ReadOnly: true,
			User:     "65534:65534",
		},
		E2B: E2B{
			Template:       "code-interpreter-v1",
			APIKeyEnv:      "E2B_API_KEY",
			SandboxTimeout: Duration{5 * time.Minute},
			Reuse:          "session",
		},
	}
}

// Hash is the sha256 (hex) of the effective policy: the common sections plus the active scheme's
// section, in a canonical JSON form, so two files that mean the same thing hash the same.
func (p *Policy) Hash() string {
	eff := struct {
		Version int    `json:"version"`
		Scheme  string `json:"scheme"`
		Name    string `json:"name"`
		Limits  Limits `json:"limits"`
		Audit   Audit  `json:"audit"`
		Section any    `json:"section"`
	}{p.Version, p.Scheme, p.Name, p.Limits, p.Audit, nil}
	switch p.Scheme {
	case SchemeAllowlist:
		a := p.Allowlist
		a.SetNet(a.Net())
		eff.Section = a
	case SchemeDocker:
		d := p.Docker
		d.SetNet(d.Net())
		eff.Section = d
	case SchemeE2B:
		eff.Section = p.E2B
	}
	b, _ := json.Marshal(eff) // cannot fail: plain data types only
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Command looks an allowlisted command up by name.
func (a *Allowlist) Command(name string) (*Command, bool) {
	for i := range a.Commands {
		if a.Commands[i].Name == name {
			return &a.Commands[i], true
		}
	}
	return nil, false
}

// interpreters are programs that run whatever code, script or program they are given, or write
// wherever their input (not their arguments) says: sed (its e and w commands), tar, cpio, zip,
// unzip, rsync and patch (archive and diff contents name the files written; some run programs),
// pagers and man (a shell escape). Allowlisting one allows anything, whatever else the allowlist
// says; the argument check cannot see inside a script or an archive.
var interpreters = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`python pypy node nodejs deno bun ruby perl php lua luajit tclsh wish R Rscript
		julia bash sh dash zsh ksh mksh fish csh tcsh busybox awk gawk mawk nawk env xargs nohup timeout nice
		stdbuf make gdb vi vim nvim emacs ed ex git ssh docker podman kubectl sudo su doas find parallel watch
		script expect
		sed tar cpio zip unzip rsync patch less more man`) {
		interpreters[n] = true
	}
}

// InterpreterNames lists the interpreter and program-runner names IsInterpreter knows, sorted.
func InterpreterNames() []string {
	out := make([]string, 0, len(interpreters))
	for n := range interpreters {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// IsInterpreter reports whether a command name (or a binary's base name) is an interpreter or
// program runner; version suffixes count ("python3.11", "perl5").
func IsInterpreter(name string) bool {
	return interpreters[strings.TrimRight(name, "0123456789.")]
}

// Clone is a deep copy: changing the copy's lists or maps never reaches p.
func (p *Policy) Clone() *Policy {
	c := *p
	c.Allowlist.Commands = slices.Clone(p.Allowlist.Commands)
	for i := range c.Allowlist.Commands {
		c.Allowlist.Commands[i].DenyArgs = slices.Clone(p.Allowlist.Commands[i].DenyArgs)
	}
	c.Allowlist.ReadPaths = slices.Clone(p.Allowlist.ReadPaths)
	c.Allowlist.Protect = slices.Clone(p.Allowlist.Protect)
	c.Allowlist.Env = maps.Clone(p.Allowlist.Env)
	return &c
}
