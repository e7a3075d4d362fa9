package wslayer

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// resolutionAlone turns the follower's protection of a program's package whole off for the
// test: what it judges is the precise resolution, which still protects what a program loads
// outside its package (atk40b F1).
func resolutionAlone(t *testing.T) {
	t.Helper()
	programDirsWhole = false
	t.Cleanup(func() { programDirsWhole = true })
}

// The follower's depth and per-file size bounds fail closed (attack round atk37b, F1): a file
// past the depth bound was protected but never read, and only a file's first 256 KiB was
// read, so what the seventh file of a require chain, or the end of a bundle, loaded was
// committed. Now a real project's chain (compiled TypeScript, 9 deep) and bundle (past 256 KiB)
// are read whole, and past the bounds what was not read is refused, the bound named. Red when
// the depth bound lets the rest pass (mutant workspace-follow-depth-open) or a read cut at its
// bound is taken as whole (mutant workspace-follow-read-cut-open).
func TestCommitFollowerDepthAndSizeFailClosed(t *testing.T) {
	resolutionAlone(t)
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
	resolutionAlone(t)
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
	// what the linked package loads outside itself (atk38b F5's class): read through its
	// "exports" (else its path, "main", index); red without it (mutant workspace-follow-linked-entry)
	write(t, filepath.Join(ws, "packages", "util", "package.json"), `{"name": "@org/util", "exports": {"./lib": "./lib/index.js"}}`)
	write(t, filepath.Join(ws, "packages", "util", "lib", "index.js"), "require('../../shared/x.js');\n")
	write(t, filepath.Join(ws, "packages", "shared", "x.js"), "module.exports = 3;\n")
	if applied, why, sum := commitOne(t, ws, "packages/shared/x.js", "evil\n"); applied || !strings.Contains(why, `".mcp.json\" starts`) {
		t.Errorf("what the linked package loads: applied %v, refused %q, want the config that starts it named (%s)", applied, why, sum)
	}
	if applied, why, sum := commitOne(t, ws, "packages/shared/y.js", "ok\n"); !applied {
		t.Errorf("a file nothing loads was refused (%q): %s", why, sum)
	}
}

// A JS program loads what its package.json maps (attack round atk38b, F5): `#lib` through the
// package scope's "imports" (conditions all, a `*` pattern's directory whole), the package's
// own name through its "exports", a computed require (path.join(__dirname, 'pj.js') exactly,
// a variable the package whole, the workspace's root package: not judged), and the
// package.json itself (and one a call would make nearer). Before, none was followed and the
// call's rewrite of each ran at the client's next start. A file of the package that nothing
// loads is still applied. Red without each (mutants workspace-follow-subpath-imports,
// workspace-follow-self-reference, workspace-follow-computed-open, workspace-follow-package-scope).
func TestCommitFollowsPackageScopeSpecifiers(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	project := func(t *testing.T, pj, index string) string {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "node", "args": ["server/src/index.js"]}}}`)
		write(t, filepath.Join(ws, "server", "package.json"), pj)
		write(t, filepath.Join(ws, "server", "src", "index.js"), index)
		for _, f := range []string{"lib.js", "other.js", "src/other.js"} {
			write(t, filepath.Join(ws, "server", filepath.FromSlash(f)), "module.exports = 1;\n")
		}
		return ws
	}
	refused := func(t *testing.T, ws string, rels ...string) {
		t.Helper()
		for _, rel := range rels {
			if applied, why, sum := commitOne(t, ws, rel, "evil\n"); applied || !strings.Contains(why, `".mcp.json\" starts`) {
				t.Errorf("%s: applied %v, refused %q, want the config that starts it named (%s)", rel, applied, why, sum)
			}
		}
	}
	applied := func(t *testing.T, ws string, rels ...string) {
		t.Helper()
		for _, rel := range rels {
			if applied, why, sum := commitOne(t, ws, rel, "ok\n"); !applied {
				t.Errorf("%s, which the program does not load, was refused (%q): %s", rel, why, sum)
			}
		}
	}
	t.Run("subpath-imports", func(t *testing.T) {
		ws := project(t, `{"name": "srv", "imports": {"#lib": "./lib.js", "#cond": {"node": "./c-node.js", "default": ["./c-def.js"]}, "#feat/*": "./features/*.js"}}`,
			"import lib from '#lib';\nconst c = require(\"#cond\");\nawait import('#feat/a');\n")
		refused(t, ws, "server/lib.js", "server/c-node.js", "server/c-def.js", "server/features/new.js")
		applied(t, ws, "server/other.js", "server/src/other.js")
	})
	t.Run("subpath-unmapped", func(t *testing.T) {
		ws := project(t, `{"name": "srv", "imports": {"#lib": "./lib.js"}}`, "require('#missing');\n")
		refused(t, ws, "server/other.js") // the package, whole
		applied(t, ws, "notes.md")
	})
	t.Run("self-reference", func(t *testing.T) {
		ws := project(t, `{"name": "srv", "exports": {".": {"import": "./esm.mjs", "require": "./cjs.js"}, "./util": "./util.js"}}`,
			"require('srv/util');\nimport s from 'srv';\nrequire('fs');\n")
		refused(t, ws, "server/util.js", "server/esm.mjs", "server/cjs.js")
		applied(t, ws, "server/other.js")
	})
	t.Run("computed", func(t *testing.T) {
		ws := project(t, `{"name": "srv"}`, "const path = require('path');\nrequire(path.join(__dirname, '..', 'pj.js'));\nrequire(__dirname + '/plus.js');\n"+
			"require(require('path').join(__dirname, 'inline.js'));\n")
		refused(t, ws, "server/pj.js", "server/src/plus.js", "server/src/inline.js")
		applied(t, ws, "server/other.js")
		ws = project(t, `{"name": "srv"}`, "for (const p of plugins) require(`./plugins/${p}.js`);\n")
		refused(t, ws, "server/other.js") // the package, whole
		applied(t, ws, "notes.md")
		// the workspace's root package is not protected whole: what is not judged is not applied
		ws = t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "node", "args": ["index.js"]}}}`)
		write(t, filepath.Join(ws, "index.js"), "require(name);\n")
		if applied, why, sum := commitOne(t, ws, "lib/x.js", "evil\n"); applied || !strings.Contains(why, "require(name), a module named only when it runs") {
			t.Errorf("lib/x.js: applied %v, refused %q, want the computed require named (%s)", applied, why, sum)
		}
	})
	t.Run("package-scope", func(t *testing.T) {
		ws := project(t, `{"name": "srv", "imports": {"#lib": "./lib.js"}}`, "require('#lib');\n")
		refused(t, ws, "server/package.json")
		// nearer, it would be the scope: "#lib" its to map
		ws = project(t, `{"name": "srv", "imports": {"#lib": "./lib.js"}}`, "require('#lib');\n")
		if applied, why, sum := commitOne(t, ws, "server/src/package.json", `{"imports": {"#lib": "./evil.js"}}`); applied || !strings.Contains(why, `".mcp.json\" starts`) {
			t.Errorf("server/src/package.json: applied %v, refused %q, want the config that starts it named (%s)", applied, why, sum)
		}
		applied(t, ws, "docs/package.json")
	})
}

// A real project still commits its ordinary edits (atk38b F5's resolution must not protect
// what the program does not load): a compiled TypeScript MCP server, 160 files in dist/ as tsc
// emits them (its helpers, require of node's modules, of installed packages, of a pnpm
// workspace package linked in node_modules, of subpaths through "imports"), its 160 sources
// in src/. An edit of a source, a test, the README or another workspace package is applied;
// one of what the server loads (and of its package.json, the map) is refused.
func TestCommitFollowerRealProjectStillCommits(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "node", "args": ["dist/index.js"]}}}`)
	write(t, filepath.Join(ws, "package.json"), `{"name": "my-mcp", "version": "1.0.0", "main": "dist/index.js", "type": "commonjs",
  "imports": {"#util/*": "./dist/util/*.js"}, "scripts": {"build": "tsc -p .", "test": "vitest"},
  "dependencies": {"@modelcontextprotocol/sdk": "^1.0.0", "zod": "^3.23.0", "@org/util": "workspace:*"}}`)
	const helpers = `"use strict";
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) { if (k2 === undefined) k2 = k; var desc = Object.getOwnPropertyDescriptor(m, k); if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) { desc = { enumerable: true, get: function() { return m[k]; } }; } Object.defineProperty(o, k2, desc); }) : (function(o, m, k, k2) { if (k2 === undefined) k2 = k; o[k2] = m[k]; }));
var __importStar = (this && this.__importStar) || function (mod) { if (mod && mod.__esModule) return mod; var result = {}; if (mod != null) for (var k in mod) if (k !== "default" && Object.prototype.hasOwnProperty.call(mod, k)) __createBinding(result, mod, k); return result; };
Object.defineProperty(exports, "__esModule", { value: true });
const path = __importStar(require("path"));
const fs = require("node:fs");
const zod_1 = require("zod");
const index_js_1 = require("@modelcontextprotocol/sdk/server/index.js");
const util_1 = require("@org/util");
`
	var index strings.Builder
	index.WriteString(helpers)
	for i := range 159 {
		dir := []string{"tools", "util", "lib"}[i%3]
		fmt.Fprintf(&index, "const m%d = require(\"./%s/m%d\");\n", i, dir, i)
		body := helpers + fmt.Sprintf("exports.m%d = () => Promise.resolve().then(() => __importStar(require(\"./m%d-lazy.js\")));\n", i, i)
		if dir == "tools" {
			body += fmt.Sprintf("const u = require(\"#util/m%d\");\n", i+1)
		}
		write(t, filepath.Join(ws, "dist", dir, fmt.Sprintf("m%d.js", i)), body)
		write(t, filepath.Join(ws, "src", dir, fmt.Sprintf("m%d.ts", i)), fmt.Sprintf("export const m%d = 1;\n", i))
	}
	write(t, filepath.Join(ws, "dist", "index.js"), index.String())
	write(t, filepath.Join(ws, "src", "index.ts"), "export {};\n")
	write(t, filepath.Join(ws, "node_modules", "zod", "package.json"), `{"name": "zod"}`)
	write(t, filepath.Join(ws, "node_modules", "@modelcontextprotocol", "sdk", "package.json"), `{"name": "@modelcontextprotocol/sdk"}`)
	write(t, filepath.Join(ws, "packages", "util", "index.js"), "module.exports = 1;\n")
	write(t, filepath.Join(ws, "packages", "other", "index.js"), "module.exports = 2;\n")
	if err := os.MkdirAll(filepath.Join(ws, "node_modules", "@org"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../packages/util", filepath.Join(ws, "node_modules", "@org", "util")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"src/tools/m3.ts", "src/index.ts", "test/m3.test.ts", "README.md", "packages/other/index.js", "tsconfig.json"} {
		start := time.Now()
		if applied, why, sum := commitOne(t, ws, rel, "ok\n"); !applied {
			t.Errorf("%s, which the server does not load, was refused (%q): %s", rel, why, sum)
		}
		t.Logf("%s: committed in %v", rel, time.Since(start).Round(time.Millisecond))
	}
	for _, rel := range []string{"dist/tools/m3.js", "dist/util/m4.js", "dist/lib/m5-lazy.js", "packages/util/index.js", "package.json"} {
		if applied, why, sum := commitOne(t, ws, rel, "evil\n"); applied || !strings.Contains(why, `".mcp.json\" starts`) {
			t.Errorf("%s: applied %v, refused %q, want the config that starts it named (%s)", rel, applied, why, sum)
		}
	}
}

// Python names modules at run time (atk38b F5's class): importlib.import_module, __import__,
// runpy; a literal (or a literal start up to a dot, f"tools.{name}") is followed as an import,
// anything else protects the program's directory whole (at the root: not judged). A program
// the config starts from a workspace venv (venv/bin/python) protects that venv, whose
// site-packages' .pth files run at its start. Red without them (mutants
// workspace-follow-py-dynamic, workspace-follow-venv).
func TestCommitFollowsPythonDynamicImports(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "venv/bin/python", "args": ["srv/main.py"]}, "y": {"command": "python3", "args": ["app/run.py"]}}}`)
	write(t, filepath.Join(ws, "venv", "pyvenv.cfg"), "home = /usr/bin\n")
	write(t, filepath.Join(ws, "venv", "bin", "python"), "#!/bin/sh\n")
	write(t, filepath.Join(ws, "srv", "main.py"), "import importlib, runpy\nm = importlib.import_module(f\"tools.{name}\")\n__import__('helpers')\nrunpy.run_path('boot.py')\n")
	write(t, filepath.Join(ws, "app", "run.py"), "import importlib\nplugin = importlib.import_module(name)\n")
	for _, rel := range []string{"srv/tools/x.py", "srv/helpers.py", "srv/boot.py", "app/other.py", "venv/lib/python3.11/site-packages/evil.pth"} {
		if applied, why, sum := commitOne(t, ws, rel, "evil\n"); applied || !strings.Contains(why, `".mcp.json\" starts`) {
			t.Errorf("%s: applied %v, refused %q, want the config that starts it named (%s)", rel, applied, why, sum)
		}
	}
	for _, rel := range []string{"srv/notes.md", "docs/x.py"} {
		if applied, why, sum := commitOne(t, ws, rel, "ok\n"); !applied {
			t.Errorf("%s, which nothing loads, was refused (%q): %s", rel, why, sum)
		}
	}
	ws = t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "python3", "args": ["main.py"]}}}`)
	write(t, filepath.Join(ws, "main.py"), "import importlib\nimportlib.import_module(sys.argv[1])\n")
	if applied, why, sum := commitOne(t, ws, "lib/x.py", "evil\n"); applied || !strings.Contains(why, "import_module(…), a module named only when it runs") {
		t.Errorf("lib/x.py: applied %v, refused %q, want the computed import named (%s)", applied, why, sum)
	}
}

// A TypeScript program's tsconfig "paths" aliases (tsx, ts-node with tsconfig-paths, bundlers
// resolve `@lib/x` through them; atk38b F5's class) load the files they map: the tsconfig (a
// JSONC file, comments and trailing commas, and the config it extends) is protected and each
// alias's target followed (a `*` pattern's directory whole); an alias no config maps
// ("~/x") protects the program's package whole. Red without it (mutant workspace-follow-ts-paths).
func TestCommitFollowsTsconfigPaths(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "npx", "args": ["tsx", "src/index.ts"]}}}`)
	write(t, filepath.Join(ws, "tsconfig.json"), "{\n  // the project's\n  \"extends\": \"./tsconfig.base.json\",\n  \"compilerOptions\": {\"strict\": true, /* on */},\n}\n")
	write(t, filepath.Join(ws, "tsconfig.base.json"), "{\"compilerOptions\": {\"baseUrl\": \"src\", \"paths\": {\"@lib/*\": [\"lib/*\"], \"@cfg\": [\"config.ts\"],},},}\n")
	write(t, filepath.Join(ws, "src", "index.ts"), "import { x } from '@lib/x';\nimport cfg from '@cfg';\nimport fs from 'node:fs';\nimport path from 'path';\n")
	write(t, filepath.Join(ws, "src", "config.ts"), "export default 1;\n")
	for _, rel := range []string{"src/lib/y.ts", "src/config.ts", "tsconfig.json", "tsconfig.base.json"} {
		if applied, why, sum := commitOne(t, ws, rel, "evil\n"); applied || !strings.Contains(why, `".mcp.json\" starts`) {
			t.Errorf("%s: applied %v, refused %q, want the config that starts it named (%s)", rel, applied, why, sum)
		}
	}
	for _, rel := range []string{"src/other.ts", "test/x.test.ts"} {
		if applied, why, sum := commitOne(t, ws, rel, "ok\n"); !applied {
			t.Errorf("%s, which nothing loads, was refused (%q): %s", rel, why, sum)
		}
	}
	ws = t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "npx", "args": ["tsx", "server/index.ts"]}}}`)
	write(t, filepath.Join(ws, "server", "index.ts"), "import { x } from '~/lib/x';\n")
	if applied, why, sum := commitOne(t, ws, "server/lib/x.ts", "evil\n"); applied || !strings.Contains(why, `".mcp.json\" starts`) {
		t.Errorf("an alias nothing maps: applied %v, refused %q, want the program's directory protected (%s)", applied, why, sum)
	}
}
