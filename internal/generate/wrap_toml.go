package generate

import (
	"bytes"
	"errors"
	"regexp"
	"slices"
)

// Codex keeps a server as a [mcp_servers.NAME] table (and its sub-tables, such as
// [mcp_servers.NAME.env]): its span is from that header to the next table that is not its own.

func listTOML(t Target, src []byte) ([]WrapServer, error) {
	var doc map[string]any
	md, err := decodeTOML(src, &doc)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			return nil, se
		}
		return nil, &SyntaxError{Line: 1, Col: 1, Msg: err.Error()}
	}
	servers, _ := doc[t.Client.Key].(map[string]any)
	var names []string
	for _, k := range md.Keys() {
		if len(k) >= 2 && k[0] == t.Client.Key && !slices.Contains(names, k[1]) {
			names = append(names, k[1])
		}
	}
	var out []WrapServer
	for _, name := range names {
		v, ok := servers[name].(map[string]any)
		s := WrapServer{Target: t, Name: name, Keys: []string{t.Client.Key, name}}
		start, end, found, _ := locateTOML(src, t.Client.Key, name)
		switch {
		case !ok:
			s.Skip = "its entry is not a table"
		case !found:
			s.Skip = "it is defined inline, not as a [" + t.Client.Key + "." + tomlKey(name) + "] table: edit it by hand"
		default:
			s.Raw = src[start:end]
			s.fill(v, t.Client)
		}
		out = append(out, s)
	}
	return out, nil
}

// locateTOML finds the span of [key.name] and its sub-tables: from its header to the next
// header of another table (or the end of the file), headers read as TOML statements (a line of a
// multi-line string is none).
func locateTOML(src []byte, key, name string) (start, end int, found bool, err error) {
	start = -1
	for _, st := range tomlStatements(src) {
		switch {
		case st.header && hasKeyPrefix(st.path, []string{key, name}):
			if start < 0 {
				start = st.start
			}
		case start >= 0 && st.header:
			return start, st.start, true, nil
		}
	}
	if start < 0 {
		return 0, 0, false, nil
	}
	return start, len(src), true, nil
}

// tomlKeyValue finds `key = value` in the table text (its first table only, before any
// sub-table header) and returns the value's span.
func tomlKeyValue(raw []byte, key string) (from, to int, ok bool) {
	re := regexp.MustCompile(`(?m)^[ \t]*(` + regexp.QuoteMeta(key) + `|"` + regexp.QuoteMeta(key) + `"|'` + regexp.QuoteMeta(key) + `')[ \t]*=[ \t]*`)
	body := raw
	if i := bytes.IndexByte(raw, '\n'); i >= 0 { // past the header line
		if h := tomlHeaderAt(raw[i+1:]); h >= 0 {
			body = raw[:i+1+h]
		}
	}
	m := re.FindIndex(body)
	if m == nil {
		return 0, 0, false
	}
	return m[1], tomlValueEnd(raw, m[1]), true
}

// tomlHeaderAt is where the first table header in b starts (-1 = none).
func tomlHeaderAt(b []byte) int {
	for _, st := range tomlStatements(b) {
		if st.header {
			return st.start
		}
	}
	return -1
}

// tomlValueEnd is where the TOML value starting at i ends: a string's closing quote, an
// array's or inline table's closing bracket (strings and comments inside skipped), else the end
// of the line less a comment and trailing space.
func tomlValueEnd(s []byte, i int) int {
	depth := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			i = tomlStringEnd(s, i)
			if depth == 0 {
				return i
			}
			continue
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
			if depth <= 0 {
				return i + 1
			}
		case c == '#' && depth > 0:
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case (c == '#' || c == '\n') && depth == 0:
			return len(bytes.TrimRight(s[:i], " \t\r"))
		}
		i++
	}
	return i
}

// tomlStringEnd is the position after the string starting at i (basic, literal, or multi-line).
func tomlStringEnd(s []byte, i int) int {
	q := s[i]
	if bytes.HasPrefix(s[i:], []byte{q, q, q}) {
		j := i + 3
		for j < len(s) {
			if q == '"' && s[j] == '\\' {
				j += 2
				continue
			}
			if bytes.HasPrefix(s[j:], []byte{q, q, q}) {
				j += 3
				for j < len(s) && s[j] == q { // up to two more quotes belong to the string
					j++
				}
				return j
			}
			j++
		}
		return len(s)
	}
	j := i + 1
	for j < len(s) && s[j] != q && s[j] != '\n' {
		if q == '"' && s[j] == '\\' {
			j++
		}
		j++
	}
	return min(j+1, len(s))
}

// wrapEntryTOML rewrites the table's command and args; every other line stays.
func wrapEntryTOML(raw []byte, bin string, args []string) ([]byte, error) {
	cf, ct, ok := tomlKeyValue(raw, "command")
	if !ok {
		return nil, errors.New("the entry has no command")
	}
	af, at, hasArgs := tomlKeyValue(raw, "args")
	if !hasArgs {
		eol := bytes.IndexByte(raw[ct:], '\n')
		nl := "\n"
		if eol > 0 && raw[ct+eol-1] == '\r' {
			nl = "\r\n"
		}
		if eol < 0 {
			return append(splice(raw, cf, ct, tomlString(bin)), nl+"args = "+tomlList(args)...), nil
		}
		out := splice(raw, ct+eol+1, ct+eol+1, "args = "+tomlList(args)+nl)
		return splice(out, cf, ct, tomlString(bin)), nil
	}
	if af > cf {
		out := splice(raw, af, at, tomlList(args))
		return splice(out, cf, ct, tomlString(bin)), nil
	}
	out := splice(raw, cf, ct, tomlString(bin))
	return splice(out, af, at, tomlList(args)), nil
}
