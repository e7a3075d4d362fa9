package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// Agents' instruction files import others: a line of CLAUDE.md (or CLAUDE.local.md, GEMINI.md)
// that says @docs/rules.md makes docs/rules.md part of the instructions the next session obeys
// (Claude Code follows imports 5 deep, Gemini CLI's memory import does the same). The
// instruction files are protected; what they import must be too, or a call writes an ordinary
// file and steers the next session (attack round 15b), as a link from a protected name to an
// ordinary file did before (round 4).
var importers = map[string]bool{"CLAUDE.md": true, "CLAUDE.local.md": true, "GEMINI.md": true}

// Bounds of the imports followed: instruction files the walk keeps, import hops, paths kept.
// Each fails closed but the depth: past maxImporters (list) or maxImported, or an instruction
// file longer than smallFile (read cut), importCut refuses what was not judged. maxImportDepth
// reads the files 5 hops from the instruction file and protects those 6 hops away, the agents'
// own bound (Claude Code's and Gemini CLI's imports stop at 5 hops): no agent loads what lies
// past it.
const (
	maxImporters   = 512
	maxImportDepth = 5
	maxImported    = 4096
)

// importRef is an import: "@" at the start of a line or after white space, then a path.
var importRef = lazy.Regexp(`(?:^|\s)@((?:[^\s\\]|\\ )+)`)

// imports returns the paths (absolute, as written from the importing file) that the
// instruction files the walk found import, followed through the imported files inside the
// workspace. Taken as written, code blocks included: a path named so is protected even where
// the agent would not follow it (fail closed).
func (g *gitGuard) imports() []string {
	if g.importsDone {
		return g.imported
	}
	g.importsDone = true
	g.inside() // the walk finds the instruction files
	seen := map[string]bool{}
	var follow func(file string, depth int)
	follow = func(file string, depth int) {
		if depth > maxImportDepth || seen[file] || len(g.imported) >= maxImported {
			return
		}
		seen[file] = true
		b, cut, err := readSmall(file, smallFile)
		if err != nil {
			return
		}
		if cut && g.importCut == "" {
			// the agent reads the whole file: an import past the part read is not seen
			g.importCut = fmt.Sprintf("an instruction file longer than %d KiB", smallFile>>10)
		}
		for _, m := range importRef().FindAllStringSubmatch(string(b), -1) {
			ref := strings.ReplaceAll(m[1], `\ `, " ")
			ref = strings.TrimRight(ref, ".,;:)]}>\"'`")
			if ref == "" || strings.HasPrefix(ref, "~") || strings.Contains(ref, "://") {
				continue // the user's home, a URL: not the workspace's
			}
			p := g.wsSpelled(absFrom(filepath.Dir(file), ref)) // the workspace's real path names it too
			if !strings.HasPrefix(p, g.ws+"/") {
				continue
			}
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				continue // an agent imports files: "@src" or "@." (which would protect all) is text
			}
			if len(g.imported) >= maxImported {
				if g.importCut == "" && !mutated("workspace-runs-cut-open") {
					g.importCut = fmt.Sprintf("more than %d imported paths", maxImported)
				}
				return
			}
			g.imported = append(g.imported, p)
			g.importedBy[p] = file
			follow(p, depth+1)
		}
	}
	for _, f := range g.importers {
		follow(f, 1)
	}
	return g.imported
}

// importMatch says which instruction file imports rel (a path from the workspace root), "" when
// none does.
func (g *gitGuard) importMatch(rel string) string {
	if mutated("workspace-agent-imports") {
		return ""
	}
	for _, p := range g.imports() {
		if g.covers(p, rel, false) {
			by, _ := filepath.Rel(g.ws, g.importedBy[p])
			return "imported by the agent instruction file " + strconv.Quote(filepath.ToSlash(by)) +
				" (@path): the next session reads it as instructions"
		}
	}
	if g.importCut != "" {
		return "the agents' instruction files name " + g.importCut + " (the check's bound): the rest were not read, so this path is not judged, and not applied"
	}
	return ""
}

// hostConfig says whether the config file at abs is one no call can have written: the
// protect list's patterns match it. Only those are read for what they import or start: a
// call's own mcp.json (no client reads a bare one) or CLAUDE.md under a trimmed list is the
// call's to rewrite anyway, and read first it filled the bounded lists before the host's
// (attack round atk37, F1).
func (g *gitGuard) hostConfig(abs string) bool {
	if g.host == nil || mutated("workspace-runners-unprotected") {
		return true
	}
	r, ok := strings.CutPrefix(abs, g.ws+"/")
	return ok && g.host(filepath.ToSlash(r))
}

// runsFixed are where the agents' and editors' configs that start programs lie at the root,
// looked at directly before the walk: the walk may stop before it reaches them (an earlier
// call's directories in its way), and these are the host's (protected).
var runsFixed = []string{".mcp.json", "opencode.json", "opencode.jsonc", "crush.json", ".crush.json", "kilo.json", "kilo.jsonc",
	".kilo/kilo.json", ".kilo/kilo.jsonc", ".kilocode/mcp.json", ".roo/mcp.json", ".cursor/mcp.json", ".cursor/hooks.json",
	".vscode/mcp.json", ".vscode/settings.json", ".vscode/tasks.json", ".vscode/launch.json", ".zed/settings.json", ".zed/tasks.json",
	".claude/settings.json", ".claude/settings.local.json", ".gemini/settings.json", ".qwen/settings.json", ".codex/config.toml",
	".helix/languages.toml", ".devcontainer.json", ".devcontainer/devcontainer.json", ".pre-commit-config.yaml", "lefthook.yml",
	".lefthook.yml", "lefthook.yaml", ".lefthook.yaml", ".envrc", "mise.toml", ".mise.toml", ".vim/coc-settings.json",
	"mise.local.toml", ".mise.local.toml", "mise/config.toml", ".mise/config.toml", ".config/mise.toml", ".config/mise/config.toml", ".tool-versions",
	".github/mcp.json", ".github/lsp.json", "lsp.json", ".github/copilot/settings.json", ".github/copilot/settings.local.json",
	".factory/settings.json", ".factory/settings.local.json", ".factory/mcp.json", ".amp/settings.json"}

// runsFixedDirs are the root's directories whose every file of a kind is a config that starts
// programs, looked at directly as runsFixed: husky's hooks, Copilot's hooks (*.json) and custom
// agents (*.agent.md).
var runsFixedDirs = []struct{ dir, suffix string }{{".husky", ""}, {".github/hooks", ".json"}, {".github/agents", ".agent.md"}}

// fixedRunners adds the configs at runsFixed that are there, first: read before any other.
func (g *gitGuard) fixedRunners() {
	if mutated("workspace-runners-unprotected") {
		return
	}
	for _, rel := range runsFixed {
		p := filepath.Join(g.ws, filepath.FromSlash(rel))
		if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() || !g.hostConfig(p) {
			continue
		}
		if runsConfig(filepath.Base(filepath.Dir(p)), filepath.Base(p)) && !slices.Contains(g.runners, p) {
			g.runners = append(g.runners, p)
		}
	}
	if !mutated("workspace-lefthook-formats") {
		for _, rel := range lefthookFiles() {
			p := filepath.Join(g.ws, filepath.FromSlash(rel))
			if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() && g.hostConfig(p) && !slices.Contains(g.runners, p) {
				g.runners = append(g.runners, p)
			}
		}
	}
	for _, d := range runsFixedDirs {
		if d.dir != ".husky" && mutated("protect-agents-atk37") {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(g.ws, filepath.FromSlash(d.dir)))
		if err != nil {
			continue
		}
		for _, e := range ents {
			p := filepath.Join(g.ws, filepath.FromSlash(d.dir), e.Name())
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), d.suffix) && len(g.runners) < maxImporters && g.hostConfig(p) &&
				!slices.Contains(g.runners, p) {
				g.runners = append(g.runners, p)
			}
		}
	}
}

// Agents' and editors' config files start programs: an MCP server's command and args
// (.mcp.json, .cursor/mcp.json, .vscode/mcp.json, .gemini/settings.json, .codex/config.toml, …),
// hooks (.claude/settings.json, .cursor/hooks.json), tasks (.vscode/tasks.json), interpreters and
// language servers (.vscode/settings.json, .helix/languages.toml). The files are
// protected, but a program they name by its path in the workspace ("args": ["./tools/server.js"])
// was not: a call rewrote it, and the client ran it on the host at its next start (attack round
// 15b), as git's program keys did before (round 4).
func runsConfig(dir, name string) bool {
	switch name {
	case ".mcp.json", "mcp.json", "opencode.json", "opencode.jsonc", "crush.json", ".crush.json":
		// MCP servers (Claude Code, Cursor, VS Code, Roo, Kilo Code's .kilocode/mcp.json, Kiro,
		// opencode, Crush); a bare mcp.json no client reads is not protected, and only
		// protected configs are read (hostConfig)
		return true
	case "kilo.json", "kilo.jsonc":
		return !mutated("protect-agents-atk37") // Kilo Code's config (root or .kilo/): its "mcp" key starts servers
	case "settings.json", "settings.local.json":
		// Claude Code's and Gemini CLI's hooks and MCP servers; VS Code's and Zed's paths of
		// interpreters and language servers they start; Factory Droid's hooks, Amp's MCP
		// servers, the plugins Copilot's settings enable (.github/copilot)
		if (dir == ".factory" || dir == ".amp" || dir == "copilot") && !mutated("protect-agents-atk37") {
			return true
		}
		return dir == ".claude" || dir == ".gemini" || dir == ".vscode" || dir == ".zed"
	case "lsp.json":
		return !mutated("protect-agents-atk37") // Copilot CLI's repository language servers
	case "tasks.json", "launch.json":
		return dir == ".vscode" || dir == ".zed"
	case "hooks.json":
		return dir == ".cursor"
	case "config.toml":
		return dir == ".codex" || hookWords(dir, name) // Codex's; mise/config.toml
	case "languages.toml":
		return dir == ".helix"
	case "devcontainer.json", ".devcontainer.json":
		// initializeCommand runs on the host when the folder is opened in a container
		return (name == ".devcontainer.json" || dir == ".devcontainer") && !mutated("workspace-config-programs-follow")
	case "coc-settings.json":
		return !mutated("workspace-config-programs-follow") // coc.nvim's language servers
	case "gemini-extension.json":
		return !mutated("workspace-config-programs-follow") // a Gemini CLI extension's MCP servers
	}
	if (dir == "hooks" && strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".agent.md")) && !mutated("protect-agents-atk37") {
		// Copilot's hooks (.github/hooks/*.json: a "bash" command, from its "cwd") and custom
		// agents (their frontmatter's mcp-servers and hooks); only protected ones are read
		return true
	}
	if strings.HasSuffix(name, ".sublime-project") && !mutated("workspace-config-programs-follow") {
		return true // Sublime Text's LSP clients and build systems
	}
	if dir == ".qwen" && (name == "settings.json" || name == "settings.local.json") && !mutated("workspace-config-programs-follow") {
		return true // Qwen Code: Gemini CLI's settings
	}
	return hookWords(dir, name)
}

// hookWords: a git hook manager's file (husky's hooks, pre-commit's and lefthook's configs) whose
// every word may name a program (a shell line, an unquoted YAML entry: ./scripts/check.sh), run
// at the user's next git commit.
func hookWords(dir, name string) bool {
	switch name {
	case ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml",
		"lefthook-local.yml", ".lefthook-local.yml":
		return true
	}
	if lefthookConfig(name) && !mutated("workspace-lefthook-formats") {
		return true // lefthook's other formats and its local config's (atk48a F1's class)
	}
	switch name {
	case ".lintstagedrc", ".lintstagedrc.json", ".lintstagedrc.yaml", ".lintstagedrc.yml", ".simple-git-hooks.json", "simple-git-hooks.json":
		// the commands lint-staged runs at a commit, the hooks simple-git-hooks installs
		return !mutated("workspace-config-programs-follow")
	}
	if name == ".envrc" || miseConfig(dir, name) {
		// run at a cd into the directory (an allowed .envrc, a trusted mise config): what they
		// source (source_env, dotenv, source ./x.sh; mise's hooks and _.source) and the dirs
		// they put on PATH (PATH_add bin) (attack round 16b)
		return !mutated("workspace-config-programs-follow")
	}
	// Continue's workspace MCP servers (.continue/mcpServers/*.yaml) and Kiro's agent hooks
	// (.kiro/hooks/*.kiro.hook, commands run on file events)
	if (dir == "mcpServers" || strings.HasSuffix(name, ".kiro.hook")) && !mutated("workspace-config-programs-follow") {
		return true
	}
	return dir == ".husky"
}

// frontmatter is the YAML between a Markdown file's first two "---" lines.
func frontmatter(text string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimPrefix(text, "\ufeff"), "---")
	if !ok {
		return "", false
	}
	fm, _, ok := strings.Cut(rest, "\n---")
	return fm, ok
}

// quoted is a string literal of JSON, JSONC or TOML (a basic string).
var quoted = lazy.Regexp(`"((?:[^"\\\n]|\\.)*)"`)

// workspaceVars are how these configs name the project's root.
var workspaceVars = []string{"$CLAUDE_PROJECT_DIR/", "${CLAUDE_PROJECT_DIR}/", "${workspaceFolder}/", "${workspaceRoot}/", "${PWD}/"}

// runs returns the workspace's paths that the config files the walk found start, in a string
// (a word of a command line, an argument): taken from the workspace's root (where the clients
// start them) and from the config's directory, and followed (programs.go): what those programs
// load from the workspace (a script's relative imports, a module's package, a shell script's
// words), what `python -m pkg` names, a package.json's scripts that `npm run` runs, the project
// files `uv run` or `make` obey, and a program the config names that does not exist yet.
func (g *gitGuard) runs() []string {
	if g.runsDone {
		return g.run
	}
	g.runsDone = true
	g.inside() // the walk finds the config files
	f := &follower{g: g, seen: map[string]bool{}}
	for _, file := range g.runners {
		b, cut, err := readSmall(file, maxProgramFile)
		if err != nil {
			continue
		}
		if cut && g.runCut == "" {
			g.runCut = fmt.Sprintf("programs from a config longer than %d KiB", maxProgramFile>>10)
		}
		f.rcLoads(file, string(b))     // what an .envrc or mise config loads, there or not
		f.noteSetters(file, string(b)) // names it sets for what it starts (env APP_DIR=lib …)
		f.envrcDotenv(file)
		f.configSetters(file, string(b)) // the names as its parser reads them (atk45a F2)
		raw := b
		b = clientDefaults(file, b)
		f.configEnv(file, string(b)) // "env": {"NODE_OPTIONS": …, "PYTHONPATH": …}
		strs := quoted().FindAllStringSubmatch(string(b), -1)
		vals, why := configDecoded(file, string(b))
		f.inlineCode(file, vals, why) // python3 -c '…', node -e '…': the program's text inline
		// its command lines as sh reads them: operators, quotes, cd (atk46a F1, F2)
		f.stmts = true
		f.configLines(file, configShellStrings(file, raw, b, vals))
		f.lefthook(file) // its runs from their roots, its scripts (atk48a F1, F2)
		f.stmts = false
		if hookWords(filepath.Base(filepath.Dir(file)), filepath.Base(file)) {
			strs = append(strs, []string{"", string(b)}) // every word, quoted or not
		}
		if fm, ok := frontmatter(string(b)); ok && strings.HasSuffix(file, ".agent.md") {
			// YAML, quoted or not: command: node, args: [./tools/server.js]; only the
			// frontmatter (the body is prose, whose every word would protect too much)
			strs = append(strs, []string{"", strings.NewReplacer("[", " ", "]", " ", "{", " ", "}", " ", ",", " ").Replace(fm)})
		}
		var words []string
		for _, m := range strs {
			words = append(words, strings.Fields(strings.ReplaceAll(m[1], `\"`, `"`))...)
		}
		words = append(words, valueWords(vals)...)
		if roots := lefthookRoots(f.lefthookDocs[file]); len(roots) > 0 {
			// lefthook's root is the directory its run runs in, read so by the lefthook reader
			// (`cd -- DIR`), not a program named by its directory (atk49a F5: root: pyapp/ with
			// run: echo hi made pyapp/ read-only)
			words = slices.DeleteFunc(words, func(w string) bool { return roots[w] })
		}
		f.words(file, filepath.Dir(file), words, 0)
	}
	f.follow()
	f.lateDefaults()
	return g.run
}

// valueWords are the words of a config's decoded values (configDecoded), each value a command
// line (a hook's `run: python3 x.py`, a lint-staged entry): a YAML flow sequence's plain scalars
// (`args: [srv/main.py]`, `[-m, srv.main]`), a TOML literal string, a JSON string's escapes are
// words only as the parser gives them; the text's blank-separated tokens (`[srv/main.py]`,
// `[-m,`) named no file (atk44a F10). They are read with the lexer's words, never instead.
func valueWords(vals []string) []string {
	if mutated("workspace-config-decoded-words") {
		return nil
	}
	var out []string
	for _, v := range vals {
		out = append(out, strings.Fields(v)...)
	}
	return out
}

// clientDefault is a `${NAME:-default}` in a config's string.
var clientDefault = lazy.Regexp(`\$\{[A-Za-z_][A-Za-z0-9_]*:-([^}]*)\}`)

// clientDefaults is the config file's text with each `${NAME:-default}` its default: Claude Code
// expands them in a .mcp.json's command, args and env before it starts the server, and with
// NAME unset (what a project ships for) the default is what runs; read as `$NAME`, an outside
// value, the default was never judged (atk43 F2: PYTHONPATH = "${PROJ:-.}/lib"). NAME's own
// value is the user's environment's. An .envrc or mise config is bash's or mise's to expand
// (their readers model it).
func clientDefaults(file string, b []byte) []byte {
	if filepath.Base(file) == ".envrc" || miseConfig(filepath.Base(filepath.Dir(file)), filepath.Base(file)) ||
		mutated("workspace-config-client-defaults") {
		return b
	}
	set := clientSets(file)
	return clientDefault().ReplaceAllFunc(b, func(m []byte) []byte {
		name, _, _ := strings.Cut(string(m[2:]), ":-")
		if v, ok := set[name]; ok {
			// the client sets it for what the config runs: not its default (atk44a F8). A second
			// layer since atk47a F5: a hook's command is read raw by the shell reader too, which
			// takes CLAUDE_PROJECT_DIR for the project whatever its default says (its mutant,
			// workspace-config-client-set-names, survived CI 47b and was retired)
			return []byte(v)
		}
		return clientDefault().ReplaceAll(m, []byte("$1"))
	})
}

// clientSets are the names the client itself sets in the environment of what the config file
// runs, and what they are to the reader: Claude Code gives every hook of its settings
// CLAUDE_PROJECT_DIR (the project: the workspace) and, by event or place, CLAUDE_ENV_FILE,
// CLAUDE_PLUGIN_ROOT and CLAUDE_CODE_REMOTE (not the workspace's files: left unresolved).
func clientSets(file string) map[string]string {
	if filepath.Base(filepath.Dir(file)) != ".claude" {
		return nil
	}
	switch filepath.Base(file) {
	case "settings.json", "settings.local.json":
		return map[string]string{"CLAUDE_PROJECT_DIR": "${CLAUDE_PROJECT_DIR}", "CLAUDE_ENV_FILE": "${CLAUDE_ENV_FILE}",
			"CLAUDE_PLUGIN_ROOT": "${CLAUDE_PLUGIN_ROOT}", "CLAUDE_CODE_REMOTE": "${CLAUDE_CODE_REMOTE}"}
	}
	return nil
}

// runMatch says which config file runs rel (a path from the workspace root), "" when none does.
func (g *gitGuard) runMatch(rel string) string {
	if mutated("workspace-config-programs") {
		return ""
	}
	if g.runIndex == nil {
		// covers for each of thousands of paths and each entry of a commit would be their
		// product: an index of the paths (as written and resolved, folded), looked up for each
		// directory above the entry, is the same judgement
		g.runIndex = map[string]string{}
		for _, p := range g.runs() {
			rp, ok := g.real[p]
			if !ok {
				if !mutated("workspace-git-realpath") {
					rp, _ = g.resolveAbs(p)
				}
				g.real[p] = rp
			}
			for _, q := range []string{p, rp} {
				if _, seen := g.runIndex[fold(q)]; q != "" && !seen {
					g.runIndex[fold(q)] = p
				}
			}
		}
	}
	for _, abs := range []string{filepath.Join(g.ws, filepath.FromSlash(rel)), filepath.Join(g.wsReal, filepath.FromSlash(rel))} {
		for a := fold(abs); ; a = filepath.Dir(a) {
			if p, ok := g.runIndex[a]; ok {
				by, _ := filepath.Rel(g.ws, g.runBy[p])
				return "a program the protected file " + strconv.Quote(filepath.ToSlash(by)) +
					" starts (an MCP server, a hook or a task, or what they load): the host runs it"
			}
			if a == "/" || a == "." {
				break
			}
		}
	}
	if why := g.rcPrefixMatch(rel); why != "" {
		return why
	}
	if why := g.hookPrefixMatch(rel); why != "" {
		return why
	}
	if why := g.pyPrefixMatch(rel); why != "" {
		return why
	}
	if g.runRoot != "" {
		return g.runRoot
	}
	if g.runCut != "" {
		return "the protected agents' and editors' configs start " + g.runCut + " (the check's bound): what it did not read may start this path, so it is not judged, and not applied; fewer programs named in those configs fix it"
	}
	return ""
}
