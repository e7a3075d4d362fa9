package sandbox

import (
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/procid"
	"reflect"
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The container spec comes from the policy alone; every hardening setting is present.
func TestSpecHardening(t *testing.T) {
	p := policy.Default(dksec.Name)
	dksec.Of(p).Workspace = "/srv/ws"
	cfg, hc := newSpec(p).build("n", map[string]string{LabelApp: "1"}, false)
	if cfg.User != "65534:65534" || !cfg.NetworkDisabled || !cfg.OpenStdin || !cfg.StdinOnce || cfg.Tty {
		t.Errorf("config %+v", cfg)
	}
	for _, kv := range cfg.Env {
		if k, _, _ := strings.Cut(kv, "="); k != "LANG" && k != "HOME" && k != "PYTHONDONTWRITEBYTECODE" {
			t.Errorf("unexpected env %s", kv)
		}
	}
	if hc.NetworkMode != "none" || !hc.ReadonlyRootfs || len(hc.CapDrop) != 1 || hc.CapDrop[0] != "ALL" || len(hc.CapAdd) != 0 ||
		hc.Privileged || hc.Init == nil || *hc.Init || hc.SecurityOpt[0] != "no-new-privileges" || hc.LogConfig.Type != "none" {
		t.Errorf("host config %+v", hc)
	}
	if hc.Memory != 256<<20 || hc.MemorySwap != hc.Memory || *hc.PidsLimit != 64 || hc.NanoCPUs != 5e8 {
		t.Errorf("resources %+v", hc.Resources)
	}
	if tmp := hc.Tmpfs["/tmp"]; !strings.Contains(tmp, "nosuid") || !strings.Contains(tmp, "nodev") || !strings.Contains(tmp, "size=") {
		t.Errorf("tmpfs %q", tmp)
	}
	if len(hc.Ulimits) != 2 || hc.Ulimits[0].Name != "nofile" || hc.Ulimits[1].Name != "fsize" {
		t.Errorf("ulimits %+v", hc.Ulimits)
	}
	if len(hc.Mounts) != 1 || hc.Mounts[0].Source != "/srv/ws" || hc.Mounts[0].Target != "/workspace" || !hc.Mounts[0].ReadOnly {
		t.Errorf("mounts %+v", hc.Mounts)
	}
	dksec.Of(p).WorkspaceWritable = true
	dksec.Of(p).User = ""
	dksec.Of(p).SetNet(policy.Network{Mode: policy.NetNamed, Name: "host"})
	cfg, hc = newSpec(p).build("n", nil, false)
	if hc.Mounts[0].ReadOnly || cfg.User != "65534:65534" || cfg.NetworkDisabled || hc.NetworkMode != "host" {
		t.Errorf("writable workspace / default user / host network: %+v %+v", cfg, hc)
	}
	// Cold and pooled containers differ only in the wrapper's start-up mode (its 4th argument):
	// the hardening is the same.
	pc, ph := newSpec(p).build("n", nil, true)
	if cfg.Cmd[3] != "cold" || pc.Cmd[3] != "pooled" || !strings.Contains(entrypoint, `"$1" "$4"`) {
		t.Errorf("wrapper modes: cold %q, pooled %q", cfg.Cmd[3], pc.Cmd[3])
	}
	pc.Cmd[3] = "cold"
	if !reflect.DeepEqual(pc, cfg) || !reflect.DeepEqual(ph, hc) {
		t.Errorf("a pooled container's spec differs from a cold one's beyond the mode:\n%+v %+v\n%+v %+v", pc, ph, cfg, hc)
	}
}

// Liveness is judged dead only when provable.
func TestJudge(t *testing.T) {
	me := instance{procid.Instance{Host: "h", Machine: "m", Boot: "b", PIDNS: "pid:[1]", PID: 10, Start: 100}}
	for _, tc := range []struct {
		name string
		o    instance
		want liveness
	}{
		{"itself", me, alive},
		{"other host", instance{procid.Instance{Host: "x", Machine: "m", Boot: "b", PIDNS: "pid:[1]", PID: 999999999, Start: 1}}, unknown},
		{"other machine", instance{procid.Instance{Host: "h", Machine: "x", Boot: "b", PIDNS: "pid:[1]", PID: 999999999, Start: 1}}, unknown},
		{"other pid namespace", instance{procid.Instance{Host: "h", Machine: "m", Boot: "b", PIDNS: "pid:[2]", PID: 999999999, Start: 1}}, unknown},
		{"no boot id", instance{procid.Instance{Host: "h", Machine: "m", PIDNS: "pid:[1]", PID: 999999999, Start: 1}}, unknown},
	} {
		if got := me.judge(tc.o); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	o, ok := instanceFromLabels(me.labels())
	if !ok || o != me {
		t.Errorf("labels round trip: %+v %v", o, ok)
	}
}

func TestLayerIDsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, id := range LayerIDs {
		if seen[id] {
			t.Errorf("layer %q twice", id)
		}
		seen[id] = true
	}
	if len(LayerIDs) != 18 {
		t.Errorf("%d layer IDs", len(LayerIDs))
	}
}

// A host list keeps network none and adds only the proxy's read-only socket mount and the
// proxy variables; the spec alone never opens a network.
func TestSpecEgress(t *testing.T) {
	p := policy.Default(dksec.Name)
	n, err := policy.NetworkHosts("pypi.org")
	if err != nil {
		t.Fatal(err)
	}
	dksec.Of(p).SetNet(n)
	s := newSpec(p)
	s.egress, s.egressDir = true, "/tmp/mcpsandbox-egress-x"
	cfg, hc := s.build("n", nil, false)
	if hc.NetworkMode != "none" || !cfg.NetworkDisabled {
		t.Errorf("host list: network mode %q, disabled %v", hc.NetworkMode, cfg.NetworkDisabled)
	}
	if len(hc.Mounts) != 1 || hc.Mounts[0].Source != s.egressDir || hc.Mounts[0].Target != egressMount || !hc.Mounts[0].ReadOnly {
		t.Errorf("mounts %+v", hc.Mounts)
	}
	env := strings.Join(cfg.Env, " ")
	for _, want := range []string{"HTTPS_PROXY=http://127.0.0.1:3128", "https_proxy=", "HTTP_PROXY=", "http_proxy=", "NO_PROXY=localhost,127.0.0.1,::1", "PIP_PROXY=", "npm_config_https_proxy="} {
		if !strings.Contains(env, want) {
			t.Errorf("env %q lacks %s", env, want)
		}
	}
	// a host list without the container's own socket directory mounts nothing (never a shared one)
	s.egressDir = ""
	if _, hc = s.build("n", nil, false); len(hc.Mounts) != 0 {
		t.Errorf("no socket directory: mounts %+v", hc.Mounts)
	}
	// without the executor's proxy (egressDir unset) nothing is mounted or set
	cfg, hc = newSpec(p).build("n", nil, false)
	if len(hc.Mounts) != 0 || strings.Contains(strings.Join(cfg.Env, " "), "PROXY") {
		t.Errorf("no proxy: mounts %+v env %v", hc.Mounts, cfg.Env)
	}
}

// The file tools act as the container's user where the host can know it: a number, with nobody
// for a name (only the image resolves it) or a missing group, and no one else for root.
func TestContainerFileUser(t *testing.T) {
	for u, want := range map[string]string{"1001:1002": "1001:1002", "65534:65534": "65534:65534", "1001": "1001:65534",
		"app": "65534:65534", "app:staff": "65534:65534", "1001:staff": "1001:65534", "0:0": "root", "00": "root", "": "65534:65534"} {
		got := "root"
		if fu := containerFileUser(u); fu != nil {
			got = fmt.Sprintf("%d:%d", fu.UID, fu.GID)
		}
		if got != want {
			t.Errorf("container user %q: the tools act as %s, want %s", u, got, want)
		}
	}
}
