package docker

import "testing"

func TestSmoke(t *testing.T) {
	eng := needEngine(t)
	for _, pool := range []int{0, 2} {
		p := testPolicy()
		p.Docker.Pool = pool
		e := newExec(t, eng, p)
		for _, l := range e.Layers() {
			t.Logf("layer %-22s %v %s", l.Name, l.Active, l.Detail)
		}
		r := mustCall(t, e, ToolPython, map[string]any{"code": "import os,sys; print('hi', os.getuid()); print('err', file=sys.stderr); sys.exit(3)"})
		t.Logf("%+v", r)
		r = mustCall(t, e, ToolShell, map[string]any{"script": "id; echo out; echo err >&2; exit 5"})
		t.Logf("%+v", r)
	}
}
