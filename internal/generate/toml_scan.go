package generate

import (
	"bytes"
	"slices"

	"github.com/BurntSushi/toml"
)

// init edits Codex's TOML line by line, to keep every other line as written. Which lines are
// table headers and keys is read here statement by statement: a line inside a multi-line string
// or array ("[1] the source" in a prompt, `command = …` in a note) is part of its value, never a
// header or a key of its own (atk33 F2, F4).

// tomlStmt is one statement of a TOML text: a table header, a key/value (its value may run over
// several lines), or a blank or comment line.
type tomlStmt struct {
	start, end int      // its lines: end is past the newline that ends its last line
	header     bool     // [table] or [[array of tables]]
	array      bool     // [[…]]
	path       []string // the header's table, or the key/value's key (each part of a dotted key), decoded; nil = not read
	value      int      // a key/value's value starts here
}

// tomlStatements splits a TOML text into its statements. Text that is not TOML gives statements
// without a path, never an error: init decodes the file before editing it, and checks the result.
func tomlStatements(src []byte) []tomlStmt {
	var out []tomlStmt
	pos := 0
	for pos < len(src) {
		st := tomlStmt{start: pos}
		i := pos
		for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
		end := i
		switch {
		case i >= len(src) || src[i] == '\n' || src[i] == '\r' || src[i] == '#':
		case src[i] == '[':
			st.header = true
			st.array = bytes.HasPrefix(src[i:], []byte("[["))
			from := i + 1
			if st.array {
				from++
			}
			to := tomlKeyEnd(src, from, ']')
			st.path = tomlKeyPath(src[from:to])
			end = to
		default:
			to := tomlKeyEnd(src, i, '=')
			st.path = tomlKeyPath(src[i:to])
			if to < len(src) && src[to] == '=' {
				st.value = to + 1
				for st.value < len(src) && (src[st.value] == ' ' || src[st.value] == '\t') {
					st.value++
				}
				end = tomlValueEnd(src, st.value)
			} else {
				st.path, end = nil, to
			}
		}
		st.end = len(src)
		if eol := bytes.IndexByte(src[end:], '\n'); eol >= 0 {
			st.end = end + eol + 1
		}
		out = append(out, st)
		pos = st.end
	}
	return out
}

// tomlKeyEnd is where a key starting at i ends: at stop outside its quoted parts, or at the end
// of the line.
func tomlKeyEnd(src []byte, i int, stop byte) int {
	for i < len(src) && src[i] != stop && src[i] != '\n' {
		if src[i] == '"' || src[i] == '\'' {
			i = tomlStringEnd(src, i)
			continue
		}
		i++
	}
	return i
}

// tomlKeyPath decodes a key as written (bare, quoted with escapes, dotted) with the TOML reader
// itself: "mcp\u005Fservers" is mcp_servers. nil when it is no key.
func tomlKeyPath(key []byte) []string {
	if len(bytes.TrimSpace(key)) == 0 || bytes.ContainsAny(key, "\r\n") {
		return nil
	}
	var m map[string]any
	if _, err := toml.Decode(string(key)+" = 0\n", &m); err != nil {
		return nil
	}
	var path []string
	for len(m) == 1 {
		for k, v := range m {
			path = append(path, k)
			sub, ok := v.(map[string]any)
			if !ok {
				return path
			}
			m = sub
		}
	}
	return nil
}

// hasKeyPrefix says whether path starts with prefix.
func hasKeyPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}

// tomlInlineExtended finds the first table header that falls inside a value written inline
// (key = { … } or key = [ … ]): TOML 1.0, and Codex's reader with it, refuses such a file whole,
// while init's reader (BurntSushi/toml) takes it, and its MetaData tells an inline table from a
// [table] by nothing ("Hash" both). It returns the inline value's key and the header's line.
func tomlInlineExtended(src []byte) (inline []string, line int, found bool) {
	var table []string
	var inl [][]string
	for _, st := range tomlStatements(src) {
		switch {
		case st.header && st.path != nil:
			for _, p := range inl {
				if hasKeyPrefix(st.path, p) {
					return p, lineOf(src, st.start), true
				}
			}
			if st.array { // a new element: the previous one's inline values are not its
				inl = slices.DeleteFunc(inl, func(p []string) bool { return hasKeyPrefix(p, st.path) })
			}
			table = st.path
		case !st.header && st.path != nil && st.value < len(src) && (src[st.value] == '{' || src[st.value] == '['):
			inl = append(inl, append(slices.Clone(table), st.path...))
		}
	}
	return nil, 0, false
}
