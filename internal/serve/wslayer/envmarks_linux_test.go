package wslayer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// commitJudges writes each path in refused and applied into a fresh layer over ws (made by
// setup) and commits it with the default protect list: the first must be refused, the second
// applied.
func commitJudges(t *testing.T, ws string, refused, applied []string) {
	t.Helper()
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(slices.Clone(refused), applied...) {
		write(t, filepath.Join(l.Upper, p), "import os; os.system('id > /tmp/pwned')\n")
	}
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range refused {
		if b, _ := os.ReadFile(filepath.Join(ws, p)); strings.Contains(string(b), "pwned") {
			t.Errorf("%s was written (%s)", p, Summary(w))
		}
	}
	for _, p := range applied {
		if b, _ := os.ReadFile(filepath.Join(ws, p)); !strings.Contains(string(b), "pwned") {
			t.Errorf("%s was not applied (%s; refused: %q)", p, Summary(w), refusedWhy(w, p))
		}
	}
}

// An interpreter environment is protected by what it is, not by its name (attack round atk40
// F4): a directory holding pyvenv.cfg (venv, virtualenv, tox's .tox/py311) or conda-meta/ (a
// conda prefix), and __pypackages__, whole, at any depth; a marker a call makes (it would make
// its directory an environment an editor starts); and, when the workspace root is itself an
// environment, its parts. Beside them, ordinary files are applied.
func TestCommitProtectsEnvironmentsByMarker(t *testing.T) {
	ws := t.TempDir()
	site := "lib/python3.11/site-packages"
	for _, env := range []string{"venv", "env", ".tox/py311", "sub/project/virtualenv"} {
		write(t, filepath.Join(ws, env, "pyvenv.cfg"), "home = /usr/bin\n")
		write(t, filepath.Join(ws, env, site, "ok.py"), "1\n")
	}
	write(t, filepath.Join(ws, "conda", "conda-meta", "history"), "\n")
	write(t, filepath.Join(ws, "conda", "etc", "conda", "activate.d", "x.sh"), "\n")
	write(t, filepath.Join(ws, "__pypackages__", "3.11", "lib", "ok.py"), "1\n")
	write(t, filepath.Join(ws, "src", "app.py"), "1\n")
	commitJudges(t, ws, []string{
		"venv/" + site + "/zz.pth", "venv/" + site + "/ok.py", "venv/bin/python", "env/" + site + "/requests/__init__.py",
		".tox/py311/" + site + "/zz.pth", "sub/project/virtualenv/bin/activate", "conda/etc/conda/activate.d/x.sh",
		"conda/lib/python3.11/site-packages/x.py", "__pypackages__/3.11/lib/zz.pth", "newenv/pyvenv.cfg", "other/conda-meta/x",
	}, []string{"src/app.py", "src/venv.py", "envs/notes.txt", "sub/project/main.py"})

	t.Run("root", func(t *testing.T) {
		// python -m venv . in a project: the environment's parts, not the project's files
		ws := t.TempDir()
		write(t, filepath.Join(ws, "pyvenv.cfg"), "home = /usr/bin\n")
		write(t, filepath.Join(ws, site, "ok.py"), "1\n")
		commitJudges(t, ws, []string{site + "/zz.pth", "bin/python", site + "/ok.py"}, []string{"src/app.py", "README.md"})
	})
}

// What Python runs at start from any site-packages is protected wherever it lies, in an
// environment found by its marker or not (a site-packages a call makes, one on a PYTHONPATH):
// *.pth, sitecustomize and usercustomize (a module, a package or an extension). A model's
// weights saved as model.pth elsewhere stay the call's to write (attack round atk40 F4).
func TestCommitProtectsSitePackagesStartupFiles(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "vendor", "lib", "site-packages", "ok.py"), "1\n")
	commitJudges(t, ws, []string{"vendor/lib/site-packages/zz.pth", "vendor/lib/site-packages/sitecustomize.py",
		"made/site-packages/usercustomize/__init__.py", "made/dist-packages/deep/er.pth",
		"vendor/lib/site-packages/sitecustomize.cpython-311-x86_64-linux-gnu.so", "vendor/lib/Site-Packages/ZZ.PTH"},
		[]string{"models/model.pth", "vendor/lib/site-packages/mypkg.py", "src/sitecustomize_notes.md"})
}

// Round atk40's in-project package directories on the protect list (Yarn PnP's archives and
// SDKs, Composer's autoloader and plugin list, bundler's in-project gems, .ocamlinit) are
// refused; a file beside them is applied.
func TestCommitRefusesRoundAtk40Files(t *testing.T) {
	commitRefuses(t, []string{".yarn/cache/lodash-npm-4.17.21-x.zip", ".yarn/sdks/typescript/lib/tsserver.js", "vendor/autoload.php",
		"vendor/composer/installed.json", "vendor/bundle/ruby/3.1.0/gems/rake-13.0.6/lib/rake.rb", ".ocamlinit"}, "vendor/modules.txt")
}
