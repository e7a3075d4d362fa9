// Package docker is the docker scheme's entry in the registry: a fresh locked-down container
// per call through the Docker Engine API (the executor is internal/schemes/docker/sandbox), with its threats,
// audit rules, harness adapter and negative controls.
package docker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Rules are the docker scheme's audit rules.
var Rules = []verify.Rule{
	{ID: "MS201", Severity: verify.High, Title: "docker network is not \"none\""},
	{ID: "MS202", Severity: verify.High, Title: "docker user is root or unset"},
	{ID: "MS203", Severity: verify.Medium, Title: "docker root filesystem is writable (read_only = false)"},
	{ID: "MS204", Severity: verify.Medium, Title: "the docker workspace mount is writable"},
	{ID: "MS205", Severity: verify.Info, Title: "no gVisor runtime: containers share the host kernel"},
	{ID: "MS206", Severity: verify.High, Title: "the docker workspace is, contains or is inside a system directory, reaches a home (is or contains one, lies in its dot directories), or holds the engine's socket"},
}

// Scheme is the registry entry.
var Scheme = &scheme.Scheme{
	Name:          dksec.Name,
	Summary:       "a fresh locked-down container per call (Docker Engine API)",
	Executor:      newExecutor,
	Layers:        sd.LayerIDs,
	Threats:       threats,
	Audit:         verify.Auditor{Rules: Rules, Check: audit},
	Adapter:       adapter{},
	Controls:      controls,
	ControlPolicy: controlPolicy,
	Host:          host,
	Measured:      measured,
	Bounds:        bounds,
	Needs:         needs,
	Proof:         proof,
	ServerEnv:     serverEnv,
	Wizard:        wizard,
	Bench:         benchRows,
}

// bounds: a host list's proxy is one per container, with its own connection bound and one
// across all containers, shared fairly between them.
func bounds(p *policy.Policy) []verify.Bound {
	var bs []verify.Bound
	if dksec.Of(p).Workspace != "" && dksec.Of(p).WorkspaceWritable {
		bs = verify.WorkspaceBounds(p.Limits)
	}
	if p.Limits.MaxFileBytes > 0 && (dksec.Of(p).Sessions() || dksec.Of(p).Workspace != "") { // session files, or the call mode's workspace files
		bs = append(bs, verify.FileBounds(p.Limits)...)
	}
	if dksec.Of(p).Net().Mode != policy.NetHosts {
		return bs
	}
	return append(append(bs, verify.EgressBounds(p.Limits, "container", "503 naming the bound")...),
		verify.Bound{Boundary: "egress", What: "proxy connections of all containers: max(256, 4 × the above, containers that may live at once)",
			Value: strconv.Itoa(sd.EgressTotal(p)),
			Past:  "shared fairly: a container holding less than its share (this bound / the containers holding connections) takes the place of one connection of the container holding the most (its oldest still waiting for a request head, else its oldest); one at its share gets 503 naming the bound"})
}

func newExecutor(p *policy.Policy, o scheme.ExecOptions) (executor.Executor, error) {
	// A missing image is pulled, with progress on stderr (stdout is the MCP channel).
	return sd.New(p, sd.Options{Logger: o.Logger, Pull: true, Progress: os.Stderr})
}

func audit(p *policy.Policy, add verify.Add) {
	d := *dksec.Of(p)
	if n := d.Net(); n.Mode == policy.NetNamed {
		add("MS201", "docker.network", "containers join network %q: they can reach the host's network, the internet, and each other (other calls' and sessions' containers on it)", `set network = "none", or list the hosts calls need: network = ["pypi.org"]`, n.Name)
	}
	if dksec.RootUser(d.User) { // "00:00" too: the engine reads the uid as a number
		add("MS202", "docker.user", "code runs as root in the container (user = %q)", `set user = "65534:65534"`, d.User)
	}
	if !d.ReadOnly {
		add("MS203", "docker.read_only", "code can rewrite the container's filesystem, including its tools, and fill the engine's disk through it (the container's own layer has no size bound)", "set read_only = true (a tmpfs /tmp stays writable)")
	}
	if d.Workspace != "" && d.WorkspaceWritable {
		add("MS204", "docker.workspace_writable", "code can change files in %s on the host (each call's changes are committed after checks, up to limits.workspace_quota, where serve --check shows the workspace layer)", "set workspace_writable = false unless code must write results there", d.Workspace)
	}
	// The same judgement serve makes at start-up, on the path as it resolves (symlinks, "..");
	// a workspace that does not exist yet is serve's to report.
	if host, _, err := engine.Locate(); d.Workspace != "" && err == nil {
		if _, _, err := sd.CheckWorkspace(d.Workspace, host); err != nil && !errors.Is(err, fs.ErrNotExist) {
			add("MS206", "docker.workspace", "%v", "use a dedicated directory such as ~/ai-workspace", err)
		}
	}
	if d.Runtime == "" {
		fix := `install gVisor and set runtime = "runsc"`
		if rt := registeredVMRuntime(); rt != "" {
			fix = fmt.Sprintf("%s is already registered with this engine: set runtime = %q (a call then starts in a VM-grade sandbox, slower to start)", rt, rt)
		}
		add("MS205", "docker.runtime", "containers share the host kernel: a kernel bug is an escape", fix)
	}
}

// registeredVMRuntime names a runtime the engine has registered that does not share the host
// kernel (runsc first), or "" when none, or when the engine does not answer within 2 s: MS205's
// fix then says to install one (trial25, #3: it said so with runsc registered). A variable for
// the tests.
var registeredVMRuntime = func() string {
	cl, err := engine.New()
	if err != nil {
		return ""
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, err := cl.Info(ctx)
	if err != nil {
		return ""
	}
	var names []string
	for name := range info.Runtimes {
		names = append(names, name)
	}
	return sd.VMRuntime(names)
}

// ControlImage is the image the negative controls run: MCPSANDBOX_TEST_IMAGE (tests build it
// offline with scripts/build-test-image.sh), else the default policy's image.
func ControlImage() string {
	if s := os.Getenv("MCPSANDBOX_TEST_IMAGE"); s != "" {
		return s
	}
	return dksec.Of(policy.Default(dksec.Name)).Image
}

// controlPolicy is the base the controls weaken: the default docker policy on the control
// image, with a 6s timeout (a cold container on a loaded engine took most of 3s before the
// program ran, and a control whose attack never ran stays silent; controls that need tight
// timing set their own). On its own it contains every control's scenario.
func controlPolicy() (*policy.Policy, error) {
	p := policy.Default(dksec.Name)
	p.Name = "harness-controls"
	dksec.Of(p).Image = ControlImage()
	p.Limits.Timeout = policy.Duration{Duration: 6 * time.Second}
	return p, nil
}

// host is the doctor's row for this scheme: the engine the environment names.
func host(ctx context.Context) []verify.Check { return []verify.Check{DockerEngine(ctx)} }
