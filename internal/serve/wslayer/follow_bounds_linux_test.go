package wslayer

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// commitOne commits one file's write of content into ws, and says whether it landed.
func commitOne(t *testing.T, ws, rel, content string) (applied bool, why string, sum string) {
	t.Helper()
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(l.Upper, filepath.FromSlash(rel)), content)
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(ws, filepath.FromSlash(rel)))
	// refused where the call's change starts (a directory it made above the file)
	for r := rel; why == "" && r != "."; r = path.Dir(r) {
		why = refusedWhy(w, r)
	}
	return string(b) == content, why, Summary(w)
}

// The follower's depth and per-file size bounds fail closed (attack round atk37b, F1): a file
// past the depth bound was protected but never read, and only a file's first 256 KiB was
// read, so what the seventh file of a require chain, or the end of a bundle, loaded was
// committed. Now a real project's chain (compiled TypeScript, 9 deep) and bundle (past 256 KiB)
// are read whole, and past the bounds what was not read is refused, the bound named. Red when
// the depth bound lets the rest pass (mutant workspace-follow-depth-open) or a read cut at its
// bound is taken as whole (mutant workspace-follow-read-cut-open).
func TestCommitFollowerDepthAndSizeFailClosed(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	chain := func(ws string, n int) {
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "node", "args": ["dist/m0.js"]}}}`)
		for i := range n {
			write(t, filepath.Join(ws, "dist", fmt.Sprintf("m%d.js", i)), fmt.Sprintf("const n = require('./m%d.js');\n", i+1))
		}
	}
	t.Run("real-project", func(t *testing.T) {
		ws := t.TempDir()
		chain(ws, 9) // m9.js, 10 hops from the config, is what m8.js loads
		write(t, filepath.Join(ws, "dist", "bundle.js"), "// bundle\n"+strings.Repeat("/*"+strings.Repeat("x", 1000)+"*/\n", 300)+"require('./late.js');\n")
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "node", "args": ["dist/m0.js"]}, "b": {"command": "node", "args": ["dist/bundle.js"]}}}`)
		for _, rel := range []string{"dist/m9.js", "dist/late.js"} {
			if applied, why, sum := commitOne(t, ws, rel, "evil\n"); applied || !strings.Contains(why, `".mcp.json\" starts`) {
				t.Errorf("%s: applied %v, refused %q, want the config that starts it named (%s)", rel, applied, why, sum)
			}
		}
		if applied, why, sum := commitOne(t, ws, "notes/todo.md", "ok\n"); !applied {
			t.Errorf("a file nothing starts was refused (%q): %s", why, sum)
		}
	})
	t.Run("depth", func(t *testing.T) {
		ws := t.TempDir()
		chain(ws, maxProgramDepth+1) // m(depth+1).js is what the unread file past the bound loads
		rel := fmt.Sprintf("dist/m%d.js", maxProgramDepth+1)
		if applied, why, sum := commitOne(t, ws, rel, "evil\n"); applied || !strings.Contains(why, fmt.Sprintf("more than %d hops", maxProgramDepth)) {
			t.Errorf("%s: applied %v, refused %q, want the depth bound named (%s)", rel, applied, why, sum)
		}
	})
	for _, c := range []struct {
		name       string
		file, all  int
		want       string
		importFile bool
	}{
		{"file", 64 << 10, 64 << 20, "a program longer than 64 KiB", false},
		{"all", 8 << 20, 96 << 10, "programs of more than 96 KiB in all", false},
		{"config", 64 << 10, 64 << 20, "a config longer than 64 KiB", false},
		{"instructions", 8 << 20, 64 << 20, "an instruction file longer than 256 KiB", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			oldFile, oldAll := maxProgramFile, maxProgramBytes
			t.Cleanup(func() { maxProgramFile, maxProgramBytes = oldFile, oldAll })
			maxProgramFile, maxProgramBytes = c.file, c.all
			ws := t.TempDir()
			pad := strings.Repeat("/*"+strings.Repeat("x", 1000)+"*/\n", 300) // 300 KiB
			switch c.name {
			case "file":
				write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"b": {"command": "node", "args": ["dist/bundle.js"]}}}`)
				write(t, filepath.Join(ws, "dist", "bundle.js"), pad+"require('./late.js');\n")
			case "all":
				write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"b": {"command": "node", "args": ["dist/a.js", "dist/b.js"]}}}`)
				write(t, filepath.Join(ws, "dist", "a.js"), pad[:60<<10]+"\n")
				write(t, filepath.Join(ws, "dist", "b.js"), pad[:60<<10]+"\nrequire('./late.js');\n")
			case "config":
				write(t, filepath.Join(ws, ".vscode", "settings.json"), `{"x": "`+strings.Repeat("y", 300<<10)+`", "python.defaultInterpreterPath": "./dist/late.js"}`)
			case "instructions":
				write(t, filepath.Join(ws, "CLAUDE.md"), "# rules\n"+pad+"\n@dist/late.js\n")
			}
			if applied, why, sum := commitOne(t, ws, "dist/late.js", "evil\n"); applied || !strings.Contains(why, c.want) {
				t.Errorf("dist/late.js: applied %v, refused %q, want the bound (%s) named (%s)", applied, why, c.want, sum)
			}
		})
	}
}

// A git config read by hand (git is not there, or did not finish reading it) longer than the
// read names the whole work tree: a core.hooksPath past the part read is not seen, and git
// reads all of it (attack round atk37b, F1). Red when a cut read is taken as whole (mutant
// workspace-follow-read-cut-open).
func TestHandNamesCutNamesTheWorkTree(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	write(t, cfg, "[core]\n"+strings.Repeat("\t# pad\n", 300<<10/7)+"\thooksPath = tools/hooks\n")
	g := &gitGuard{ws: dir}
	got := g.handNames(cfg, filepath.Join(dir, "wt"), map[string]bool{}, 0)
	if len(got) != 1 || got[0] != filepath.Join(dir, "wt") {
		t.Errorf("handNames of a config longer than the read = %q, want the work tree", got)
	}
}

// A bare import that resolves into the workspace through a link in node_modules (a pnpm or
// yarn workspace's node_modules/@org/util -> ../../packages/util) loads the workspace's own
// package: it is protected as what the program loads (attack round atk37b, F1's related
// note); before, only relative specifiers were followed and the call's rewrite of
// packages/util/index.js was committed. Red without it (mutant workspace-follow-bare-links).
func TestCommitFollowsBareImportsThroughWorkspaceLinks(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "node", "args": ["apps/server/index.js"]}}}`)
	write(t, filepath.Join(ws, "apps", "server", "index.js"), "const u = require('@org/util/lib');\nimport x from 'lodash';\n")
	write(t, filepath.Join(ws, "packages", "util", "index.js"), "module.exports = 1;\n")
	write(t, filepath.Join(ws, "packages", "other", "index.js"), "module.exports = 2;\n")
	if err := os.MkdirAll(filepath.Join(ws, "node_modules", "@org"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../packages/util", filepath.Join(ws, "node_modules", "@org", "util")); err != nil {
		t.Fatal(err)
	}
	if applied, why, sum := commitOne(t, ws, "packages/util/lib/x.js", "evil\n"); applied || !strings.Contains(why, `".mcp.json\" starts`) {
		t.Errorf("the linked package: applied %v, refused %q, want the config that starts it named (%s)", applied, why, sum)
	}
	if applied, why, sum := commitOne(t, ws, "packages/other/index.js", "ok\n"); !applied {
		t.Errorf("a package nothing loads was refused (%q): %s", why, sum)
	}
}
