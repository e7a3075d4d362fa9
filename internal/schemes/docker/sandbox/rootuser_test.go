package sandbox

import (
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// TestRootUserWrittenWithZerosIsReported: docker.user = "00:00" runs the program as root (the
// engine reads the uid as a number); serve's layers (what --check and verify show) must say the
// non-root layer is off by policy, not report it in force.
func TestRootUserWrittenWithZerosIsReported(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).User = "00:00" }))
	res := mustCall(t, e, ToolShell, map[string]any{"script": "id -u"})
	if strings.TrimSpace(res.Stdout) != "0" {
		t.Fatalf("the premise: user 00:00 should run as uid 0, got %q (stderr %q)", res.Stdout, res.Stderr)
	}
	user := layerNamed(t, e, LayerUser)
	if user.Active || user.Off != executor.OffByPolicy || !strings.Contains(user.Detail, "root") {
		t.Fatalf("the program ran as root, but the user layer says %+v", user)
	}
}

// TestRootUserByNameIsReported: docker.user may name a user, which the engine resolves through the
// image's own /etc/passwd, and an image may map any name to uid 0 (attack round atk19b): the
// layers must say the non-root layer is off then, and in force for a name the image maps to
// another uid (the control).
func TestRootUserByNameIsReported(t *testing.T) {
	eng := needEngine(t)
	img := derivedImage(t, eng, "toor", "RUN echo 'toor:x:0:0::/root:/bin/sh' >> /etc/passwd && echo 'helper:x:4242:4242::/tmp:/bin/sh' >> /etc/passwd\n")
	for _, c := range []struct {
		user, uid string
		root      bool
	}{{"toor", "0", true}, {"helper", "4242", false}} {
		e := newExec(t, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).Image, dksec.Of(p).User = img, c.user }))
		res := mustCall(t, e, ToolShell, map[string]any{"script": "id -u"})
		if strings.TrimSpace(res.Stdout) != c.uid {
			t.Fatalf("the premise: user %s should run as uid %s in %s, got %q (stderr %q)", c.user, c.uid, img, res.Stdout, res.Stderr)
		}
		user := layerNamed(t, e, LayerUser)
		if c.root && (user.Active || user.Off != executor.OffByPolicy || !strings.Contains(user.Detail, "uid 0")) {
			t.Errorf("user %s ran as root, but the user layer says %+v", c.user, user)
		}
		if !c.root && (!user.Active || !strings.Contains(user.Detail, "uid "+c.uid)) {
			t.Errorf("user %s ran as uid %s, but the user layer says %+v", c.user, c.uid, user)
		}
	}
}

// layerNamed is e's layer of that name, as --check reports it.
func layerNamed(t *testing.T, e *Executor, name string) executor.Layer {
	t.Helper()
	for _, l := range e.Layers() {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("no %s layer", name)
	return executor.Layer{}
}
