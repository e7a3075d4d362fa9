package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
)

// envMatch says which interpreter environment protects the resolved absolute path p, "" when
// none (attack round atk40 F4): a directory that is one by its marker (pyvenv.cfg, conda-meta/)
// or __pypackages__, whatever its name and at any depth; a marker itself; what a site-packages
// runs at start (*.pth, sitecustomize, usercustomize); an environment's parts when the
// workspace root is one. The commit judges the same (wslayer.EnvPathHook, envMatch there).
func (e *Executor) envMatch(p string) string {
	r := rel(e.ws, p)
	if r == "." || strings.HasPrefix(r, "../") {
		return ""
	}
	if why := wslayer.EnvPathHook(filepath.ToSlash(r)); why != "" {
		return why
	}
	for d := p; within(e.ws, d) && d != e.ws; d = filepath.Dir(d) {
		if why := wslayer.EnvMarker(d); why != "" {
			return rel(e.ws, d) + " (" + why + ")"
		}
	}
	if top, _, _ := strings.Cut(r, "/"); wslayer.EnvRootPart(top) {
		if why := wslayer.EnvMarker(e.ws); why != "" {
			return top + " (the workspace's root is " + why + ")"
		}
	}
	return ""
}

// envRootParts are the existing parts of the workspace root when it is itself an environment
// (`python -m venv .`): mounted read-only for an interpreter's call as a nested environment is.
func (e *Executor) envRootParts() []string {
	if wslayer.EnvMarker(e.ws) == "" {
		return nil
	}
	ents, _ := os.ReadDir(e.ws)
	var out []string
	for _, d := range ents {
		if wslayer.EnvRootPart(d.Name()) {
			out = append(out, filepath.Join(e.ws, d.Name()))
		}
	}
	return out
}
