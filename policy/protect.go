package policy

import "slices"

// DefaultProtect are workspace files and directories that run programs or steer the host (or the
// next agent session) without anyone asking: version-control hooks and config, hook managers,
// package-manager and tool-manager rc files that name programs, editor and devcontainer tasks,
// CI workflows, agent instruction and MCP files, compiled Python caches and installed
// dependencies, and the start-up files of a home (shell rc files, systemd user units, autostart
// entries) for a workspace that is one. A pattern without "/" matches that name at any depth; a pattern with "/" is
// anchored at the workspace root. A match protects everything under it too. Project files people
// edit on purpose (Makefile, package.json, pyproject.toml, source code) are deliberately absent:
// anything written in the workspace is model-controlled content, to be reviewed as such.
var DefaultProtect = []string{
	// version control and hook managers
	".git", ".hg", ".svn", ".gitmodules", ".gitattributes", ".husky", ".githooks",
	".pre-commit-config.yaml", ".lefthook.yml", ".lefthook.yaml", "lefthook.yml", "lefthook.yaml",
	".lefthook-local.yml", "lefthook-local.yml", ".overcommit.yml",
	// package, tool and toolchain managers that run what their config names
	".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "bunfig.toml", ".envrc", ".tool-versions",
	".mise.toml", "mise.toml", ".mise", ".cargo", "rust-toolchain", "rust-toolchain.toml", ".bazelrc",
	".mvn", "gradle/wrapper", ".pdbrc", ".gdbinit", ".lldbinit", ".exrc", ".nvimrc", ".nvim.lua",
	"conftest.py", "__pycache__", "*.pyc", ".venv", "node_modules",
	// editors, devcontainers and their tasks
	".vscode", ".idea", ".fleet", ".zed", "*.code-workspace", ".devcontainer", ".devcontainer.json",
	// CI
	".github/workflows", ".github/actions", ".gitlab-ci.yml", ".circleci", ".travis.yml", ".buildkite",
	".drone.yml", "azure-pipelines.yml", "bitbucket-pipelines.yml", "Jenkinsfile",
	// agent instructions and MCP configuration the next session obeys
	"CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENT.md", "GEMINI.md", ".claude", ".cursor", ".cursorrules",
	".windsurfrules", ".clinerules", ".github/copilot-instructions.md", ".aider.conf.yml", ".continue",
	".mcp.json",
	// shell and session start-up files, for a workspace that is (or is synced into) a home:
	// shells source the rc files, systemd --user starts the units linked under
	// .config/systemd/user, desktops start .config/autostart entries (KDE also its scripts)
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
	".zlogin", ".zlogout", ".xprofile", ".xsessionrc", ".xinitrc", ".config/fish", ".config/environment.d",
	".config/systemd", ".local/share/systemd", ".config/autostart", ".config/autostart-scripts", ".config/plasma-workspace",
	// what else a home holds that runs code: git's user config (fsmonitor runs in every
	// repository), programs first on PATH, python's user site (a .pth there runs at every
	// start), editors' and multiplexers' rc files. Not .ssh or *.pth: an interpreter's code
	// that names ~/.ssh/config, or a model saved as model.pth, would be refused everywhere;
	// serve refuses a workspace that is a home (CheckWorkspacePath).
	".gitconfig", ".config/git", ".local/bin", ".local/lib", ".pam_environment",
	".vimrc", ".tmux.conf", ".inputrc",
	// more tool managers that run what their files name
	".yarn/releases", ".yarn/plugins", "mise.local.toml", ".mise.local.toml", ".lfsconfig",
	// other version-control systems' repositories (their config names pagers, editors, hooks:
	// Jujutsu's ui.pager and fix.tools, Sapling's [hooks]) and bazelisk's choice of the bazel it
	// downloads and runs (attack round 4, finding 8 and 15)
	".jj", ".sl", ".bzr", "_darcs", ".pijul", ".bazeliskrc", ".bazelversion",
	// configuration that editors execute when a file of the folder is opened or saved: ESLint,
	// Prettier, Tailwind and PostCSS load JavaScript configs, pylint runs init-hook, mypy imports
	// the plugins it names, Emacs evaluates .dir-locals.el (pyproject.toml and setup.cfg can carry
	// the pylint/mypy settings too and stay writable by design: content to review)
	"eslint.config.*", ".eslintrc.js", ".eslintrc.cjs", "prettier.config.*", ".prettierrc.js",
	".prettierrc.cjs", ".prettierrc.mjs", "tailwind.config.*", "postcss.config.*", ".postcssrc.js",
	".pylintrc", "mypy.ini", ".mypy.ini", ".dir-locals.el", // not pylintrc: a bare word of letters is a
	// name split/csplit could generate from any prefix, which would refuse them everywhere
	// more agents' MCP servers, rules and instructions, which their next session starts or obeys
	// (Gemini CLI, Qwen Code, Roo Code, Kiro (also its agent hooks), Amazon Q, opencode (also its
	// JavaScript plugins), Crush, Windsurf, Trae, Junie, Copilot's instructions, chat modes and
	// prompt files; attack round 5, M3)
	".gemini", ".qwen", ".roo", ".roomodes", ".kiro", ".amazonq", "opencode.json", "opencode.jsonc",
	".opencode", ".crush.json", "crush.json", ".windsurf", ".trae", ".junie", ".github/instructions",
	".github/chatmodes", ".github/prompts",
	// what git hooks run through their managers: lint-staged's commands, commitlint's JavaScript
	// config (commit-msg), simple-git-hooks' hook commands
	".lintstagedrc", ".lintstagedrc.*", "lint-staged.config.*", "commitlint.config.*", ".commitlintrc",
	".commitlintrc.*", ".simple-git-hooks.*", "simple-git-hooks.*",
}

// round15b are what the list above missed (attack round 15b). Agents' files that take over
// from protected ones: Codex's .codex/config.toml names the MCP servers and the notify program
// Codex starts in a trusted project, .codex/rules allow commands to run without asking,
// .agents/skills are skills (instructions and scripts) it picks up, AGENTS.override.md is read
// instead of the protected AGENTS.md beside it, and Zed's agent reads .rules ahead of every
// protected instruction file. Editors' workspace config that runs programs, as .vscode and .zed
// do: Helix's .helix/languages.toml names language servers it starts on opening a file, and
// lazy.nvim loads a .lazy.lua plugin spec (as .nvim.lua). A call that wrote one steered the
// user's next agent session or editor past the protected names.
var round15b = []string{".codex", ".agents", "AGENTS.override.md", ".rules", ".helix", ".lazy.lua"}

// round16b are what the lists above missed (attack round 16b). Editors' extensions and
// language servers that load code a workspace config names when a file is opened or saved: the
// other spellings of PostCSS's, Prettier's (3.5 takes TypeScript) and ESLint's configs, and their
// JSON and YAML forms, which name plugins and parsers by path; stylelint's and Babel's (ESLint's
// Babel parser loads it), Svelte's, Vite's, Vitest's and Jest's JavaScript configs (their
// extensions load them on opening the folder); lua-language-server's .luarc.json (its
// runtime.plugin is Lua it runs); RuboCop's and Solargraph's YAML (require: Ruby files);
// PHP-CS-Fixer's PHP config and PHPStan's bootstrapFiles; Theia's and Kate's project settings;
// Emacs's second dir-locals file and localvimrc's. And what runs at a cd or a package manager's
// next command: Jupyter's config files in the working directory (Python it runs at start),
// Bundler's .bundle/config, Yarn Plug'n'Play's loaders (.pnp.cjs runs in every yarn run), and
// direnv's .direnv (layout python puts its bin on PATH); Sublime Text's and coc.nvim's project
// settings, which name the language servers they start, and Nova's.
var round16b = []string{
	".postcssrc", ".postcssrc.*", ".prettierrc", ".prettierrc.*", ".eslintrc", ".eslintrc.*",
	"stylelint.config.*", ".stylelintrc", ".stylelintrc.*", "babel.config.*", ".babelrc", ".babelrc.*",
	"svelte.config.*", "vite.config.*", "vitest.config.*", "vitest.workspace.*", "jest.config.*",
	".luarc.json", ".luarc.jsonc", ".rubocop.yml", ".solargraph.yml", ".php-cs-fixer.php", ".php-cs-fixer.dist.php",
	"phpstan.neon", "phpstan.neon.dist", "phpstan.dist.neon", ".theia", ".kateproject", ".dir-locals-2.el", ".lvimrc",
	"jupyter_*_config.py", "jupyter_*_config.json", ".bundle", ".pnp.cjs", ".pnp.loader.mjs", ".pnp.js", ".direnv",
	// Sublime Text's project file (the LSP package starts the language servers its settings
	// name), coc.nvim's workspace settings (.vim/coc-settings.json: language servers it starts on
	// opening a file), Nova's workspace settings and tasks
	"*.sublime-project", "coc-settings.json", ".nova",
}

// roundatk18a are what the lists above missed (attack round atk18a): interactive interpreters'
// and build launchers' rc files they read from the current directory at start, as .pdbrc and
// .gdbinit (R's .Rprofile and .Renviron, GHCi's .ghci, IRB's .irbrc, Pry's .pryrc, IEx's
// .iex.exs, Octave's .octaverc, sbt's .sbtopts and .jvmopts, whose -javaagent runs a jar), and
// MSBuild's Directory.Build.props/.targets, imported by every project below them (an IDE's
// design-time build on opening the folder runs their Exec tasks).
var roundatk18a = []string{".Rprofile", ".Renviron", ".ghci", ".irbrc", ".pryrc", ".iex.exs", ".octaverc",
	".sbtopts", ".jvmopts", "Directory.Build.props", "Directory.Build.targets"}

// roundatk31 are what the lists above missed (attack round atk31, F2): Augment Code's agent
// instructions (.augment-guidelines, its .augment rules), beside .cursorrules and .clinerules;
// and cloud workspaces' config whose commands run when the workspace is opened or started, as
// .devcontainer's do: Project IDX / Firebase Studio's .idx/dev.nix (onCreate, onStart),
// Gitpod's .gitpod.yml tasks and .gitpod.Dockerfile, Replit's .replit and replit.nix. (.env is
// not: pipenv and just load it, but it is the file models are most often asked to write; its
// content is to review, as pyproject.toml's.)
var roundatk31 = []string{".augment-guidelines", ".augment", ".idx", ".gitpod.yml", ".gitpod.Dockerfile", ".replit", "replit.nix"}

// roundatk40 are what the lists above missed (attack round atk40, F4): in-project package
// directories that the host's next run of the project loads code from, beside the protected
// node_modules and .venv: Yarn Plug'n'Play's package archives (.pnp.cjs, protected, loads them)
// and its editor SDKs (VS Code starts .yarn/sdks' TypeScript server), Composer's autoloader and
// the plugin list it loads on every composer command, bundler's in-project gems, and the OCaml
// toplevel's .ocamlinit (read from the current directory, as .ghci).
var roundatk40 = []string{".yarn/cache", ".yarn/sdks", ".yarn/unplugged", "vendor/autoload.php", "vendor/composer", "vendor/bundle", ".ocamlinit"}

// roundatk40b are mise's other config names (attack round atk40b, F3): mise loads each in a
// project as it does mise.toml (its [env] exported, its [hooks] run at a cd): the MISE_ENV
// forms (mise.<env>.toml, .mise.<env>.toml and their .local), the legacy .rtx.toml, and the
// directory forms (.config/mise.toml, .config/mise/, mise/config.toml, mise/conf.d). .mise and
// .tool-versions are on the list above.
var roundatk40b = []string{"mise.*.toml", ".mise.*.toml", ".rtx.toml", ".rtx.local.toml", ".config/mise.toml", ".config/mise.*.toml",
	".config/mise", "mise/config.toml", "mise/config.*.toml", "mise/conf.d"}

// roundatk48a are lefthook's files the lists above missed (attack round atk48a, F1): its script
// directories (.lefthook/<hook>/<file>, .lefthook-local/…: lefthook runs them as `RUNNER FILE` at
// the next git commit; a config's own source_dir is protected by the follower), its config in
// every format and place it reads (YAML, JSON, JSONC, TOML; lefthook-local.* merged over the
// main one; .config/lefthook.*), beside the YAML names on the list above. Any extension: lefthook
// before 1.x read its configs through viper, which takes its every format.
var roundatk48a = []string{".lefthook", ".lefthook-local", "lefthook.*", ".lefthook.*", "lefthook-local.*", ".lefthook-local.*",
	".config/lefthook.*", ".config/lefthook-local.*"}

// agents are the coding agents' project files, one entry per agent and kind: instruction
// (context) files, skills, MCP server configs, hooks and rules. An agent's files are listed
// together so a sibling of a protected one is not missed (attack round atk37, F4: Kilo Code's
// .kilocode/mcp.json beside Roo Code's protected .roo, Crush's CRUSH.md beside its crush.json,
// Qwen Code's QWEN.md beside .qwen, Goose's .goosehints, Warp's WARP.md). Names match without
// regard to case, so CRUSH.md is also crush.md and Crush.md, every spelling Crush reads.
// Entries already on the lists above are not added twice.
var agents = []struct {
	agent                       string
	context, skills, mcp, hooks []string
}{
	{agent: "Claude Code", context: []string{"CLAUDE.md", "CLAUDE.local.md"}, skills: []string{".claude"}, mcp: []string{".mcp.json"}, hooks: []string{".claude"}},
	{agent: "Codex", context: []string{"AGENTS.md", "AGENTS.override.md"}, skills: []string{".agents"}, mcp: []string{".codex"}, hooks: []string{".codex"}},
	// Amp: its workspace settings (.amp/settings.json) start the MCP servers under
	// amp.mcpServers (attack round atk37b, F4)
	{agent: "Amp", context: []string{"AGENT.md", "AGENTS.md"}, skills: []string{".agents"}, mcp: []string{".amp"}},
	// Factory's Droid: .factory holds its settings (hooks, permissions), mcp.json, skills,
	// commands and droids; skills also at the legacy .agent/skills (attack round atk37b, F4)
	{agent: "Factory Droid", context: []string{"AGENTS.md", ".factory"}, skills: []string{".factory", ".agent"}, mcp: []string{".factory"}, hooks: []string{".factory"}},
	// Google Antigravity: rules, workflows and skills under .agents, and the legacy .agent
	{agent: "Antigravity", context: []string{"GEMINI.md", "AGENTS.md", ".agents", ".agent"}, skills: []string{".agents", ".agent"}},
	{agent: "Gemini CLI", context: []string{"GEMINI.md"}, mcp: []string{".gemini"}, hooks: []string{".gemini"}},
	{agent: "Qwen Code", context: []string{"QWEN.md"}, mcp: []string{".qwen"}, hooks: []string{".qwen"}},
	{agent: "Cursor", context: []string{".cursorrules", ".cursor"}, mcp: []string{".cursor"}, hooks: []string{".cursor"}},
	{agent: "Windsurf", context: []string{".windsurfrules", ".windsurf"}},
	{agent: "Cline", context: []string{".clinerules"}},
	// Roo Code and its fork Kilo Code: rules directories and their legacy single files, custom
	// modes, project MCP servers (.roo/mcp.json, .kilocode/mcp.json); Kilo's current config
	// (kilo.json, kilo.jsonc, .kilo/) starts MCP servers under its "mcp" key, as opencode's does
	{agent: "Roo Code", context: []string{".roo", ".roorules", ".roomodes"}, mcp: []string{".roo"}},
	{agent: "Kilo Code", context: []string{".kilocode", ".kilocoderules", ".kilocodemodes", ".kilo"}, skills: []string{".kilo"},
		mcp: []string{".kilocode", "kilo.json", "kilo.jsonc", ".kilo"}},
	{agent: "opencode", context: []string{"AGENTS.md"}, skills: []string{".opencode"}, mcp: []string{"opencode.json", "opencode.jsonc"}, hooks: []string{".opencode"}},
	// Crush reads crush.md, Crush.md, CRUSH.md and their .local forms (case folded here)
	{agent: "Crush", context: []string{"CRUSH.md", "CRUSH.local.md"}, skills: []string{".crush/skills", ".crush/commands"}, mcp: []string{"crush.json", ".crush.json"}},
	{agent: "Goose", context: []string{".goosehints"}},
	{agent: "Warp", context: []string{"WARP.md"}, skills: []string{".warp"}},
	{agent: "Kiro", context: []string{".kiro"}, mcp: []string{".kiro"}, hooks: []string{".kiro"}},
	{agent: "Amazon Q", context: []string{".amazonq"}, mcp: []string{".amazonq"}},
	{agent: "Continue", context: []string{".continue"}, mcp: []string{".continue"}},
	{agent: "Aider", context: []string{".aider.conf.yml"}},
	{agent: "Zed", context: []string{".rules"}, mcp: []string{".zed"}},
	{agent: "Augment Code", context: []string{".augment-guidelines", ".augment"}},
	{agent: "Trae", context: []string{".trae"}, mcp: []string{".trae"}},
	{agent: "Junie", context: []string{".junie"}, mcp: []string{".junie"}},
	// GitHub Copilot (VS Code, the CLI, the cloud agent): custom agents (.github/agents/*.agent.md,
	// whose frontmatter takes mcp-servers and hooks), skills, hooks (.github/hooks/*.json: shell
	// commands at sessionStart, preToolUse, …), the CLI's repository MCP servers
	// (.github/mcp.json, .mcp.json), language servers (.github/lsp.json, lsp.json) and settings
	// (.github/copilot/settings.json: the plugins it enables, which bring hooks and MCP
	// servers) (attack round atk37b, F4)
	{agent: "GitHub Copilot", context: []string{".github/copilot-instructions.md", ".github/instructions", ".github/chatmodes", ".github/prompts", ".github/agents"},
		skills: []string{".github/skills"}, mcp: []string{".vscode", ".github/mcp.json", ".mcp.json", ".github/lsp.json", "lsp.json", ".github/copilot"},
		hooks: []string{".github/hooks", ".github/copilot"}},
}

// agentFiles are every entry of agents, once.
func agentFiles() []string {
	var out []string
	for _, a := range agents {
		for _, l := range [][]string{a.context, a.skills, a.mcp, a.hooks} {
			for _, f := range l {
				if !slices.Contains(out, f) {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

func init() {
	if !mutated("protect-roundatk31") {
		DefaultProtect = append(DefaultProtect, roundatk31...)
	}
	if !mutated("protect-round15b") {
		DefaultProtect = append(DefaultProtect, round15b...)
	}
	if !mutated("protect-round16b") {
		DefaultProtect = append(DefaultProtect, round16b...)
	}
	if !mutated("protect-roundatk18a") {
		DefaultProtect = append(DefaultProtect, roundatk18a...)
	}
	if !mutated("protect-roundatk40") {
		DefaultProtect = append(DefaultProtect, roundatk40...)
	}
	if !mutated("protect-roundatk40b") {
		DefaultProtect = append(DefaultProtect, roundatk40b...)
	}
	if !mutated("protect-roundatk48a") {
		DefaultProtect = append(DefaultProtect, roundatk48a...)
	}
	if !mutated("protect-agents-atk37") {
		for _, f := range agentFiles() {
			// the rounds' lists add their own (each round's mutant takes its entries out)
			if !slices.Contains(DefaultProtect, f) && !slices.Contains(round15b, f) && !slices.Contains(roundatk31, f) {
				DefaultProtect = append(DefaultProtect, f)
			}
		}
	}
}
