package docker

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// gitHooksProtect is what a commit must also refuse in workspace ws beyond the default protect
// list: the directories git's core.hooksPath names (the repository's own config, the files it
// includes, and a relative value in the host's system or global config), as workspace-relative
// patterns. A hook manager's directory can be any name ("ci/git-hooks"), so no fixed list holds it.
func gitHooksProtect(ws string) []string {
	var vals []string
	for _, f := range []string{filepath.Join(ws, ".git", "config"), "/etc/gitconfig"} {
		vals = append(vals, gitHooksPaths(f, 0)...)
	}
	if home, err := os.UserHomeDir(); err == nil {
		vals = append(vals, gitHooksPaths(filepath.Join(home, ".gitconfig"), 0)...)
		vals = append(vals, gitHooksPaths(filepath.Join(home, ".config", "git", "config"), 0)...)
	}
	var out []string
	for _, v := range vals {
		if strings.HasPrefix(v, "~") {
			continue
		}
		if filepath.IsAbs(v) {
			r, err := filepath.Rel(ws, v)
			if err != nil {
				continue
			}
			v = r
		}
		v = filepath.ToSlash(filepath.Clean(v))
		if v == "." || v == ".." || strings.HasPrefix(v, "../") {
			continue
		}
		out = append(out, v)
	}
	return out
}

// gitHooksPaths reads a git config file for core.hooksPath values, following included files a
// few levels deep (relative to the including file).
func gitHooksPaths(file string, depth int) []string {
	f, err := os.Open(file)
	if err != nil || depth > 5 {
		return nil
	}
	defer f.Close()
	var out []string
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ln := strings.TrimSpace(sc.Text())
		if ln == "" || ln[0] == '#' || ln[0] == ';' {
			continue
		}
		if ln[0] == '[' {
			end := strings.IndexByte(ln, ']')
			if end < 0 {
				continue
			}
			section = strings.ToLower(strings.Fields(strings.TrimSpace(ln[1:end]) + " ")[0])
			if ln = strings.TrimSpace(ln[end+1:]); ln == "" {
				continue
			}
		}
		k, v, ok := strings.Cut(ln, "=")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), gitConfigValue(v)
		switch {
		case section == "core" && k == "hookspath":
			out = append(out, v)
		case (section == "include" || strings.HasPrefix(section, "includeif")) && k == "path":
			if !filepath.IsAbs(v) && !strings.HasPrefix(v, "~") {
				v = filepath.Join(filepath.Dir(file), v)
			}
			out = append(out, gitHooksPaths(v, depth+1)...)
		}
	}
	return out
}

// gitConfigValue unquotes a git config value and drops a trailing comment.
func gitConfigValue(v string) string {
	v = strings.TrimSpace(v)
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
