package policy

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	nameRe    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	cmdNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$`)
	envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	hexRe     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	userRe    = regexp.MustCompile(`^[0-9]+:[0-9]+$`)
)

// validate returns every problem; defined reports whether a key was written in the file, so
// sections of schemes not in use are checked only when present.
func (p *Policy) validate(defined func(...string) bool) []Problem {
	var ps []Problem
	add := func(key, msg, fix string, args ...any) {
		ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf(msg, args...), Fix: fix})
	}
	switch {
	case !defined("version"):
		add("version", "missing", "add `version = 1` at the top of the file")
	case p.Version != 1:
		add("version", "version %d is not supported by this mcpsandbox", "use `version = 1` or upgrade mcpsandbox", p.Version)
	}
	if !slices.Contains(Schemes, p.Scheme) {
		if p.Scheme == "" {
			add("scheme", "missing", `add scheme = "allowlist", "docker" or "e2b"`)
		} else {
			add("scheme", "unknown scheme %q", `use "allowlist", "docker" or "e2b"`, p.Scheme)
		}
	}
	if !nameRe.MatchString(p.Name) {
		add("name", "%q is not a valid server name", "use letters, digits, '-', '_' or '.', at most 64 characters", p.Name)
	}

	l := p.Limits
	if l.Timeout.Duration <= 0 {
		add("limits.timeout", "must be positive", `use e.g. "30s"`)
	} else if l.Timeout.Duration > MaxTimeout {
		add("limits.timeout", "%s is over the hard maximum of %s", `use at most "10m"`, l.Timeout, MaxTimeout)
	}
	if l.MaxOutputBytes < 1024 || l.MaxOutputBytes > 64<<20 {
		add("limits.max_output_bytes", "%s is outside 1KiB..64MiB", `use e.g. "64KiB"`, l.MaxOutputBytes)
	}
	if l.MaxConcurrent < 1 || l.MaxConcurrent > 256 {
		add("limits.max_concurrent", "%d is outside 1..256", "use e.g. 4", l.MaxConcurrent)
	}
	if l.Memory < 16<<20 {
		add("limits.memory", "%s is below 16MiB: nothing useful starts", `use e.g. "256MiB"`, l.Memory)
	}
	if l.Pids < 1 || l.Pids > 32768 {
		add("limits.pids", "%d is outside 1..32768", "use e.g. 64", l.Pids)
	}
	if l.CPUs <= 0 || l.CPUs > 1024 {
		add("limits.cpus", "%g must be above 0", "use e.g. 0.5 (half a core)", l.CPUs)
	}
	if l.MaxSessions < 1 || l.MaxSessions > 4096 {
		add("limits.max_sessions", "%d is outside 1..4096", "use e.g. 64", l.MaxSessions)
	}
	if l.SessionIdle.Duration < time.Minute || l.SessionIdle.Duration > 24*time.Hour {
		add("limits.session_idle", "%s is outside 1m..24h", `use e.g. "30m"`, l.SessionIdle)
	}
	if l.MaxConnections < 8 || l.MaxConnections > 8192 {
		add("limits.max_connections", "%d is outside 8..8192", "use e.g. 256", l.MaxConnections)
	}
	if l.EgressConnections < 1 || l.EgressConnections > 1024 {
		add("limits.egress_connections", "%d is outside 1..1024", "use e.g. 32", l.EgressConnections)
	}
	if p.Audit.Path != "" && !filepath.IsAbs(p.Audit.Path) {
		add("audit.path", "%q is not absolute", `use an absolute path, or "" for the default under $XDG_STATE_HOME`, p.Audit.Path)
	}

	if p.Scheme == SchemeAllowlist || defined("allowlist") {
		ps = append(ps, p.Allowlist.validate(p.Scheme == SchemeAllowlist)...)
	}
	if p.Scheme == SchemeDocker || defined("docker") {
		ps = append(ps, p.Docker.validate()...)
	}
	if p.Scheme == SchemeE2B || defined("e2b") {
		ps = append(ps, p.E2B.validate()...)
	}
	return ps
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

func (d *Docker) validate() []Problem {
	var ps []Problem
	add := func(key, msg, fix string, args ...any) {
		ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf(msg, args...), Fix: fix})
	}
	if d.Image == "" {
		add("docker.image", "missing", `set image = "python:3.12-slim" or a local image`)
	}
	ps = append(ps, validateNetwork("docker.network", d.Net(), true)...)
	if d.User != "" && !userRe.MatchString(d.User) && !nameRe.MatchString(d.User) {
		add("docker.user", "%q is not a user", `use "uid:gid", e.g. "65534:65534"`, d.User)
	}
	if d.Workspace != "" && !filepath.IsAbs(d.Workspace) {
		add("docker.workspace", "%q is not absolute", "use an absolute host path", d.Workspace)
	}
	if d.Pool < 0 || d.Pool > 64 {
		add("docker.pool", "%d is outside 0..64", "use 0 (no pool) to 8", d.Pool)
	}
	if err := CheckRuntimeName(d.Runtime); err != nil {
		add("docker.runtime", "%v", `use "" (the engine's default), "crun" or "runsc"`, err)
	}
	return ps
}

// CheckRuntimeName says whether s can name a runtime registered with the engine ("" = its
// default): a name from daemon.json's runtimes, never a path or a flag.
func CheckRuntimeName(s string) error {
	if s == "" || nameRe.MatchString(s) {
		return nil
	}
	return fmt.Errorf("%q is not a runtime name (the name the engine's daemon.json registers, e.g. crun or runsc)", s)
}

func (e *E2B) validate() []Problem {
	var ps []Problem
	add := func(key, msg, fix string, args ...any) {
		ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf(msg, args...), Fix: fix})
	}
	if e.Template == "" {
		add("e2b.template", "missing", `set template = "code-interpreter-v1"`)
	}
	if !envNameRe.MatchString(e.APIKeyEnv) {
		add("e2b.api_key_env", "%q is not an environment variable name", `name the variable holding the key, e.g. "E2B_API_KEY"; never the key itself`, e.APIKeyEnv)
	}
	if e.APIURL != "" {
		if u, err := url.Parse(e.APIURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add("e2b.api_url", "%q is not an http(s) URL", `use "" for https://api.e2b.app`, e.APIURL)
		}
	}
	if e.SandboxTimeout.Duration <= 0 || e.SandboxTimeout.Duration > 24*time.Hour {
		add("e2b.sandbox_timeout", "%s is outside 1s..24h", `use e.g. "5m"`, e.SandboxTimeout)
	}
	if e.Reuse != "call" && e.Reuse != "session" {
		add("e2b.reuse", "%q is not a reuse mode", `use "call" or "session"`, e.Reuse)
	}
	return ps
}
