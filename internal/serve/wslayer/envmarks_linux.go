package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Interpreter environments are protected by what they are, not by their name (attack round
// atk40 F4): only `.venv` was on the protect list, while `python -m venv venv`, `env`, tox's
// `.tox/py311`, a conda prefix `./env` and PEP 582's `__pypackages__` were ordinary directories;
// a call's `.pth` in their site-packages ran at the host's next start of that interpreter (the
// user's `venv/bin/python`, pytest, an editor probing the workspace's interpreter). A directory
// holding `pyvenv.cfg` (venv, virtualenv, tox) or `conda-meta/` is an environment, whole, at
// any depth and whatever its name; the markers themselves are protected everywhere (a call
// making one would make a directory an environment the editor starts); and under any
// site-packages, what Python runs at start without an import: `*.pth`, `sitecustomize`,
// `usercustomize`.

// envMarkers are the entries that make their directory an interpreter environment.
var envMarkers = map[string]string{
	fold("pyvenv.cfg"): "a Python virtual environment (pyvenv.cfg: venv, virtualenv, tox)",
	fold("conda-meta"): "a conda environment (conda-meta)",
}

// envNames are directories that are environments by their name: PEP 582's packages (pdm).
var envNames = map[string]string{fold("__pypackages__"): "PEP 582's __pypackages__ (pdm): its lib's .pth files run at start"}

// rootEnvParts are an environment's parts when the workspace root itself is one (`python -m venv
// .` in a project): the rest of the root stays the project's.
var rootEnvParts = map[string]bool{}

func init() {
	for _, n := range []string{"bin", "lib", "lib64", "include", "Include", "Lib", "Scripts", "Library", "etc", "conda-meta", "pyvenv.cfg"} {
		rootEnvParts[fold(n)] = true
	}
}

// EnvMarker says what interpreter environment the directory dir is by its content or name ("" =
// none). Any entry named pyvenv.cfg counts (Python reads a link to one): fail closed.
func EnvMarker(dir string) string {
	if mutated("workspace-protect-venv-marker") {
		return ""
	}
	if why, ok := envNames[fold(filepath.Base(dir))]; ok {
		return why
	}
	if _, err := os.Lstat(filepath.Join(dir, "pyvenv.cfg")); err == nil {
		return envMarkers[fold("pyvenv.cfg")]
	}
	if st, err := os.Stat(filepath.Join(dir, "conda-meta")); err == nil && st.IsDir() {
		return envMarkers[fold("conda-meta")]
	}
	return ""
}

// EnvRootPart says whether name, at the root of a workspace that is itself an environment, is
// one of the environment's parts (bin, lib, pyvenv.cfg, …).
func EnvRootPart(name string) bool { return rootEnvParts[fold(name)] }

// EnvPathHook says why rel (a slash path from the workspace root) is protected by its names
// alone ("" = it is not): a marker or __pypackages__ on its way, or what Python runs at start
// from a site-packages (a new one a call makes included).
func EnvPathHook(rel string) string {
	parts := strings.Split(rel, "/")
	inSite := false
	for i, part := range parts {
		f := fold(part)
		if !mutated("workspace-protect-venv-marker") {
			if why, ok := envMarkers[f]; ok {
				return strconv.Quote(strings.Join(parts[:i+1], "/")) + " marks its directory as " + why + ": the host's interpreter and editors run what it holds"
			}
			if why, ok := envNames[f]; ok {
				return strconv.Quote(strings.Join(parts[:i+1], "/")) + " is " + why
			}
		}
		if inSite && !mutated("workspace-protect-site-packages-pth") && sitePackagesHook(f) {
			return strconv.Quote(strings.Join(parts[:i+1], "/")) + " lies in a site-packages: Python runs its *.pth, sitecustomize and usercustomize at every start of the interpreter"
		}
		if f == fold("site-packages") || f == fold("dist-packages") {
			inSite = true
		}
	}
	return ""
}

// sitePackagesHook: a (folded) name under a site-packages that Python runs at start: a .pth
// file, or sitecustomize/usercustomize as a module, a package or an extension.
func sitePackagesHook(f string) bool {
	if strings.HasSuffix(f, fold(".pth")) {
		return true
	}
	for _, m := range []string{"sitecustomize", "usercustomize"} {
		if f == fold(m) || strings.HasPrefix(f, fold(m+".")) {
			return true
		}
	}
	return false
}

// envAt records the directory d, whose entries are ents, as an environment when a marker is
// among them (or by its name), for envMatch: the walk does not look inside one (protected
// whole, as .venv and node_modules), but the workspace root's other entries are the project's.
func (g *gitGuard) envAt(d string, ents []os.DirEntry) (skip bool) {
	if mutated("workspace-protect-venv-marker") {
		return false
	}
	why, ok := envNames[fold(filepath.Base(d))]
	if !ok || d == g.ws {
		why = ""
		for _, e := range ents {
			if w, ok := envMarkers[fold(e.Name())]; ok {
				why = w
				break
			}
		}
	}
	if why == "" {
		return false
	}
	if g.envs == nil {
		g.envs = map[string]string{}
	}
	if d == g.ws {
		g.envs[""] = "the workspace's root is " + why
	} else {
		g.envs[fold(g.relOf(d))] = strconv.Quote(g.relOf(d)) + " is " + why + ", found by its marker whatever its name"
	}
	return d != g.ws
}

// envMatch says which interpreter environment protects rel (from the root), "" when none.
func (g *gitGuard) envMatch(rel string) string {
	if why := EnvPathHook(rel); why != "" {
		return why
	}
	g.inside() // the walk finds the environments
	if len(g.envs) == 0 {
		return ""
	}
	parts := strings.Split(fold(rel), "/")
	if why, ok := g.envs[""]; ok && rootEnvParts[parts[0]] {
		return fmt.Sprintf("%s: %q is part of it, and the host's interpreter and editors run what it holds", why, strings.SplitN(rel, "/", 2)[0])
	}
	for i := 1; i <= len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		if why, ok := g.envs[d]; ok {
			return why + ": the host's interpreter and editors run what it holds"
		}
	}
	return ""
}
