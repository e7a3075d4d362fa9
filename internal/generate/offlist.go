package generate

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
)

// claudeOff says, for a Claude Code target, that Claude Code keeps the server name switched off in
// this project: /mcp's Disable writes the name into ~/.claude.json's projects → DIR →
// disabledMcpServers (a project .mcp.json's servers: disabledMcpjsonServers), outside the entry and
// kept across `claude mcp remove`. The entry init writes and checks is then never started there,
// while init said "checked" or "already configured" (trial33 F14). As for an entry's own
// "disabled" (Report's "switched off"), init says so and leaves the user's choice in place. "" = not.
func claudeOff(t Target, name string, env Env) string {
	if t.Client.ID != "claude-code" || mutated("init-claude-disabled-silent") {
		return ""
	}
	user, err := ResolveTarget("claude-code:user", env)
	if err != nil {
		return ""
	}
	b, err := ReadConfigFile(user.Path)
	if err != nil {
		return ""
	}
	var doc struct {
		Projects map[string]struct {
			Off        []string `json:"disabledMcpServers"`
			OffMCPJSON []string `json:"disabledMcpjsonServers"`
		} `json:"projects"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return ""
	}
	local, err := ResolveTarget("claude-code:local", env)
	if err != nil || len(local.Client.KeyPath) < 2 {
		return ""
	}
	dir := local.Client.KeyPath[1] // Claude Code's key for this project, as its local scope's
	pr, ok := doc.Projects[dir]
	if !ok {
		return ""
	}
	list := "disabledMcpServers"
	off := slices.Contains(pr.Off, name)
	if t.Scope == "project" && !off && slices.Contains(pr.OffMCPJSON, name) {
		list, off = "disabledMcpjsonServers", true
	}
	if !off {
		return ""
	}
	return fmt.Sprintf("Claude Code has %q switched off for this project (in %s of %s in %s, where /mcp's Disable put it; claude mcp remove leaves it there): "+
		"it will not start this entry there until you switch it on: run claude in %s, then /mcp, select %s, Enable",
		name, list, dir, user.Path, shellword.Quote(dir), name)
}
