package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// makeVenv makes a virtual environment as `python3 -m venv` lays one out (bin/python a link to
// the base interpreter, pyvenv.cfg beside bin, a site-packages dir) with a module in it, under
// dir; it returns the venv's python.
func makeVenv(t *testing.T, dir, base string, copies bool) string {
	t.Helper()
	out, err := exec.Command(base, "-c", "import sys; print('python%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		t.Skipf("%s does not run: %v", base, err)
	}
	site := filepath.Join(dir, "lib", strings.TrimSpace(string(out)), "site-packages")
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	py := filepath.Join(dir, "bin", "python")
	if copies { // python -m venv --copies
		b, err := os.ReadFile(base)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(py, b, 0o755); err != nil {
			t.Fatal(err)
		}
	} else if err := os.Symlink(base, py); err != nil {
		t.Fatal(err)
	}
	cfg := "home = " + filepath.Dir(base) + "\ninclude-system-site-packages = false\n"
	os.WriteFile(filepath.Join(dir, "pyvenv.cfg"), []byte(cfg), 0o644)
	os.WriteFile(filepath.Join(site, "venvmark.py"), []byte("MARK = 'from-the-venv'\n"), 0o644)
	return py
}

// A venv's python, pinned as init pins it, runs in its venv: sys.prefix is the venv and its
// packages import. Started under its name alone, Python would find the base interpreter on the
// fixed PATH and never see the venv.
func TestVenvPythonRunsInItsVenv(t *testing.T) {
	base, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err != nil {
		t.Skipf("no /usr/bin/python3: %v", err)
	}
	for _, where := range []string{"venv", ".venv", "copies"} {
		t.Run(where, func(t *testing.T) {
			root := t.TempDir()
			os.Chmod(filepath.Dir(root), 0o755)
			os.Chmod(root, 0o755)
			// venv: outside the workspace, read as the pin's install; .venv: a home's dot
			// directory, narrowed to its bin and lib dirs and its pyvenv.cfg; copies: its python
			// a copy of the base interpreter, not a link
			t.Setenv("HOME", root)
			venv := filepath.Join(root, where)
			py := makeVenv(t, venv, base, where == "copies")
			os.WriteFile(filepath.Join(venv, "token"), []byte("secret"), 0o644)
			c, err := generate.Pin(py)
			if err != nil {
				t.Fatal(err)
			}
			if c.Path != py {
				t.Fatalf("init pinned the venv's python as %s, want the link %s (started by its target's path, Python never finds the venv)", c.Path, py)
			}
			ws := filepath.Join(root, "ws")
			os.Mkdir(ws, 0o755)
			p, err := defaultPolicy(ws)
			if err != nil {
				t.Fatal(err)
			}
			alsec.Of(p).Commands = append(alsec.Of(p).Commands, c)
			exe, _ := os.Executable()
			e := readyExecutor(t, p, exe)
			code := "import sys, os, venvmark\nprint(sys.prefix, venvmark.MARK)\ntry:\n    open(os.path.join(sys.prefix, 'token')).read(); print('token read')\nexcept OSError: pass"
			args, _ := json.Marshal(map[string]any{"command": "python", "args": []string{"-c", code}})
			res, err := e.run(context.Background(), executor.Call{Args: args, Timeout: 20 * time.Second, MaxOutput: 64 << 10})
			if err != nil {
				t.Fatal(err)
			}
			want := venv + " from-the-venv"
			if where != ".venv" {
				want += "\ntoken read" // an install dir of its own is read whole, as a pinned prefix is
			}
			if res.ExitCode != 0 || strings.TrimSpace(res.Stdout) != want {
				t.Fatalf("the venv's python did not run in its venv as expected: exit %d, stdout %q (want %q), stderr %s", res.ExitCode, res.Stdout, want, res.Stderr)
			}
		})
	}
}

// A venv dir that is a link (here to the user's home, laid out as a venv) is judged where it
// leads: its name outside the home must not open the home for reading as an install prefix.
func TestVenvPrefixJudgedWhereItLeads(t *testing.T) {
	base, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err != nil {
		t.Skipf("no /usr/bin/python3: %v", err)
	}
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("HOME", home)
	makeVenv(t, home, base, false)
	os.WriteFile(filepath.Join(home, "secret"), []byte("s"), 0o600)
	link := filepath.Join(t.TempDir(), "v")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	pc, err := pin(policy.Command{Name: "python", Path: filepath.Join(link, "bin", "python")})
	if err != nil {
		t.Fatal(err)
	}
	if pc.argv0 != filepath.Join(link, "bin", "python") {
		t.Errorf("argv0 %q, want the venv's path", pc.argv0)
	}
	for _, d := range pc.readDirs {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if r == home || strings.HasPrefix(home+"/", r+"/") {
			t.Errorf("read dir %s (%s) opens the home %s", d, r, home)
		}
	}
}
