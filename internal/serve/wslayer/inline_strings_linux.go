package wslayer

import (
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// configStrings are a config's strings in text order, decoded as the client's parser decodes
// them (atk42 F1), for a JSON or JSONC config (configValues parses YAML and TOML; a config their
// parsers refuse is read here too, and fails closed): JSON's, TOML's basic strings ("…", """…""") with their escapes (\n a newline,
// \u0069 an i), TOML's literal strings (single-quoted, one line or three quotes' many), and in
// YAML (yaml) single-quoted (a doubled quote is one), double-quoted, plain (`- -c`, `args:
// [-c, import srv.main]`) and block (| and >) scalars. Comments (#, //) are skipped. Each is one word of a command line to the inline reader.
func configStrings(text string, yaml bool) []string {
	var out []string
	flow := 0
	prev := byte(0) // the last other character on the line (0: none; 'D': a YAML item's dash)
	for i := 0; i < len(text); i++ {
		c, at := text[i], i
		switch {
		case c == '\n':
			prev = 0
			continue
		case c == ' ' || c == '\t' || c == '\r':
			continue
		case c == '"':
			s, end := dquoted(text, i, yaml)
			out = append(out, s)
			i = end
		case c == '\'' && valuePos(prev):
			s, end := squoted(text, i)
			out = append(out, s)
			i = end
		case c == '#' && (i == 0 || text[i-1] == ' ' || text[i-1] == '\t' || text[i-1] == '\n'),
			c == '/' && i+1 < len(text) && text[i+1] == '/':
			i = lineEnd(text, i) - 1
			continue
		case c == '/' && !yaml && strings.HasPrefix(text[i:], "/*") && !mutated("workspace-config-yaml-unmodeled"):
			// JSONC's block comment (VS Code's mcp.json): its strings are no values (atk43 F1)
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				return out
			}
			i += j + 3
			continue
		case !yaml:
		case c == '[' || c == '{':
			flow++
		case c == ']' || c == '}':
			flow = max(flow-1, 0)
		case c == '-' && (i+1 == len(text) || strings.IndexByte(" \t\r\n", text[i+1]) >= 0):
			prev = 'D'
			continue
		case (c == '|' || c == '>') && valuePos(prev):
			s, end := blockScalar(text, i)
			out = append(out, s)
			i = end - 1
		case yamlPlainStart(c, prev, flow):
			s, end := plainScalar(text, i, flow)
			if end > i || mutated("workspace-config-lexer-advance") {
				out = append(out, s)
				i = end - 1
			} // else: a `:` (a flow mapping's empty key's, `{⏎ : b}`) is the indicator, no scalar
		}
		if i < at && !mutated("workspace-config-lexer-advance") {
			i = at // every case reads at least its byte: a step back re-read it for ever (atk45a F3)
		}
		prev = c
		if i < len(text) && text[i] == '\n' {
			prev = 0
		}
	}
	return out
}

func lineEnd(text string, i int) int {
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(text)
}

// valuePos: a character after prev (the line's last other one) starts a value: after one of
// `[ , : = {`, a YAML item's dash, or first on its line.
func valuePos(prev byte) bool {
	return prev == 0 || strings.IndexByte("[,:={D", prev) >= 0
}

// yamlPlainStart: c (after prev) starts a YAML plain scalar in a value's place (after `- `,
// `: `, or in a flow collection after `[`, `,` or `{`).
func yamlPlainStart(c, prev byte, flow int) bool {
	if strings.IndexByte("\"'[]{},#|>&*!%@`", c) >= 0 {
		return false
	}
	switch prev {
	case 'D', ':':
		return true
	case 0, '[', ',', '{':
		return flow > 0 // at a line's start outside one: a key (or a plain scalar's next line)
	}
	return false
}

// plainScalar reads the YAML plain scalar at text[i]: to the line's end, a ` #` comment, a
// `: ` (then a key's), and in a flow collection a `,`, `]` or `}`; it returns it and its end.
func plainScalar(text string, i, flow int) (string, int) {
	end := lineEnd(text, i)
	for j := i; j < end; j++ {
		c := text[j]
		if c == '#' && (text[j-1] == ' ' || text[j-1] == '\t') || c == ':' && (j+1 == end || text[j+1] == ' ' || text[j+1] == '\t') ||
			flow > 0 && (c == ',' || c == ']' || c == '}') {
			end = j
			break
		}
	}
	return strings.TrimSpace(text[i:end]), end
}

// blockScalar reads the YAML block scalar whose indicator (| or >) is at text[i]: the lines
// after it indented more than its line, less their common indentation, joined by newlines
// (folding, >, would join them by spaces: a newline is the wider reading of a program).
func blockScalar(text string, i int) (string, int) {
	ls := strings.LastIndexByte(text[:i], '\n') + 1
	indent := len(text[ls:i]) - len(strings.TrimLeft(text[ls:i], " "))
	end := lineEnd(text, i)
	var lines []string
	cut := -1
	for end < len(text) {
		next := lineEnd(text, end+1)
		line := text[end+1 : next]
		in := len(line) - len(strings.TrimLeft(line, " "))
		if strings.TrimSpace(line) != "" {
			if in <= indent {
				break
			}
			if cut < 0 || in < cut {
				cut = in
			}
		}
		lines = append(lines, line)
		end = next
	}
	for k, l := range lines {
		lines[k] = l[min(max(cut, 0), len(l)):]
	}
	return strings.Join(lines, "\n"), end
}

// dquoted reads the double-quoted string at text[i] (a TOML """…""" too): its decoded value
// and the index of its closing quote. JSON's and TOML's end at a line's end when not closed;
// YAML's may span lines (folded to a space).
func dquoted(text string, i int, yaml bool) (string, int) {
	if strings.HasPrefix(text[i:], `"""`) {
		j := strings.Index(text[i+3:], `"""`)
		if j < 0 {
			j = len(text) - i - 3
		}
		body := text[i+3 : i+3+j]
		return decodeConfig(strings.TrimPrefix(body, "\n"), true), min(i+5+j, len(text)-1)
	}
	j := i + 1
	for ; j < len(text) && text[j] != '"' && (yaml || text[j] != '\n'); j++ {
		if text[j] == '\\' {
			j++
		}
	}
	body := text[i+1 : min(j, len(text))]
	if yaml {
		// an escaped line break drops the break and the next line's indentation; any other
		// line break, with the blanks around it, folds to a space (atk43 F1: "import srv.\
		//   main" is import srv.main)
		body = yamlFold().ReplaceAllString(yamlEscapedBreak().ReplaceAllString(body, ""), " ")
	}
	return decodeConfig(body, false), min(j, len(text)-1)
}

var (
	yamlEscapedBreak = lazy.Regexp(`\\\r?\n[ \t]*`)
	yamlFold         = lazy.Regexp(`[ \t]*\r?\n[ \t]*`)
)

// squoted reads the single-quoted string at text[i]: TOML's literal (no escapes; three quotes
// open a multi-line one) and YAML's (a doubled quote is one); its value and the index of its closing quote.
func squoted(text string, i int) (string, int) {
	if strings.HasPrefix(text[i:], "'''") {
		j := strings.Index(text[i+3:], "'''")
		if j < 0 {
			j = len(text) - i - 3
		}
		return strings.TrimPrefix(text[i+3:i+3+j], "\n"), min(i+5+j, len(text)-1)
	}
	var b strings.Builder
	j := i + 1
	for ; j < len(text); j++ {
		if text[j] == '\'' {
			if j+1 < len(text) && text[j+1] == '\'' {
				b.WriteByte('\'')
				j++
				continue
			}
			break
		}
		b.WriteByte(text[j])
	}
	return b.String(), min(j, len(text)-1)
}

// decodeConfig decodes a JSON, TOML or YAML double-quoted string's escapes, keeping what
// separates a program's lines (\n a newline, \t a tab).
func decodeConfig(s string, multi bool) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	return decodeEscapes(s, multi, true)
}
