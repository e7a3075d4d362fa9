package wslayer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// refused: each of rels, written by a call, is refused naming the config that starts the
// program (or, with want, the reason want).
func wantRefused(t *testing.T, ws, want string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		if applied, why, sum := commitOne(t, ws, rel, "evil\n"); applied || !strings.Contains(why, want) {
			t.Errorf("%s: applied %v, refused %q, want %q named (%s)", rel, applied, why, want, sum)
		}
	}
}

func wantApplied(t *testing.T, ws string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		if applied, why, sum := commitOne(t, ws, rel, "ok\n"); !applied {
			t.Errorf("%s, which nothing loads, was refused (%q): %s", rel, why, sum)
		}
	}
}

const startsNamed = `.mcp.json\" starts`

// A tsconfig "extends" naming a package is resolved as tsx (get-tsconfig) and ts-node do
// (attack round atk39b, F4): through each node_modules up, a workspace package linked there
// (Turborepo's "@repo/typescript-config/base.json") protected whole, a package's
// package.json "tsconfig" and "exports" obeyed, an array of extends merged in order, and the
// "paths" the package's config sets followed (relative to that config). Before, a package's
// extends was taken to set no paths: a call rewrote the shared config to alias lodash to a
// file of its own, both applied. One that cannot be resolved fails closed: the program's
// package whole, at the workspace's root nothing not judged applied. Red without it (mutant
// workspace-follow-ts-extends-package).
func TestCommitFollowsTsconfigExtendsPackage(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"web": {"command": "npx", "args": ["tsx", "apps/web/server.ts"]},
  "api": {"command": "npx", "args": ["tsx", "apps/api/server.ts"]}}}`)
	write(t, filepath.Join(ws, "packages", "typescript-config", "package.json"), `{"name": "@repo/typescript-config"}`)
	write(t, filepath.Join(ws, "packages", "typescript-config", "base.json"), `{"compilerOptions": {"strict": true}}`)
	symlink(t, "../../packages/typescript-config", filepath.Join(ws, "node_modules", "@repo", "typescript-config"))
	write(t, filepath.Join(ws, "node_modules", "lodash", "package.json"), `{"name": "lodash"}`)
	write(t, filepath.Join(ws, "apps", "web", "tsconfig.json"), `{"extends": "@repo/typescript-config/base.json"}`)
	write(t, filepath.Join(ws, "apps", "web", "server.ts"), "import _ from 'lodash';\n")
	// packages of their own (installed, not linked): one whose package.json names its config,
	// which sets a baseUrl out of node_modules, one whose "exports" name its config, which sets
	// "paths" (then from that baseUrl); merged in order after a relative one
	write(t, filepath.Join(ws, "node_modules", "@cfg", "node", "package.json"), `{"name": "@cfg/node", "tsconfig": "cfg/node.json"}`)
	write(t, filepath.Join(ws, "node_modules", "@cfg", "node", "cfg", "node.json"), `{"compilerOptions": {"baseUrl": "../../../../shared"}}`)
	write(t, filepath.Join(ws, "node_modules", "@cfg", "exp", "package.json"), `{"name": "@cfg/exp", "exports": {"./strict": {"types": "./s.json", "default": "./s.json"}}}`)
	write(t, filepath.Join(ws, "node_modules", "@cfg", "exp", "s.json"), `{"compilerOptions": {"paths": {"cfg": ["../apps/api/cfg.ts"]}}}`)
	write(t, filepath.Join(ws, "apps", "api", "tsconfig.json"), `{"extends": ["./local.json", "@cfg/node", "@cfg/exp/strict"]}`)
	write(t, filepath.Join(ws, "apps", "api", "local.json"), `{"compilerOptions": {"strict": true}}`)
	write(t, filepath.Join(ws, "apps", "api", "server.ts"), "import { y } from 'y';\nimport c from 'cfg';\n")
	wantRefused(t, ws, startsNamed, "packages/typescript-config/base.json", "packages/typescript-config/evil.ts",
		"apps/web/tsconfig.json", "shared/y.ts", "apps/api/cfg.ts", "apps/api/local.json")
	wantApplied(t, ws, "packages/other/x.ts", "apps/api/notes.md", "apps/web/notes.md")

	// not resolved: the program's package whole; at the root nothing not judged
	ws = t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"web": {"command": "npx", "args": ["tsx", "apps/web/server.ts"]}}}`)
	write(t, filepath.Join(ws, "apps", "web", "package.json"), `{"name": "web"}`)
	write(t, filepath.Join(ws, "apps", "web", "tsconfig.json"), `{"extends": "@tsconfig/node20/tsconfig.json"}`)
	write(t, filepath.Join(ws, "apps", "web", "server.ts"), "import _ from 'lodash';\n")
	wantRefused(t, ws, startsNamed, "apps/web/lib/evil.ts")
	wantApplied(t, ws, "apps/other/x.ts")
	ws = t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"web": {"command": "npx", "args": ["tsx", "server.ts"]}}}`)
	write(t, filepath.Join(ws, "tsconfig.json"), `{"extends": "@tsconfig/node20/tsconfig.json"}`)
	write(t, filepath.Join(ws, "server.ts"), "import _ from 'lodash';\n")
	wantRefused(t, ws, "not found in node_modules", "notes/todo.md")
}

// tsconfig "paths" and baseUrl apply to every JS program a runner that applies them starts
// (attack round atk39b, F4): `node -r tsconfig-paths/register dist/server.js`, tsx or
// ts-node on a .js file, a program that requires tsconfig-paths/register itself, a runner
// named by another command line (an npm script) after the program was read; the tsconfig
// consulted is protected. Before, tsconfig was consulted only for a .ts importer: the alias's
// target and the tsconfig itself were a call's to rewrite. node alone (no runner) does not
// apply them: the tsconfig of such a project stays the call's to edit. Red without it (mutant
// workspace-follow-ts-runner-paths).
func TestCommitTsconfigPathsUnderRunners(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	project := func(ws, app string) {
		write(t, filepath.Join(ws, app, "tsconfig.json"), `{"compilerOptions": {"baseUrl": ".", "paths": {"@lib/*": ["./lib/*"]}}}`)
		write(t, filepath.Join(ws, app, "lib", "x.js"), "module.exports = 1;\n")
		write(t, filepath.Join(ws, app, "server.js"), "require('@lib/x');\nrequire('helpers');\n")
	}
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"js": {"command": "node", "args": ["-r", "tsconfig-paths/register", "apps/js/server.js"]}}}`)
	project(ws, "apps/js")
	wantRefused(t, ws, startsNamed, "apps/js/lib/x.js", "apps/js/tsconfig.json", "apps/js/helpers.js")
	wantApplied(t, ws, "apps/js/notes.md")

	// the program registers tsconfig-paths itself
	ws = t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"js": {"command": "node", "args": ["apps/js/main.js"]}}}`)
	write(t, filepath.Join(ws, "apps", "js", "main.js"), "require('tsconfig-paths/register');\nrequire('./server.js');\n")
	project(ws, "apps/js")
	wantRefused(t, ws, startsNamed, "apps/js/lib/x.js", "apps/js/tsconfig.json")

	// the runner named after the program was read (an npm script that runs it with tsx)
	ws = t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"b": {"command": "node", "args": ["apps/js/server.js"]},
  "c": {"command": "npm", "args": ["--prefix", "apps/c", "start"]}}}`)
	write(t, filepath.Join(ws, "apps", "c", "package.json"), `{"scripts": {"start": "tsx ../js/server.js"}}`)
	project(ws, "apps/js")
	wantRefused(t, ws, startsNamed, "apps/js/lib/x.js", "apps/js/tsconfig.json")

	// a TypeScript program (whatever starts it) loads a .js file: the runner applies the
	// aliases to that file too
	ws = t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"ts": {"command": "apps/js/main.ts"}}}`)
	write(t, filepath.Join(ws, "apps", "js", "main.ts"), "#!/usr/bin/env -S npx tsx\nimport './server.js';\n")
	project(ws, "apps/js")
	wantRefused(t, ws, startsNamed, "apps/js/lib/x.js", "apps/js/tsconfig.json")

	// node alone: the aliases are not applied, the tsconfig is not the program's
	ws = t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"js": {"command": "node", "args": ["apps/js/server.js"]}}}`)
	project(ws, "apps/js")
	wantApplied(t, ws, "apps/js/tsconfig.json", "apps/js/lib/x.js")
}

// A tsconfig's "paths" patterns are indexed by prefix once (attack round atk39b, F5): each
// specifier was compared with every key, 25,000 keys and 32,000 specifiers held a commit 29 s
// under the workspace's lock. Matching is charged to one budget that, spent, leaves what was
// not judged unapplied, the bound named. Red when every key is compared (mutant
// workspace-follow-ts-paths-index: the budget runs out on a config the index matches
// cheaply) and when the spent budget is quiet (mutant workspace-runs-cut-open).
func TestCommitTsconfigPathsBounded(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	old := tsBudget
	t.Cleanup(func() { tsBudget = old })
	tsBudget = 200000
	ws := tsPathsProject(t, 2000, 4000)
	wantApplied(t, ws, "notes/todo.md")
	wantRefused(t, ws, startsNamed, "server/x7/m.ts", "server/tsconfig.json")

	// many patterns of one prefix, none matching: the budget runs out, the rest is not applied
	ws = t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "npx", "args": ["tsx", "server/index.ts"]}}}`)
	paths := map[string][]string{}
	for i := range 3000 {
		paths[fmt.Sprintf("@a/*.x%d", i)] = []string{"./a/*"}
	}
	b, err := json.Marshal(map[string]any{"compilerOptions": map[string]any{"paths": paths}})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "server", "tsconfig.json"), string(b))
	var src strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&src, "import '@a/m%d';\n", i)
	}
	write(t, filepath.Join(ws, "server", "index.ts"), src.String())
	wantRefused(t, ws, "take more than 200000 look-ups to match", "notes/todo.md")
}
