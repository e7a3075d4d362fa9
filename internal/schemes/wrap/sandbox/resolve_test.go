package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A script is run by its #! interpreter (found on PATH through env -S), the install dirs are the
// script's and the interpreter's own, never a shared dir, and ~/.local gives its bin dir only.
func TestResolveProgram(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	interpDir := filepath.Join(root, "opt", "lang", "bin")
	toolDir := filepath.Join(home, ".local", "bin")
	for _, d := range []string{interpDir, toolDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	interp := filepath.Join(interpDir, "lang")
	if err := os.WriteFile(interp, []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(toolDir, "server")
	if err := os.WriteFile(script, []byte("#!/usr/bin/env -S lang -u\nbody\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	pr, err := resolveProgram([]string{"server", "--flag"}, toolDir+":"+interpDir, home, true)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Binary != interp || !slices.Equal(pr.Argv, []string{interp, "-u", script, "--flag"}) {
		t.Fatalf("binary %s argv %q", pr.Binary, pr.Argv)
	}
	if !slices.Contains(pr.ExecDirs, toolDir) || !slices.Contains(pr.ExecDirs, filepath.Join(root, "opt", "lang")) || slices.Contains(pr.ExecDirs, filepath.Join(home, ".local")) {
		t.Fatalf("install dirs %q", pr.ExecDirs)
	}
	if _, err := resolveProgram([]string{"nope"}, toolDir, home, true); err == nil {
		t.Fatal("a program not on PATH resolves")
	}
	tmpBin := filepath.Join(os.TempDir(), filepath.Base(root)+"-bin")
	os.WriteFile(tmpBin, []byte("\x7fELF"), 0o755)
	defer os.Remove(tmpBin)
	if pr, err := resolveProgram([]string{tmpBin}, "", home, true); err != nil || slices.Contains(pr.ExecDirs, os.TempDir()) {
		t.Fatalf("a program directly in %s: %v %q (the shared dir must not be an install dir)", os.TempDir(), err, pr.ExecDirs)
	}
}

// A server installed in a home's dot directory (~/.cargo/bin, a venv at ~/.venv, bun's ~/.bun)
// gets its bin dir and runtime subdirs, a venv's pyvenv.cfg and the node_modules tree a node
// program lies in, never the dot directory whole: cargo keeps a crates.io token in
// ~/.cargo/credentials.toml. A deeper install (~/.nvm/versions/node/v22) is listed whole.
func TestResolveProgramNarrowsDotDirInstalls(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	cargo := filepath.Join(home, ".cargo")
	venv := filepath.Join(home, ".venv")
	for _, d := range []string{filepath.Join(cargo, "bin"), filepath.Join(cargo, "registry"), filepath.Join(venv, "bin"), filepath.Join(venv, "lib", "python3", "site-packages")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, body string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(cargo, "credentials.toml"), "[registry]\ntoken = \"cio-secret\"\n", 0o600)
	write(filepath.Join(cargo, "bin", "rust-srv"), "\x7fELF", 0o755)
	py := filepath.Join(venv, "bin", "python")
	write(py, "\x7fELF", 0o755)
	write(filepath.Join(venv, "pyvenv.cfg"), "home = /usr/bin\n", 0o644)
	write(filepath.Join(venv, "bin", "py-srv"), "#!"+py+"\n", 0o755)

	pr, err := resolveProgram([]string{"rust-srv"}, filepath.Join(cargo, "bin"), home, true)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(pr.ExecDirs, cargo) || !slices.Contains(pr.ExecDirs, filepath.Join(cargo, "bin")) {
		t.Errorf("~/.cargo/bin/rust-srv: install dirs %q, want ~/.cargo/bin and not ~/.cargo (its credentials.toml)", pr.ExecDirs)
	}
	pr, err = resolveProgram([]string{"py-srv"}, filepath.Join(venv, "bin"), home, true)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(pr.ExecDirs, venv) || !slices.Contains(pr.ExecDirs, filepath.Join(venv, "bin")) ||
		!slices.Contains(pr.ExecDirs, filepath.Join(venv, "lib")) || !slices.Contains(pr.ReadFiles, filepath.Join(venv, "pyvenv.cfg")) {
		t.Errorf("a venv at ~/.venv: install dirs %q, files %q, want its bin and lib and pyvenv.cfg, not the venv whole", pr.ExecDirs, pr.ReadFiles)
	}
	bun := filepath.Join(home, ".bun")
	pkg := filepath.Join(bun, "install", "global", "node_modules", "srv")
	for _, d := range []string{filepath.Join(bun, "bin"), filepath.Join(pkg, "bin")} {
		os.MkdirAll(d, 0o755)
	}
	write(filepath.Join(pkg, "bin", "srv.js"), "#!"+py+"\n", 0o755) // any interpreter will do
	if err := os.Symlink("../install/global/node_modules/srv/bin/srv.js", filepath.Join(bun, "bin", "srv")); err != nil {
		t.Fatal(err)
	}
	pr, err = resolveProgram([]string{"srv"}, filepath.Join(bun, "bin"), home, true)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(pr.ExecDirs, bun) || !slices.Contains(pr.ExecDirs, filepath.Join(bun, "install", "global", "node_modules")) {
		t.Errorf("bun's ~/.bun/bin/srv: install dirs %q, want its node_modules tree and not ~/.bun", pr.ExecDirs)
	}
	nvm := filepath.Join(home, ".nvm", "versions", "node", "v22")
	os.MkdirAll(filepath.Join(nvm, "bin"), 0o755)
	write(filepath.Join(nvm, "bin", "node"), "\x7fELF", 0o755)
	if pr, err = resolveProgram([]string{"node"}, filepath.Join(nvm, "bin"), home, true); err != nil || !slices.Contains(pr.ExecDirs, nvm) {
		t.Errorf("nvm's node: install dirs %q (%v), want %s whole", pr.ExecDirs, err, nvm)
	}
}

// A server installed in a project (npm install srv; command ./node_modules/.bin/srv, a link to
// ../srv/dist/index.js) finds its dependencies where npm hoisted them, beside it in the
// project's node_modules: that tree is readable, the project's other files are not.
func TestResolveProgramProjectNodeModules(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	proj := filepath.Join(root, "proj")
	nm := filepath.Join(proj, "node_modules")
	dist := filepath.Join(nm, "@scope", "srv", "dist")
	interpDir := filepath.Join(root, "opt", "node", "bin")
	for _, d := range []string{filepath.Join(nm, ".bin"), dist, filepath.Join(nm, "dep"), interpDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	interp := filepath.Join(interpDir, "node")
	if err := os.WriteFile(interp, []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dist, "index.js"), []byte("#!/usr/bin/env node\nimport 'dep'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../@scope/srv/dist/index.js", filepath.Join(nm, ".bin", "srv")); err != nil {
		t.Fatal(err)
	}
	pr, err := resolveProgram([]string{"srv"}, filepath.Join(nm, ".bin")+":"+interpDir, home, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pr.ExecDirs, nm) || slices.Contains(pr.ExecDirs, proj) {
		t.Errorf("./node_modules/.bin/srv: install dirs %q, want the project's node_modules tree %s (its hoisted dependencies) and not the project", pr.ExecDirs, nm)
	}
	for _, tree := range []string{"/tmp/node_modules/x/i.js", "/usr/lib/node_modules/x/i.js", filepath.Join(home, ".cache", "node_modules", "x", "i.js")} {
		if got := nodeModulesTree(tree, home); got != "" {
			t.Errorf("nodeModulesTree(%s) = %s, want none (a shared dir, a system dir, a home's dot dir)", tree, got)
		}
	}
}
