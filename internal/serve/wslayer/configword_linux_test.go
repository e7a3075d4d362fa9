package wslayer

import (
	"path/filepath"
	"strconv"
	"testing"
)

// claudeHook is a .claude/settings.json whose PostToolUse hook runs cmd (sh -c, from the project).
func claudeHook(cmd string) string {
	return `{"hooks": {"PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": ` +
		strconv.Quote(cmd) + `}]}]}}`
}

// Claude Code's documented hook form quotes the variable alone ("$CLAUDE_PROJECT_DIR"/x.sh):
// the word was read with its quotes trimmed from the ends only and the variable replaced only
// as a prefix, so it held a `$` and was skipped: sh ran scripts/fmt.sh, writable (atk45a F1).
// A word is read as the shell joins it, by configWord and, since atk46a F1, by the shell-line
// reader too (configLines): each alone holds these forms, so no single mutant turns this red (the
// mutant workspace-config-word-quotes survived CI 46a and was retired).
func TestCommitHookQuotedProjectVar(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []struct{ cmd, file string }{
		{`"$CLAUDE_PROJECT_DIR"/scripts/fmt.sh`, "scripts/fmt.sh"},
		{`"${CLAUDE_PROJECT_DIR}"/scripts/fmt.sh`, "scripts/fmt.sh"},
		{`python3 "$CLAUDE_PROJECT_DIR"/scripts/fmt.py`, "scripts/fmt.py"},
		{`bash "$CLAUDE_PROJECT_DIR"/scripts/fmt.sh`, "scripts/fmt.sh"},
		{`bash $CLAUDE_PROJECT_DIR/"scripts"/fmt.sh`, "scripts/fmt.sh"},
		{`bash $CLAUDE_PROJECT_DIR/scripts"/fmt.sh" --check`, "scripts/fmt.sh"},
		{`cd "$CLAUDE_PROJECT_DIR" && "$CLAUDE_PROJECT_DIR"/scripts/fmt.sh`, "scripts/fmt.sh"},
		{`"$PWD"/scripts/fmt.sh`, "scripts/fmt.sh"},
		// the forms read before, still read
		{`$CLAUDE_PROJECT_DIR/scripts/fmt.sh`, "scripts/fmt.sh"},
		{`"$CLAUDE_PROJECT_DIR/scripts/fmt.sh"`, "scripts/fmt.sh"},
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".claude", "settings.json"), claudeHook(k.cmd))
		write(t, filepath.Join(ws, "scripts", "fmt.sh"), "#!/bin/bash\necho fmt\n")
		write(t, filepath.Join(ws, "scripts", "fmt.py"), "print('fmt')\n")
		loadRefused(t, ws, k.file, `".claude/settings.json\" starts`)
		loadApplied(t, ws, "docs/a.md")
	}
}
