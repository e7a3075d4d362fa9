package docker

import (
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Under reuse = "session" the row on processes left after a call says they outlive calls by
// design, and until when; per call it has no gap (trial34 F4: "serve removes each container
// after its call" was all it said).
func TestExplainSessionProcesses(t *testing.T) {
	var row *verify.ThreatRule
	for i := range threats {
		if strings.HasPrefix(threats[i].Threat, "leave processes running") {
			row = &threats[i]
		}
	}
	if row == nil || row.Gap == nil {
		t.Fatalf("no gap on the processes row: %+v", row)
	}
	p := policy.Default(dksec.Name)
	if g := row.Gap(p); g != "" {
		t.Errorf("per call: %q", g)
	}
	dksec.Of(p).Reuse = "session"
	if g := row.Gap(p); !strings.Contains(g, "outlive its calls by design") || !strings.Contains(g, "docker.session_idle (10m)") {
		t.Errorf("per session: %q", g)
	}
}

// explain's verdicts on a docker policy's choices are true for each (trial35 F5): an unset or
// host-kernel runtime is NOT enforced and says what this engine has to close it (runsc
// registered: set it; none: install gVisor), a VM-grade one is enforced; a writable workspace
// opens that directory only (write: partly) and leaves all but the protected names to the model
// (plant: partly, as the allowlist's protect list; a read-only one is enforced); a host list
// opens only those hosts (partly), a docker network everything (NOT enforced); the disk row is
// partly only with a writable workspace (trial37 F11). Catches docker-explain-runtime-unsaid,
// docker-explain-plant-enforced, explain-opening-not-enforced and docker-explain-disk-caveat-always.
func TestExplainDockerVerdicts(t *testing.T) {
	defer func(f func() string) { registeredVMRuntime = f }(registeredVMRuntime)
	registered := "runsc"
	registeredVMRuntime = func() string { return registered }
	const kernel, write, plant, reach, disk = "escape to the host through a kernel bug", "write, truncate or delete host files", "plant code the host runs later", "reach the network", "fill the disk"
	hosts, err := policy.NetworkHosts("pypi.org")
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]bool{sd.LayerRuntime: true, sd.LayerNetwork: true}
	for _, c := range []struct {
		name       string
		set        func(d *dksec.Docker)
		registered string
		active     map[string]bool // over the default: every layer but runtime and network in force
		threat     string
		status     verify.Status
		note       string
	}{
		{"runtime-unset-runsc-there", func(d *dksec.Docker) {}, "runsc", nil, kernel, verify.NotEnforced, `runsc is registered with this engine: set runtime = "runsc"`},
		{"runtime-unset-none-there", func(d *dksec.Docker) {}, "", nil, kernel, verify.NotEnforced, `install gVisor and set runtime = "runsc"`},
		{"runtime-runc", func(d *dksec.Docker) { d.Runtime = "runc" }, "runsc", nil, kernel, verify.NotEnforced, `runtime = "runc": containers share the host kernel`},
		{"runtime-runsc", func(d *dksec.Docker) { d.Runtime = "runsc" }, "runsc", all, kernel, verify.Enforced, ""},
		{"workspace-writable", func(d *dksec.Docker) { d.Workspace, d.WorkspaceWritable = "/srv/ws", true }, "", nil, write, verify.Partly, "calls can change, truncate or delete files in /srv/ws"},
		{"workspace-writable-unchecked", func(d *dksec.Docker) { d.Workspace, d.WorkspaceWritable = "/srv/ws", true },
			"", map[string]bool{sd.LayerWorkspace: false, sd.LayerNetwork: true}, write, verify.Partly, "unchecked"},
		{"workspace-read-only", func(d *dksec.Docker) { d.Workspace = "/srv/ws" }, "", nil, write, verify.Enforced, ""},
		{"plant-writable", func(d *dksec.Docker) { d.Workspace, d.WorkspaceWritable = "/srv/ws", true }, "", nil, plant, verify.Partly, "model-controlled content"},
		{"plant-writable-unchecked", func(d *dksec.Docker) { d.Workspace, d.WorkspaceWritable = "/srv/ws", true },
			"", map[string]bool{sd.LayerWorkspace: false, sd.LayerNetwork: true}, plant, verify.NotEnforced, ""},
		{"plant-read-only", func(d *dksec.Docker) { d.Workspace = "/srv/ws" }, "", nil, plant, verify.Enforced, ""},
		{"network-hosts", func(d *dksec.Docker) { d.SetNet(hosts) }, "", all, reach, verify.Partly, "HTTP(S) to the hosts docker.network lists is open: pypi.org"},
		{"network-bridge", func(d *dksec.Docker) { d.SetNet(policy.Network{Mode: policy.NetNamed, Name: "bridge"}) }, "", nil, reach, verify.NotEnforced, "bridge"},
		{"network-none", func(d *dksec.Docker) {}, "", all, reach, verify.Enforced, ""},
		{"disk-no-workspace", func(d *dksec.Docker) {}, "", nil, disk, verify.Enforced, ""},
		{"disk-read-only", func(d *dksec.Docker) { d.Workspace = "/srv/ws" }, "", nil, disk, verify.Enforced, ""},
		{"disk-writable", func(d *dksec.Docker) { d.Workspace, d.WorkspaceWritable = "/srv/ws", true }, "", nil, disk, verify.Partly, "per call (limits.workspace_quota)"},
		{"disk-writable-unchecked", func(d *dksec.Docker) { d.Workspace, d.WorkspaceWritable = "/srv/ws", true },
			"", map[string]bool{sd.LayerWorkspace: false, sd.LayerNetwork: true}, disk, verify.Partly, "per file (fsize) only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			registered = c.registered
			p := policy.Default(dksec.Name)
			c.set(dksec.Of(p))
			var ls []executor.Layer
			for _, id := range sd.LayerIDs {
				on := id != sd.LayerRuntime && id != sd.LayerNetwork
				if v, ok := c.active[id]; ok {
					on = v
				}
				ls = append(ls, executor.Layer{Name: id, Active: on})
			}
			ts, err := verify.Explain(p, ls, Scheme.Threats)
			if err != nil {
				t.Fatal(err)
			}
			for _, th := range ts {
				if strings.HasPrefix(th.Threat, c.threat) {
					if th.Status != c.status || !strings.Contains(th.Note, c.note) {
						t.Errorf("%s: %s %q, want %s with %q", c.threat, th.Status, th.Note, c.status, c.note)
					}
					return
				}
			}
			t.Fatalf("no threat %q", c.threat)
		})
	}
}
