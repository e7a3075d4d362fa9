package policy

import (
	"fmt"
	"path/filepath"
)

// SchemeDocker is the container-per-call scheme's name and its section's table.
const SchemeDocker = "docker"

func init() {
	registerSection(SchemeDocker, 20, func(p *Policy) Section { return &p.Docker })
}

// Docker is the container-per-call scheme.
type Docker struct {
	Image string `toml:"image" json:"image"`
	// Egress is the `network` key as written: "none", a docker network name or a list of hosts.
	// Read it through Net() (or NetworkName); set it with SetNet.
	Egress            Network `toml:"network" json:"network"`
	ReadOnly          bool    `toml:"read_only" json:"read_only"`
	User              string  `toml:"user" json:"user"`
	Workspace         string  `toml:"workspace" json:"workspace"`
	WorkspaceWritable bool    `toml:"workspace_writable" json:"workspace_writable"`
	Runtime           string  `toml:"runtime" json:"runtime"`
	Pool              int     `toml:"pool" json:"pool"`
}

func (d *Docker) validate(bool) []Problem {
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

// Net is the effective docker network: none, a docker network or a host list.
func (d *Docker) Net() Network {
	switch d.Egress.Mode {
	case NetHosts, NetAll:
		return d.Egress
	case NetNamed:
		if d.Egress.Name != "none" {
			return d.Egress
		}
	}
	return Network{Mode: NetNone, Name: "none"}
}

// SetNet sets the docker network.
func (d *Docker) SetNet(n Network) { d.Egress = n }

// NetworkName is the docker network containers join: the named one, else "none" (a host list's
// containers have no network of their own: the egress proxy is their only way out).
func (d *Docker) NetworkName() string {
	if n := d.Net(); n.Mode == NetNamed {
		return n.Name
	}
	return "none"
}

// Network is the `network` key: "none", a docker network name or a host list.
func (d *Docker) Network() (Network, bool) { return d.Net(), true }

// SetNetwork sets the `network` key.
func (d *Docker) SetNetwork(n Network) bool { d.SetNet(n); return true }

func (d *Docker) defaults() {
	*d = Docker{
		Image:    "python:3.12-slim",
		Egress:   Network{Mode: NetNone, Name: "none"},
		ReadOnly: true,
		User:     "65534:65534",
	}
}

func (d *Docker) beforeDecode() {}

func (d *Docker) afterDecode(func(...string) bool) { d.SetNet(d.Net()) }

func (d *Docker) payload() any {
	c := *d
	c.SetNet(c.Net())
	return c
}

func (d *Docker) deepCopy() {}

// Summary: the image and its confinement, the workspace mount, the pool, the runtime.
func (d *Docker) Summary() []string {
	out := []string{fmt.Sprintf("image %s, network %s, read-only root %s, user %s", d.Image, d.Net().String(), onOff(d.ReadOnly), d.User)}
	if d.Workspace != "" {
		rw := "read-only"
		if d.WorkspaceWritable {
			rw = "writable"
		}
		out = append(out, fmt.Sprintf("workspace %s at /workspace (%s)", d.Workspace, rw))
	}
	out = append(out, fmt.Sprintf("pre-started containers: %d", d.Pool))
	if d.Runtime != "" {
		out = append(out, "runtime "+d.Runtime)
	}
	return out
}
