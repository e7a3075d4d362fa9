package sandbox

import (
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// envWorkspace lays out, in ws, interpreter environments under names other than .venv (attack
// round atk40 F4): a venv named venv, tox's .tox/py311, a conda prefix named env, and a
// site-packages in no environment.
func envWorkspace(t *testing.T, ws string) {
	t.Helper()
	for _, f := range []string{"venv/pyvenv.cfg", "venv/lib/python3.11/site-packages/ok.py", ".tox/py311/pyvenv.cfg",
		".tox/py311/lib/python3.11/site-packages/ok.py", "env/conda-meta/history", "env/lib/python3.11/site-packages/ok.py",
		"vendor/site-packages/ok.py", "src/app.py"} {
		p := filepath.Join(ws, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x\n"), 0o644)
	}
}

// A path argument that would write into an interpreter environment, whatever its name, or a
// site-packages' start-up file, is refused as a protected path (atk40 F4); the project's files
// beside them are not.
func TestProtectRefusesEnvironmentsByMarker(t *testing.T) {
	e, _, _ := testExec(t, nil)
	envWorkspace(t, e.ws)
	for _, p := range []string{"venv/lib/python3.11/site-packages/zz.pth", "venv/bin/python", ".tox/py311/lib/python3.11/site-packages/x.py",
		"env/lib/python3.11/site-packages/sitecustomize.py", "vendor/site-packages/zz.pth", "new/pyvenv.cfg", "__pypackages__/3.11/lib/zz.pth"} {
		if _, err := e.checkArgs(e.cmd("sort"), strings.Fields("-o "+p+" src/app.py")); refusedBy(err) != "allowlist.protect" {
			t.Errorf("sort -o %s: %v, want a protect refusal", p, err)
		}
	}
	for _, p := range []string{"src/out.txt", "vendor/site-packages/mod.py", "models/model.pth", "venvs.txt"} {
		if _, err := e.checkArgs(e.cmd("sort"), strings.Fields("-o "+p+" src/app.py")); err != nil {
			t.Errorf("sort -o %s refused: %v", p, err)
		}
	}
}

// An interpreter's call finds the environments below the workspace's top level by their
// markers and has them mounted read-only, as .venv is (atk40 F4): a .pth it writes into a venv
// named venv, tox's or a conda prefix's site-packages fails with EROFS; the project's files are
// written.
func TestEnvironmentsReadOnlyForInterpreters(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("read-only mounts need a mount namespace: root")
	}
	e := pythonExecutor(t, nil, false)
	envWorkspace(t, e.ws)
	filepath.WalkDir(e.ws, func(p string, d fs.DirEntry, err error) error { return os.Chown(p, 65534, 65534) })
	probe := `
import errno
def w(path):
    try:
        with open(path, "a") as f:
            f.write("y")
        return "written"
    except OSError as e:
        return errno.errorcode.get(e.errno)
for p in ["venv/lib/python3.11/site-packages/zz.pth", ".tox/py311/lib/python3.11/site-packages/zz.pth", "env/lib/python3.11/site-packages/zz.pth", "venv/pyvenv.cfg", "src/app.py"]:
    print(p, w(p))
`
	res := runPython(t, e, fmt.Sprintf("exec(bytes.fromhex(%q).decode())", hex.EncodeToString([]byte(probe))))
	want := map[string]string{"venv/lib/python3.11/site-packages/zz.pth": "EROFS", ".tox/py311/lib/python3.11/site-packages/zz.pth": "EROFS",
		"env/lib/python3.11/site-packages/zz.pth": "EROFS", "venv/pyvenv.cfg": "EROFS", "src/app.py": "written"}
	for _, l := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		i := strings.LastIndex(l, " ")
		if i < 0 {
			continue
		}
		if w, ok := want[l[:i]]; ok && w != l[i+1:] {
			t.Errorf("%s: %s, want %s", l[:i], l[i+1:], w)
		}
		delete(want, l[:i])
	}
	if len(want) > 0 {
		t.Errorf("no report for %v: %q %q", want, res.Stdout, res.Stderr)
	}
}
