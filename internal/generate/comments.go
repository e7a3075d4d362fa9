package generate

import (
	"bytes"
	"strings"
)

// lostComments are the comments of old (a client config) that new no longer has, as written
// (trimmed): replacing an entry rewrites it whole, and what the user wrote beside its keys goes
// with it (trial32 F4). Compared as multisets, so a comment left elsewhere in the file, byte for
// byte, is not counted lost.
func lostComments(format string, old, new []byte) []string {
	have := map[string]int{}
	for _, c := range comments(format, new) {
		have[c]++
	}
	var lost []string
	for _, c := range comments(format, old) {
		if have[c] > 0 {
			have[c]--
			continue
		}
		lost = append(lost, c)
	}
	return lost
}

// comments are the comments of b, a JSONC ("json") or TOML ("toml") file: // and /* */ in
// JSONC, # in TOML, never inside a string.
func comments(format string, b []byte) []string {
	if format == "toml" {
		return tomlComments(b)
	}
	var out []string
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"':
			i = stringEnd(b, i, "\"", true)
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			j := i
			for j < len(b) && b[j] != '\n' {
				j++
			}
			out = append(out, strings.TrimSpace(string(b[i:j])))
			i = j
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return append(out, strings.TrimSpace(string(b[i:])))
			}
			out = append(out, strings.TrimSpace(string(b[i:i+end+4])))
			i += end + 3
		}
	}
	return out
}

// tomlComments are the # comments of a TOML file, never inside one of its four kinds of string.
func tomlComments(b []byte) []string {
	var out []string
	for i := 0; i < len(b); i++ {
		switch {
		case bytes.HasPrefix(b[i:], []byte(`"""`)):
			i = stringEnd(b, i+2, `"""`, true)
		case bytes.HasPrefix(b[i:], []byte(`'''`)):
			i = stringEnd(b, i+2, `'''`, false)
		case b[i] == '"':
			i = stringEnd(b, i, `"`, true)
		case b[i] == '\'':
			i = stringEnd(b, i, `'`, false)
		case b[i] == '#':
			j := i
			for j < len(b) && b[j] != '\n' {
				j++
			}
			out = append(out, strings.TrimSpace(string(b[i:j])))
			i = j
		}
	}
	return out
}

// stringEnd is the index of the last byte of the string whose opening quote's last byte is at
// i, closed by quote (escapes: a backslash skips the next byte), or the end of b.
func stringEnd(b []byte, i int, quote string, escapes bool) int {
	for j := i + 1; j < len(b); j++ {
		if escapes && b[j] == '\\' {
			j++
			continue
		}
		if bytes.HasPrefix(b[j:], []byte(quote)) {
			return j + len(quote) - 1
		}
	}
	return len(b) - 1
}
