//go:build linux

package sandbox

import (
	"os"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"golang.org/x/sys/unix"
)

// A layer not in force says why where serve knows: a namespace the host did not give, a policy
// that turns it off, a layer the scheme never provides; a layer the probe tried and found not in
// force says nothing more (verify's advice for it is the probe's).
func TestLayersSayWhyOff(t *testing.T) {
	p := policy.Default(alsec.Name)
	e := &Executor{pol: p, al: alsec.Of(p), dropUID: true, attr: nsAttr{flags: unix.CLONE_NEWNET | unix.CLONE_NEWNS},
		probe: helper.ProbeReport{LandlockABI: 6}}
	rows := func() map[string]string {
		ls := e.offReasons([]executor.Layer{{Name: LayerCPUShare}, {Name: LayerPIDNS}, {Name: LayerNetNS}, {Name: LayerNetIsolation},
			{Name: LayerSeccomp}, {Name: LayerProtectedRO}, {Name: LayerLandlockFS}, {Name: LayerUserNS, NotNeeded: true},
			{Name: LayerIPCNS, Active: true}, {Name: LayerLandlockUDP, Off: executor.OffUnavailable}})
		m := map[string]string{}
		for _, l := range ls {
			m[l.Name] = l.Off
		}
		return m
	}
	want := map[string]string{LayerCPUShare: executor.OffNotProvided, LayerPIDNS: executor.OffUnavailable, LayerNetNS: "", LayerNetIsolation: "",
		LayerSeccomp: "", LayerProtectedRO: "", LayerLandlockFS: "", LayerUserNS: "", LayerIPCNS: "", LayerLandlockUDP: executor.OffUnavailable}
	for n, off := range rows() {
		if off != want[n] {
			t.Errorf("network = false: %s is off %q, want %q", n, off, want[n])
		}
	}
	alsec.Of(p).SetNet(policy.Network{Mode: policy.NetAll})
	e.attr.flags &^= unix.CLONE_NEWNET
	got := rows()
	for _, n := range []string{LayerNetNS, LayerNetIsolation} {
		if got[n] != executor.OffByPolicy {
			t.Errorf("network = true: %s is off %q, want %q", n, got[n], executor.OffByPolicy)
		}
	}
}

// On this host, a Landlock row the kernel is too old for is marked unavailable (verify then
// says so, not that the probe was not stopped), and cpu share is one the scheme never provides.
func TestLayersOffOnThisHost(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := defaultPolicy(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(p, Options{HelperPath: exe})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Ready(); err != nil {
		t.Skipf("the helper cannot start here: %v", err)
	}
	for _, l := range e.Layers() {
		switch {
		case strings.HasPrefix(l.Detail, "not on this kernel") && l.Off != executor.OffUnavailable:
			t.Errorf("%s: the kernel lacks it, but off = %q", l.Name, l.Off)
		case l.Name == LayerCPUShare && l.Off != executor.OffNotProvided:
			t.Errorf("%s: off = %q, want %q", l.Name, l.Off, executor.OffNotProvided)
		case l.Active && l.Off != "":
			t.Errorf("%s is in force but off = %q", l.Name, l.Off)
		}
	}
}

// A serve that is not root has no privilege to drop: the unprivileged-user layer is not needed
// by design (verify's row is OK and says so), not "not available on this host" (trial35 F4); as
// root it is measured.
func TestUnprivilegedLayerNotNeededWhenNotRoot(t *testing.T) {
	l := unprivilegedLayer(false, 1001, 1001, 1001)
	if l.Active || !l.NotNeeded || !strings.Contains(l.Detail, "not needed: serve is not root") || l.Off != "" {
		t.Errorf("not root: %+v", l)
	}
	if l := unprivilegedLayer(true, 65534, 65534, 65534); !l.Active || l.NotNeeded {
		t.Errorf("root, measured 65534: %+v", l)
	}
	if l := unprivilegedLayer(true, 65534, 65534, 0); l.Active || l.NotNeeded {
		t.Errorf("root, measured 0: %+v", l)
	}
}
