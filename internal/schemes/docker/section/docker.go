// Package section is the docker scheme's part of the policy file, its [docker] table: the image, the network, the user, the workspace mount, the pool, the runtime and session reuse (policy.Section, registered
// with the policy package when linked).
package section

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Name is the container-per-call scheme's name and its section's table.
const Name = "docker"

func init() {
	policy.RegisterSection(Name, 20, func() policy.Section { return new(Docker) })
}

// Of is p's docker section.
func Of(p *policy.Policy) *Docker { return p.SectionFor(Name).(*Docker) }

// Docker is the container-per-call scheme.
type Docker struct {
	Image string `toml:"image" json:"image"`
	// Egress is the `network` key as written: "none", a docker network name or a list of hosts.
	// Read it through Net() (or NetworkName); set it with SetNet.
	Egress            policy.Network `toml:"network" json:"network"`
	ReadOnly          bool           `toml:"read_only" json:"read_only"`
	User              string         `toml:"user" json:"user"`
	Workspace         string         `toml:"workspace" json:"workspace"`
	WorkspaceWritable bool           `toml:"workspace_writable" json:"workspace_writable"`
	Runtime           string         `toml:"runtime" json:"runtime"`
	Pool              int            `toml:"pool" json:"pool"`
	// Reuse is "call" (a fresh container per call, the default; "" reads as "call") or
	// "session" (one container per MCP session, with a long-lived Python interpreter).
	// SessionIdle and MaxSessions apply to "session" only: zero means the default
	// (DefaultDockerSessionIdle, DefaultMaxSessionContainers). Empty values are left out of the file
	// and the policy's hash, so a policy written before they existed keeps its hash.
	Reuse       string          `toml:"reuse,omitempty" json:"reuse,omitempty"`
	SessionIdle policy.Duration `toml:"session_idle,omitempty" json:"session_idle,omitzero"`
	MaxSessions int             `toml:"max_sessions,omitzero" json:"max_sessions,omitempty"`
}

// The session defaults (docker.reuse = "session").
const (
	DefaultDockerSessionIdle    = 10 * time.Minute
	DefaultMaxSessionContainers = 4
	maxSessionContainers        = 64
)

// WorkspaceDir is the host directory calls write in: the workspace when it is mounted writable
// ("" else). serve and verify keep its own files (the policy, the audit log) out of it.
func (d *Docker) WorkspaceDir() string {
	if d.WorkspaceWritable {
		return d.Workspace
	}
	return ""
}

// ReadDirs: calls read the mounted workspace, writable or not; the audit log must not lie in it.
func (d *Docker) ReadDirs() (string, []string) {
	if d.Workspace == "" {
		return "", nil
	}
	return "docker.workspace", []string{d.Workspace}
}

// WorkspaceMount is the workspace as serve's start log says it: the host directory and whether
// calls may write it.
func (d *Docker) WorkspaceMount() (string, bool) { return d.Workspace, d.WorkspaceWritable }

// Sessions says whether containers live for an MCP session (docker.reuse = "session").
func (d *Docker) Sessions() bool { return d.Reuse == "session" }

// Idle is docker.session_idle, or its default.
func (d *Docker) Idle() time.Duration {
	if d.SessionIdle.Duration > 0 {
		return d.SessionIdle.Duration
	}
	return DefaultDockerSessionIdle
}

// SessionCap is docker.max_sessions, or its default.
func (d *Docker) SessionCap() int {
	if d.MaxSessions > 0 {
		return d.MaxSessions
	}
	return DefaultMaxSessionContainers
}

func (d *Docker) Validate(bool) []policy.Problem {
	var ps []policy.Problem
	add := func(key, msg, fix string, args ...any) {
		ps = append(ps, policy.Problem{Key: key, Msg: fmt.Sprintf(msg, args...), Fix: fix})
	}
	if d.Image == "" {
		add("docker.image", "missing", `set image = "python:3.12-slim" or a local image`)
	}
	ps = append(ps, policy.ValidateNetwork("docker.network", d.Net(), true)...)
	if d.User != "" && !policy.ValidUIDGID(d.User) && !policy.ValidName(d.User) {
		add("docker.user", "%q is not a user", `use "uid:gid", e.g. "65534:65534"`, d.User)
	}
	if d.Workspace != "" && !filepath.IsAbs(d.Workspace) {
		add("docker.workspace", "%q is not absolute", policy.AbsFix(d.Workspace, "use an absolute host path"), d.Workspace)
	}
	if d.Pool < 0 || d.Pool > 64 {
		add("docker.pool", "%d is outside 0..64", "use 0 (no pool) to 8", d.Pool)
	}
	if err := CheckRuntimeName(d.Runtime); err != nil {
		add("docker.runtime", "%v", `use "" (the engine's default), "crun" or "runsc"`, err)
	}
	return append(ps, d.validateSessions()...)
}

func (d *Docker) validateSessions() []policy.Problem {
	var ps []policy.Problem
	add := func(key, msg, fix string, args ...any) {
		ps = append(ps, policy.Problem{Key: key, Msg: fmt.Sprintf(msg, args...), Fix: fix})
	}
	known := true
	switch d.Reuse {
	case "", "call", "session":
	default:
		known = false
		fix := `use "call" (a fresh container per call) or "session" (one container per MCP session)`
		if near := policy.Nearest(strings.ToLower(d.Reuse), []string{"call", "session"}); near != "" {
			fix = fmt.Sprintf("did you mean %q? %s", near, fix)
		}
		add("docker.reuse", "%q is not a reuse mode", fix, d.Reuse)
	}
	if d.Sessions() && d.WorkspaceWritable {
		// Each call's writes are committed from a container's own overlay layer once the
		// container is gone; a session's container outlives its calls, so no call's writes
		// could be committed checked. Refused rather than applied unchecked.
		add("docker.reuse", `"session" cannot be used with docker.workspace_writable = true (a session's container outlives its calls, `+
			`so their workspace writes could not be committed through the checked layer)`,
			`set workspace_writable = false (the workspace stays readable; /tmp persists across the session's calls), or reuse = "call"`)
	}
	if d.SessionIdle.Duration < 0 || d.SessionIdle.Duration > 24*time.Hour || (d.SessionIdle.Duration > 0 && d.SessionIdle.Duration < time.Second) {
		add("docker.session_idle", "%s is outside 1s..24h", `use e.g. "10m"`, d.SessionIdle.String())
	}
	if d.MaxSessions < 0 || d.MaxSessions > maxSessionContainers {
		add("docker.max_sessions", "%d is outside 1..%d", "use e.g. 4 (0 = the default, 4)", d.MaxSessions, maxSessionContainers)
	}
	// a misspelt reuse is one problem, said above, not a second one about the session keys it
	// was meant to switch on (trial35 F16: reuse = "sessions")
	if !d.Sessions() && (known || mutated("docker-reuse-cascades")) && (d.SessionIdle.Duration != 0 || d.MaxSessions != 0) {
		add("docker.reuse", "docker.session_idle and docker.max_sessions apply only to reuse = \"session\"", `set reuse = "session", or remove them`)
	}
	return ps
}

// RootUser says whether a docker user ("name", "uid", "name:group" or "uid:gid", as the engine
// takes it) is root: empty (the image's user, root in most images), "root", or a uid the engine
// reads as 0 — "0", and also "00" or "000:1000", which the engine parses as numbers too.
func RootUser(user string) bool {
	u, _, _ := strings.Cut(user, ":")
	if u == "" || u == "root" {
		return true
	}
	if mutated("atk19b-docker-root-zeros") {
		return u == "0" // the check as written before: the string, not the number
	}
	for i := 0; i < len(u); i++ {
		if u[i] != '0' {
			return false
		}
	}
	return true
}

// CheckRuntimeName says whether s can name a runtime registered with the engine ("" = its
// default): a name from daemon.json's runtimes, never a path or a flag.
func CheckRuntimeName(s string) error {
	if s == "" || policy.ValidName(s) {
		return nil
	}
	return fmt.Errorf("%q is not a runtime name (the name the engine's daemon.json registers, e.g. crun or runsc)", s)
}

// Net is the effective docker network: none, a docker network or a host list.
func (d *Docker) Net() policy.Network {
	switch d.Egress.Mode {
	case policy.NetHosts, policy.NetAll:
		return d.Egress
	case policy.NetNamed:
		if d.Egress.Name != "none" {
			return d.Egress
		}
	}
	return policy.Network{Mode: policy.NetNone, Name: "none"}
}

// SetNet sets the docker network.
func (d *Docker) SetNet(n policy.Network) { d.Egress = n }

// NetworkName is the docker network containers join: the named one, else "none" (a host list's
// containers have no network of their own: the egress proxy is their only way out).
func (d *Docker) NetworkName() string {
	if n := d.Net(); n.Mode == policy.NetNamed {
		return n.Name
	}
	return "none"
}

// Network is the `network` key: "none", a docker network name or a host list.
func (d *Docker) Network() (policy.Network, bool) { return d.Net(), true }

// SetNetwork sets the `network` key.
func (d *Docker) SetNetwork(n policy.Network) bool { d.SetNet(n); return true }

func (d *Docker) Defaults() {
	*d = Docker{
		Image:    "python:3.12-slim",
		Egress:   policy.Network{Mode: policy.NetNone, Name: "none"},
		ReadOnly: true,
		User:     "65534:65534",
	}
}

func (d *Docker) BeforeDecode() {}

func (d *Docker) AfterDecode(func(...string) bool) { d.SetNet(d.Net()) }

func (d *Docker) Payload() any {
	c := *d
	c.SetNet(c.Net())
	return c
}

func (d *Docker) Copy() policy.Section {
	c := *d
	return &c
}

// Summary: the image and its confinement, the workspace mount, the pool, the runtime.
func (d *Docker) Summary() []string {
	user := d.User
	if d.Workspace != "" && d.WorkspaceWritable && d.User == "65534:65534" {
		// serve runs such containers as the workspace's owner, where not root (trial35 F3)
		user = "the writable workspace's owner (65534:65534 if root owns it)"
	}
	out := []string{fmt.Sprintf("image %s, network %s, read-only root %s, user %s", d.Image, d.Net().String(), policy.OnOff(d.ReadOnly), user)}
	if d.Workspace != "" {
		rw := "read-only"
		if d.WorkspaceWritable {
			rw = "writable"
		}
		out = append(out, fmt.Sprintf("workspace %s at /workspace (%s)", d.Workspace, rw))
	}
	out = append(out, fmt.Sprintf("pre-started containers: %d", d.Pool))
	if d.Sessions() {
		out = append(out, fmt.Sprintf("one container per MCP session (reuse = session), at most %d at once, removed after %s idle", d.SessionCap(), policy.Duration{Duration: d.Idle()}.String()))
	}
	if d.Runtime != "" {
		out = append(out, "runtime "+d.Runtime)
	}
	return out
}
