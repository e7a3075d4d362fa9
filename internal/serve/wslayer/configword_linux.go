package wslayer

import (
	"path/filepath"
	"strconv"
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

// maxSuffixes bounds the names unknownProgram protects by their end (past it, the root's runCut).
const maxSuffixes = 512

// unknownProgram fails closed, narrowly, for words[i] (word, read by configWord) when it is a
// program the config runs (its command, after a `command` key or an operator, or a runner's
// first argument: `python3 "$APP_ROOT"/scripts/fmt.py`) and starts with a variable the reader
// cannot resolve (not the user's home): the file it names is the one its literal rest names,
// below some directory; every path of the workspace that ends so is protected (runSuffixMatch),
// and it is followed as from the root (the likeliest value: the project). A rest naming no
// file (a bare `$RUNNER`) stays open: what it names is not in the config.
func (f *follower) unknownProgram(by, dir string, raw []string, i int, word string, depth int) {
	if unresolved(word) != 0 || homeTemplate().MatchString(word) || mutated("workspace-config-word-unknown") || !programAt(raw, i) {
		return
	}
	rest := word[strings.IndexByte(word, '/')+1:]
	if !strings.Contains(word, "/") || rest == "" || unresolved(rest) >= 0 || strings.ContainsAny(rest, "*?[{") {
		return
	}
	rest = filepath.Clean(rest)
	if rest == "." || rest == ".." || strings.HasPrefix(rest, "../") {
		return
	}
	g := f.g
	if len(g.runSuffix) >= maxSuffixes {
		if g.runCut == "" {
			g.runCut = "more than " + strconv.Itoa(maxSuffixes) + " programs named below a variable the check cannot resolve"
		}
		return
	}
	g.runSuffix = append(g.runSuffix, namePrefix{fold(rest), by})
	f.words(by, dir, []string{"./" + rest}, depth)
}

// programAt: raw[i] stands where a program is named: the first word, after a `command` key or a
// statement's operator, or a runner's (python3, bash, node …) first word that is no option.
func programAt(raw []string, i int) bool {
	if i == 0 {
		return true
	}
	prev := raw[i-1]
	switch strings.Trim(prev, `"':,`) {
	case "command", "cmd", "exec", "&&", "||", "then", "do", "else":
		return true
	}
	if strings.HasSuffix(prev, ";") || strings.HasSuffix(prev, "|") || strings.HasSuffix(prev, "&") {
		return true
	}
	for j := i - 1; j >= 0; j-- {
		w := strings.Trim(raw[j], "\"'`;&|(),[]")
		if strings.HasPrefix(w, "-") {
			continue
		}
		return shellRunners[filepath.Base(w)] || runtimeLang(w) != ""
	}
	return false
}

// runSuffixMatch says why rel (from the root) is protected as a program a config names below a
// variable the check cannot resolve (unknownProgram): rel, or a directory above it, ends with
// the name the config gives; "" when none does.
func (g *gitGuard) runSuffixMatch(rel string) string {
	if len(g.runSuffix) == 0 {
		return ""
	}
	r := fold(rel)
	for a := r; a != "." && a != "/" && a != ""; a = filepath.Dir(a) {
		for _, s := range g.runSuffix {
			if a == s.prefix || strings.HasSuffix(a, "/"+s.prefix) {
				by, _ := filepath.Rel(g.ws, s.by)
				return "a program the protected file " + strconv.Quote(filepath.ToSlash(by)) + " starts below a variable the check " +
					"cannot resolve (" + strconv.Quote(s.prefix) + " in any directory): the host runs it; name it from $CLAUDE_PROJECT_DIR or relative to the project"
			}
		}
	}
	return ""
}
