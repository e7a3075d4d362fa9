package policy

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// SchemeAllowlist is the hardened host-exec scheme's name and its section's table.
const SchemeAllowlist = "allowlist"

func init() {
	registerSection(SchemeAllowlist, 10, func(p *Policy) Section { return &p.Allowlist })
}

// WorkspaceDir is the commands' working directory (Policy.WorkspaceDir).
func (a *Allowlist) WorkspaceDir() string { return a.Workspace }

// Allowlist is the hardened host-exec scheme.
type Allowlist struct {
	Workspace string `toml:"workspace" json:"workspace"`
	// Egress is the `network` key as written: false, true or a list of hosts. Read it through
	// Net(); set it with SetNet.
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
// dependencies, and the start-up files of a home (shell rc files, systemd user units, autostart
// entries) for a workspace that is one. A pattern without "/" matches that name at any depth; a pattern with "/" is
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
	// shell and session start-up files, for a workspace that is (or is synced into) a home:
	// shells source the rc files, systemd --user starts the units linked under
	// .config/systemd/user, desktops start .config/autostart entries (KDE also its scripts)
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
	".zlogin", ".zlogout", ".xprofile", ".xsessionrc", ".xinitrc", ".config/fish", ".config/environment.d",
	".config/systemd", ".local/share/systemd", ".config/autostart", ".config/autostart-scripts", ".config/plasma-workspace",
	// what else a home holds that runs code: git's user config (fsmonitor runs in every
	// repository), programs first on PATH, python's user site (a .pth there runs at every
	// start), editors' and multiplexers' rc files. Not .ssh or *.pth: an interpreter's code
	// that names ~/.ssh/config, or a model saved as model.pth, would be refused everywhere;
	// a workspace that is a home is verify's MS105.
	".gitconfig", ".config/git", ".local/bin", ".local/lib", ".pam_environment",
	".vimrc", ".tmux.conf", ".inputrc",
	// more tool managers that run what their files name
	".yarn/releases", ".yarn/plugins", "mise.local.toml", ".mise.local.toml", ".lfsconfig",
	// other version-control systems' repositories (their config names pagers, editors, hooks:
	// Jujutsu's ui.pager and fix.tools, Sapling's [hooks]) and bazelisk's choice of the bazel it
	// downloads and runs (attack round 4, finding 8 and 15)
	".jj", ".sl", ".bzr", "_darcs", ".pijul", ".bazeliskrc", ".bazelversion",
	// configuration that editors execute when a file of the folder is opened or saved: ESLint,
	// Prettier, Tailwind and PostCSS load JavaScript configs, pylint runs init-hook, mypy imports
	// the plugins it names, Emacs evaluates .dir-locals.el (pyproject.toml and setup.cfg can carry
	// the pylint/mypy settings too and stay writable by design: content to review)
	"eslint.config.*", ".eslintrc.js", ".eslintrc.cjs", "prettier.config.*", ".prettierrc.js",
	".prettierrc.cjs", ".prettierrc.mjs", "tailwind.config.*", "postcss.config.*", ".postcssrc.js",
	".pylintrc", "mypy.ini", ".mypy.ini", ".dir-locals.el", // not pylintrc: a bare word of letters is a
	// name split/csplit could generate from any prefix, which would refuse them everywhere
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

// Command looks an allowlisted command up by name.
func (a *Allowlist) Command(name string) (*Command, bool) {
	for i := range a.Commands {
		if a.Commands[i].Name == name {
			return &a.Commands[i], true
		}
	}
	return nil, false
}

func (a *Allowlist) validate(active bool) []Problem {
	var ps []Problem
	add := func(key, msg, fix string, args ...any) {
		ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf(msg, args...), Fix: fix})
	}
	switch {
	case a.Workspace == "":
		if active {
			add("allowlist.workspace", "missing", `set workspace = "/absolute/dir" (the only place commands may write)`)
		}
	case !filepath.IsAbs(a.Workspace):
		add("allowlist.workspace", "%q is not absolute", "use an absolute path", a.Workspace)
	case filepath.Clean(a.Workspace) == "/":
		add("allowlist.workspace", "the workspace cannot be /", "use a dedicated directory such as ~/ai-workspace")
	}
	ps = append(ps, validateNetwork("allowlist.network", a.Net(), false)...)
	for k := range a.Env {
		key := "allowlist.env." + k
		switch {
		case !envNameRe.MatchString(k):
			add(key, "%q is not a valid variable name", "use letters, digits and '_'", k)
		case k == "PATH":
			add(key, "PATH is fixed by mcpsandbox", "remove it: commands run by pinned absolute path")
		case strings.HasPrefix(k, "LD_") || strings.HasPrefix(k, "DYLD_") || k == "PYTHONPATH" || k == "PYTHONSTARTUP" || k == "NODE_OPTIONS" || k == "BASH_ENV" || k == "ENV":
			add(key, "%s lets the environment inject code into allowlisted binaries", "remove it", k)
		}
	}
	if active && len(a.Commands) == 0 {
		add("allowlist.commands", "no commands are allowlisted", "add [[allowlist.commands]] entries (mcpsandbox init --allow wc,sort writes them pinned)")
	}
	seen := map[string]bool{}
	for i, c := range a.Commands {
		key := "allowlist.commands[" + strconv.Itoa(i) + "]"
		if !cmdNameRe.MatchString(c.Name) {
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
		if !hexRe.MatchString(c.SHA256) {
			add(key+".sha256", "%q is not a sha256 (64 lowercase hex digits)", "pin it: sha256sum "+c.Path, c.SHA256)
		}
		for j, g := range c.DenyArgs {
			if _, err := CompileGlob(g); err != nil {
				add(fmt.Sprintf("%s.deny_args[%d]", key, j), "%q is not a valid glob: %v", "use * ? and [..] only, balanced", g, err)
			}
		}
	}
	if a.User != "" && !userRe.MatchString(a.User) {
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
		case trim && !slices.Contains(DefaultProtect, name):
			add(key, "%q trims %q, which is not in the default protect list", "trim an entry of the default list exactly as `mcpsandbox explain` prints it, or drop the '!'", g, name)
		case filepath.IsAbs(name) || slices.Contains(strings.Split(name, "/"), ".."):
			add(key, "%q is not a path inside the workspace", `use a path relative to the workspace without "..", e.g. ".husky"`, g)
		default:
			if _, err := CompileGlob(name); err != nil {
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
			add(fmt.Sprintf("allowlist.read_paths[%d]", i), "%q is not absolute", "use absolute paths", r)
		}
	}
	return ps
}

// Net is the effective allowlist network: none, all or a host list.
func (a *Allowlist) Net() Network {
	if a.Egress.Mode == NetAll {
		return Network{Mode: NetAll}
	}
	if a.Egress.Mode == NetHosts || a.Egress.Mode == NetNamed {
		return a.Egress
	}
	return Network{Mode: NetNone}
}

// AllHosts reports whether network = true: every host, with no proxy.
func (a *Allowlist) AllHosts() bool { return a.Net().Mode == NetAll }

// SetNet sets the allowlist network.
func (a *Allowlist) SetNet(n Network) { a.Egress = n }

// Network is the `network` key: false, true or a host list.
func (a *Allowlist) Network() (Network, bool) { return a.Net(), true }

// SetNetwork sets the `network` key.
func (a *Allowlist) SetNetwork(n Network) bool { a.SetNet(n); return true }

func (a *Allowlist) defaults() {
	*a = Allowlist{
		Env:         map[string]string{"LANG": "C.UTF-8"},
		MaxFileSize: 64 << 20,
	}
}

// beforeDecode: a file's env is the complete environment, never merged with the default.
func (a *Allowlist) beforeDecode() { a.Env = nil }

func (a *Allowlist) afterDecode(defined func(...string) bool) {
	a.SetNet(a.Net())
	if !defined(SchemeAllowlist, "env") {
		a.Env = map[string]string{"LANG": "C.UTF-8"}
	}
}

func (a *Allowlist) payload() any {
	c := *a
	c.SetNet(c.Net())
	return c
}

func (a *Allowlist) deepCopy() {
	a.Commands = slices.Clone(a.Commands)
	for i := range a.Commands {
		a.Commands[i].DenyArgs = slices.Clone(a.Commands[i].DenyArgs)
	}
	a.ReadPaths = slices.Clone(a.ReadPaths)
	a.Protect = slices.Clone(a.Protect)
	a.Env = maps.Clone(a.Env)
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
