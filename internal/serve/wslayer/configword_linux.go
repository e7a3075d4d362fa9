package wslayer

import (
	"strings"
)

// A config's command line reaches a shell (a hook's `command` runs under `sh -c`) or a client
// that expands its own variables: a word's quotes are removed wherever they are and a variable
// the client sets to the project is expanded wherever it stands, so Claude Code's documented
// `"$CLAUDE_PROJECT_DIR"/scripts/fmt.sh` is the file scripts/fmt.sh. Read with its quotes
// trimmed from the ends only and the variable replaced only as a prefix, that word held a `$`
// and was skipped: the hook's own script was the call's to rewrite (atk45a F1).

// projectVars are the variables that stand for the project's root in configs: Claude Code's
// CLAUDE_PROJECT_DIR (a hook's environment; its .mcp.json expansion), VS Code's workspaceFolder
// and workspaceRoot, the working directory (a hook runs from the project).
var projectVars = map[string]bool{"CLAUDE_PROJECT_DIR": true, "workspaceFolder": true, "workspaceRoot": true, "PWD": true}

// configWord is the word w (a blank-separated token of a config's command line) as a shell
// reads it: the operators bordering it trimmed, its quotes removed (a backslash escaping the
// next byte outside single quotes), each projectVars variable (`$NAME`, `${NAME}`) the root
// ("."). A single-quoted variable is expanded too, the wider reading: a client expands `${…}`
// in a string no shell reads, quotes or not.
func configWord(w string) string {
	w = strings.Trim(w, "`;&|()")
	var b strings.Builder
	quote := byte(0)
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c == quote:
			quote = 0
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case c == '\\' && i+1 < len(w) && (quote == 0 || quote == '"' && strings.IndexByte("$`\"\\", w[i+1]) >= 0):
			i++
			b.WriteByte(w[i])
		case c == '$':
			n, end := projectVar(w, i)
			if n == "" {
				b.WriteByte(c)
				continue
			}
			b.WriteByte('.')
			i = end - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// projectVar is the projectVars name of the expansion at w[i] (a `$`) and the index past it, ""
// when it names none.
func projectVar(w string, i int) (string, int) {
	if strings.HasPrefix(w[i+1:], "{") {
		name, _, ok := strings.Cut(w[i+2:], "}")
		if !ok || !projectVars[name] {
			return "", 0
		}
		return name, i + 3 + len(name)
	}
	j := i + 1
	for j < len(w) && (w[j] == '_' || w[j] >= 'A' && w[j] <= 'Z' || w[j] >= 'a' && w[j] <= 'z' || j > i+1 && w[j] >= '0' && w[j] <= '9') {
		j++
	}
	if !projectVars[w[i+1:j]] {
		return "", 0
	}
	return w[i+1 : j], j
}
