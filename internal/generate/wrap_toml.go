package generate

import (
	"bytes"
	"errors"
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
// sub-table header) and returns the value's span. Keys are read as TOML statements: a line
// `command = …` inside a multi-line string is part of that string (atk33 F4).
func tomlKeyValue(raw []byte, key string) (from, to int, ok bool) {
	for i, st := range tomlStatements(raw) {
		if st.header && i > 0 {
			break
		}
		if !st.header && slices.Equal(st.path, []string{key}) {
			return st.value, tomlValueEnd(raw, st.value), true
		}
	}
	return 0, 0, false
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

// checkWrapTOML: the wrap above is line-based, to keep every other line as written. The
// result, out (the whole file), must decode to the old file with only entry name changed, and
// in it only command (now bin) and args (now args); else a refusal to edit it by hand, before
// anything is written: a line that only looks like the key would leave the real command, the
// server unsandboxed, reported wrapped (atk33 F4).
func (c Client) checkWrapTOML(old, out []byte, name, bin string, args []string) error {
	if mutated("init-wrap-toml-unchecked") {
		return nil
	}
	var doc map[string]any
	if _, err := decodeTOML(old, &doc); err != nil {
		return c.editRefused(name, "wrapped", err.Error())
	}
	servers, _ := doc[c.Key].(map[string]any)
	entry, _ := servers[name].(map[string]any)
	want := map[string]any{}
	for k, v := range entry {
		want[k] = v
	}
	want["command"] = bin
	argv := make([]any, len(args))
	for i, a := range args {
		argv[i] = a
	}
	want["args"] = argv
	return c.checkTOMLEntry(doc, out, name, want, "wrapped")
}

// checkRestoredTOML: init --unwrap puts the entry's recorded text back in place of its tables;
// the result, out, must decode to the file as it is, cur, with only entry name changed, to what
// the recorded text holds.
func (c Client) checkRestoredTOML(cur, out []byte, name, original string) error {
	if mutated("init-unwrap-toml-unchecked") {
		return nil
	}
	var doc, orig map[string]any
	if _, err := decodeTOML(cur, &doc); err != nil {
		return c.editRefused(name, "restored", err.Error())
	}
	if _, err := decodeTOML([]byte(original), &orig); err != nil {
		return c.editRefused(name, "restored", "its recorded text does not parse")
	}
	servers, _ := orig[c.Key].(map[string]any)
	return c.checkTOMLEntry(doc, out, name, servers[name], "restored")
}
