package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// checkForm says why line, an entry that matches its hash, is not as serve writes it ("" when
// it is). The hash covers the entry as Go decodes it, and Go reads object keys without regard
// to case, keeps the last of duplicates and drops unknown keys: a line carrying a fake "tool"
// first and the real one after it as "Tool" keeps its hash while jq and Python read the fake
// (attack round atk32, F4). serve writes sealed, the encoding of the entry, byte for byte.
func checkForm(line, sealed []byte) string {
	if err := CheckKeys(withoutArguments(line)); err != nil && !mutated("audit-verify-keys") {
		return ambiguousLine(err)
	}
	if !bytes.Equal(line, sealed) && !mutated("audit-verify-form") {
		at := 0
		for at < len(line) && at < len(sealed) && line[at] == sealed[at] {
			at++
		}
		return fmt.Sprintf("not as serve writes it from byte %d (%s): a key serve does not write, or keys reordered, spaced or escaped otherwise; "+
			"its hash does not cover what other readers (jq, Python) see there, so the line was edited", at+1, excerpt(line[at:]))
	}
	return ""
}

// ambiguousLine words a CheckKeys error for a log line: it is an edit, not a client's mistake.
func ambiguousLine(err error) string {
	var ke *KeyError
	if !errors.As(err, &ke) {
		return "its keys cannot be checked: " + err.Error()
	}
	where := "at the top level"
	if ke.Depth > 1 {
		where = fmt.Sprintf("in an object at depth %d", ke.Depth)
	}
	what := fmt.Sprintf("the keys %s and %s %s are equal under case folding", strconv.Quote(ke.Key), strconv.Quote(ke.Other), where)
	switch {
	case ke.Invalid:
		what = fmt.Sprintf("the key %s %s is not valid Unicode", strconv.Quote(ke.Key), where)
	case ke.Key == ke.Other:
		what = fmt.Sprintf("the key %s appears twice %s", strconv.Quote(ke.Key), where)
	}
	return what + ": mcpsandbox reads one value (the last), jq and Python another, and the hash covers only the one mcpsandbox reads; " +
		"serve never writes such a line, so it was edited"
}

// withoutArguments is line with the value of its top-level "arguments" (in any case, as Go reads
// it) replaced by null: the arguments are logged as the client sent them, duplicate keys
// included (the record of a call refused for them), and the hash covers them as written.
func withoutArguments(line []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(line))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return line
	}
	var out []byte
	last := 0
	for d.More() {
		t, err := d.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			break
		}
		from := int(d.InputOffset()) // after the key: the colon and the value follow
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			break
		}
		if strings.EqualFold(key, "arguments") {
			out = append(append(out, line[last:from]...), ":null"...)
			last = int(d.InputOffset())
		}
	}
	if out == nil {
		return line
	}
	return append(out, line[last:]...)
}

// excerpt is the start of b for a message: at most 40 bytes, what is not printable as '?'.
func excerpt(b []byte) string {
	n := min(len(b), 40)
	for n > 0 && n < len(b) && !utf8.RuneStart(b[n]) {
		n--
	}
	s := strings.Map(func(r rune) rune {
		if !unicode.IsGraphic(r) {
			return '?'
		}
		return r
	}, string(b[:n]))
	if n < len(b) {
		s += "…"
	}
	return s
}
