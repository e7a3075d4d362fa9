package sandbox

import (
	"strings"
	"testing"
)

// TestProtectedAgentConfigs: the default protect list covers the MCP configs, rules and
// instructions of agents beyond Claude and Cursor, and the files git hook managers run (attack
// round 5, M3: a write_file to .gemini/settings.json or opencode.json added an MCP server the
// next session starts). A sample of each kind is refused as a write target, at the top level
// and below it; names that merely resemble them are not.
func TestProtectedAgentConfigs(t *testing.T) {
	e, _, _ := testExec(t, nil)
	for _, p := range []string{
		".gemini/settings.json", ".roo/mcp.json", ".kiro/settings/mcp.json", "opencode.json",
		"opencode.jsonc", ".amazonq/mcp.json", ".crush.json", "crush.json", ".qwen/settings.json",
		".windsurf/rules/r.md", ".trae/rules/project_rules.md", ".junie/guidelines.md",
		".github/instructions/go.instructions.md", ".github/chatmodes/x.chatmode.md",
		".lintstagedrc", ".lintstagedrc.js", ".lintstagedrc.json", ".lintstagedrc.yaml", ".lintstagedrc.yml",
		".lintstagedrc.mjs", ".lintstagedrc.cjs", "lint-staged.config.js", "lint-staged.config.mjs",
		"lint-staged.config.cjs", "commitlint.config.js", ".commitlintrc", ".commitlintrc.json",
		".simple-git-hooks.js", ".simple-git-hooks.json", ".simple-git-hooks.cjs", ".husky/pre-commit",
		"pkg/opencode.json", "sub/.gemini/settings.json",
		".codex/config.toml", ".codex/rules/default.rules", ".agents/skills/x/SKILL.md", "AGENTS.override.md", "sub/AGENTS.override.md", ".rules",
		".helix/languages.toml", ".lazy.lua",
	} {
		if _, err := e.checkArgs(e.cmd("sort"), strings.Fields("-o "+p+" notes.txt")); refusedBy(err) != "allowlist.protect" {
			t.Errorf("sort -o %s: %v, want a protect refusal", p, err)
		}
	}
	for _, p := range []string{"gemini.json", "opencode.md", "notes/crush.txt", "lintstaged.txt", "docs/instructions/x.md", "notes/codex.md", "agents.txt", "rules.md", "helix.md", "lazy.lua"} {
		if _, err := e.checkArgs(e.cmd("sort"), strings.Fields("-o "+p+" notes.txt")); err != nil {
			t.Errorf("sort -o %s refused: %v", p, err)
		}
	}
}
