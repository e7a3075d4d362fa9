package policy

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/mcpsandbox/mcpsandbox/internal/tomlbound"
)

// Problem is one thing wrong with a policy file, located and with its fix.
type Problem struct {
	File string // "" when the policy did not come from a file
	Line int    // 0 when unknown
	Key  string // dotted key, e.g. "allowlist.commands[0].path"
	Msg  string
	Fix  string
}

func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Msg)
	if p.Fix != "" {
		b.WriteString(" (fix: " + p.Fix + ")")
	}
	return b.String()
}

// Error lists every problem found; callers can range over Problems.
type Error struct{ Problems []Problem }

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	if len(lines) == 1 {
		return "invalid policy: " + lines[0]
	}
	return fmt.Sprintf("invalid policy, %d problems:\n  %s", len(lines), strings.Join(lines, "\n  "))
}

// MaxPolicyBytes bounds a policy file's size: Load reads no more (a policy is a few KB).
const MaxPolicyBytes = 1 << 20

// Load reads and validates a policy file. It must be a regular file of at most MaxPolicyBytes
// (a FIFO is refused, not waited on).
func Load(path string) (*Policy, error) {
	data, err := tomlbound.ReadRegular(path, MaxPolicyBytes)
	if mutated("policy-read-bounds") {
		data, err = os.ReadFile(path)
	}
	var tl *tomlbound.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, &Error{[]Problem{{File: path, Line: 1, Msg: fmt.Sprintf("the file is larger than %d bytes (the most a policy may be)", MaxPolicyBytes),
			Fix: "check that it is a policy file; shorten it"}}}
	case errors.Is(err, tomlbound.ErrNotRegular):
		// a pipe (<(…)) has no owner or mode to judge, and may never be written: not waited on
		return nil, fmt.Errorf("read policy %s: %w: give the path of a regular policy file (write the policy to a file first; mcpsandbox init writes one)", path, err)
	case err != nil:
		return nil, fmt.Errorf("read policy: %w (create one with `mcpsandbox init`)", err)
	}
	p, err := Parse(path, data)
	if p != nil {
		p.File = path
	}
	return p, err
}

// Parse decodes and validates policy text; name is used in problem locations.
func Parse(name string, data []byte) (*Policy, error) {
	p := Default("")
	if pr, ok := boundProblem(name, data); ok {
		return nil, &Error{[]Problem{pr}}
	}
	p.eachSection(func(_ string, s Section) { s.BeforeDecode() })
	md, err := p.decodeTOML(string(data))
	if err != nil {
		probs, rest, ok := decodeProblems(name, data, err)
		if ok {
			// every wrongly typed value is blanked: the rest of the file is checked as usual
			// (trial22: a bad glob or an out-of-range limit came out one round later), except
			// the keys already reported, whose blanked values would read as missing
			typed := map[string]bool{}
			for _, pr := range probs {
				typed[pr.Key], typed[stripIndexes(pr.Key)] = true, true // the key may name its element
			}
			for _, pr := range parseDecoded(name, data, Default(""), rest) {
				if mutated("policy-type-hides-rest") && !strings.HasPrefix(pr.Msg, "unknown key") {
					continue // before trial22: the unknown keys only
				}
				if !typed[stripIndexes(pr.Key)] {
					probs = append(probs, pr)
				}
			}
		}
		// the decoder meets wrongly typed values in a table in map order, so the first one it
		// stops at is chance
		return nil, &Error{inLineOrder(probs)}
	}
	if probs := p.checkDecoded(name, data, md); len(probs) > 0 {
		return nil, &Error{inLineOrder(probs)}
	}
	return p, nil
}

// inLineOrder sorts problems as a reader meets them in the file: by line, those without one (a
// missing key) last, each kind (unknown keys, shapes, values, found in turn) mixed in (trial32
// F9: line 60 was listed before line 59).
func inLineOrder(probs []Problem) []Problem {
	slices.SortStableFunc(probs, func(a, b Problem) int {
		if (a.Line == 0) != (b.Line == 0) {
			return cmp.Compare(b.Line, a.Line) // the one with no line (0) after
		}
		return cmp.Compare(a.Line, b.Line)
	})
	return probs
}

// parseDecoded decodes text (data with its wrongly typed values blanked, line for line) into p
// and returns what else is wrong, located in data.
func parseDecoded(name string, data []byte, p *Policy, text []byte) []Problem {
	p.eachSection(func(_ string, s Section) { s.BeforeDecode() })
	md, err := p.decodeTOML(string(text))
	if err != nil {
		return nil // decodeProblems decoded it cleanly: not reached
	}
	return p.checkDecoded(name, data, md)
}

// checkDecoded is every problem of a decoded policy: unknown keys, keys of the wrong shape, and
// the validation of each value, located in data.
func (p *Policy) checkDecoded(name string, data []byte, md toml.MetaData) []Problem {
	p.eachSection(func(_ string, s Section) { s.AfterDecode(md.IsDefined) })
	p.schemeLimitDefaults(md.IsDefined)
	idx := indexLines(string(data))
	probs := append(unknownKeys(name, data, md), keyProblems(name, data, md)...)
	for _, pr := range p.validate(md.IsDefined) {
		pr.File, pr.Line = name, idx.line(pr.Key)
		probs = append(probs, pr)
	}
	return probs
}

// boundProblem refuses text the TOML decoder must not see: longer than MaxPolicyBytes, or nested
// past tomlbound.MaxDepth (the decoder takes memory quadratic in the depth).
func boundProblem(name string, data []byte) (Problem, bool) {
	if mutated("policy-toml-bounds") {
		return Problem{}, false
	}
	if len(data) > MaxPolicyBytes {
		return Problem{File: name, Line: 1, Msg: fmt.Sprintf("the policy is larger than %d bytes (the most a policy may be)", MaxPolicyBytes),
			Fix: "check that it is a policy file; shorten it"}, true
	}
	var de *tomlbound.DepthError
	if errors.As(tomlbound.CheckDepth(data, tomlbound.MaxDepth), &de) {
		return Problem{File: name, Line: de.Line, Msg: fmt.Sprintf("inline tables and arrays nest more than %d deep (the most a policy may)", de.Max),
			Fix: "write fewer levels: no policy key takes more than a few"}, true
	}
	return Problem{}, false
}

// unknownKeys reports each key the policy does not know once, at its own line: what lies under
// an unknown table is not reported again (a misspelled [[allowlist.comands]] is one problem,
// not one per key in it), and a table written several times names every line it is on.
func unknownKeys(name string, data []byte, md toml.MetaData) []Problem {
	idx := indexLines(string(data))
	var probs []Problem
	seen := map[string]bool{}
	for _, k := range md.Undecoded() {
		key := k.String()
		if seen[key] {
			continue
		}
		seen[key] = true
		under := false
		for i := 1; i < len(k); i++ {
			if seen[toml.Key(k[:i]).String()] {
				under = true
				break
			}
		}
		if under {
			continue
		}
		fix := "remove it or check its spelling against README.md's policy reference (\"Policy file (version 1)\")"
		if s := suggestKey(key); s != "" {
			fix = "did you mean " + s + "? (or remove it)"
		}
		pr := Problem{File: name, Line: idx.line(key), Key: key, Msg: "unknown key", Fix: fix}
		if lines := headerLines(data, key); len(lines) > 0 {
			pr.Line, pr.Msg = lines[0], "unknown key (a whole table, with everything in it)"
			if len(lines) > 1 {
				pr.Msg = fmt.Sprintf("unknown key (a table written %d times, at lines %s, with everything in them)", len(lines), joinInts(lines))
			}
		}
		probs = append(probs, pr)
	}
	return probs
}

// headerLines are the lines holding the table header [key] or [[key]].
func headerLines(data []byte, key string) []int {
	var out []int
	for i, ln := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(ln)
		if c := strings.IndexByte(t, '#'); c >= 0 {
			t = strings.TrimSpace(t[:c])
		}
		t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(t, "]"), "]"))
		t = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(t, "["), "["))
		if strings.HasPrefix(strings.TrimSpace(ln), "[") && cleanKey(t) == key {
			out = append(out, i+1)
		}
	}
	return out
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// Validate checks an in-memory policy (e.g. one built by the wizard) with the same rules as Parse.
func (p *Policy) Validate() error {
	probs := p.validate(func(...string) bool { return true })
	if len(probs) > 0 {
		return &Error{probs}
	}
	return nil
}

// decodeProblems reports every value of the wrong type, not just the first the decoder stops at:
// while the text is valid TOML, the line of each bad value is blanked and the text decoded again
// (a bounded number of times). A syntax error is reported alone: what follows it cannot be trusted.
//
// When every wrongly typed value is blanked and the text decodes, it is returned too (ok), for
// the rest of the file to be checked.
func decodeProblems(name string, data []byte, err error) (probs []Problem, rest []byte, ok bool) {
	probs = []Problem{decodeProblem(name, data, err)}
	text := strings.Split(string(data), "\n")
	for range 50 {
		cur := []byte(strings.Join(text, "\n"))
		var syntaxOnly map[string]any
		if _, serr := toml.Decode(string(cur), &syntaxOnly); serr != nil {
			break // a syntax error (first time) or an artefact of a blanked multi-line value
		}
		last := probs[len(probs)-1]
		if last.Line < 1 || last.Line > len(text) || text[last.Line-1] == "" {
			break
		}
		// blank the value's line, and the lines of a multi-line array or inline table it opens
		depth := bracketDepth(text[last.Line-1])
		text[last.Line-1] = ""
		for j := last.Line; depth > 0 && j < len(text); j++ {
			depth += bracketDepth(text[j])
			text[j] = ""
		}
		retry := []byte(strings.Join(text, "\n"))
		_, err := Default("").decodeTOML(string(retry))
		if err == nil {
			// every wrongly typed value is blanked: what else the file gets wrong is said too
			return probs, retry, true
		}
		probs = append(probs, decodeProblem(name, retry, err))
	}
	return probs, nil, false
}

// bareValueRe matches the parser's message for a bare word where a value goes.
var bareValueRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^expected value but found "([A-Za-z_][A-Za-z0-9_./:-]*)" instead$`)
})

func decodeProblem(name string, data []byte, err error) Problem {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if msg == "" {
			msg = pe.Error()
		}
		// The parser's line is where it stopped, which for "got '\n'" is the next line; the
		// byte offset names the line that holds the mistake.
		line := pe.Position.Line
		if st := pe.Position.Start; st > 0 && st <= len(data) {
			line = 1 + bytes.Count(data[:st], []byte("\n"))
		}
		fix := "correct the TOML syntax or the value's type at that line"
		if m := bareValueRe().FindStringSubmatch(msg); m != nil {
			// scheme = allowlist: a word where a value goes is text left unquoted (trial25)
			key := cmp.Or(pe.LastKey[strings.LastIndex(pe.LastKey, ".")+1:], "key")
			fix = fmt.Sprintf("a text value is quoted: %s = %q", key, m[1])
		}
		switch {
		case msg == "strings cannot contain newlines":
			// the parser's words for a string whose closing quote is missing (trial34)
			msg, fix = "a string is not closed on its line", `close it with the quote it opened with ("…" or '…'); a text over several lines is written """…"""`
		case strings.HasPrefix(msg, "Key '") && strings.HasSuffix(msg, "' has already been defined."):
			key := strings.TrimSuffix(strings.TrimPrefix(msg, "Key '"), "' has already been defined.")
			msg = fmt.Sprintf("%s is written twice (a table or key may appear once)", key)
			fix = fmt.Sprintf("keep one [%s] (or one %s = …) and put its keys together there", key, key)
		}
		if m, f, ok := strings.Cut(msg, ": for "); ok && strings.Contains(f, " write \"") && !mutated("policy-fix-generic") {
			// timeout = 30: the message's own "for 30 seconds write "30s"" is the fix; the
			// generic one after it was noise (trial36 F9)
			msg, fix = m, f[strings.Index(f, "write \""):]
		}
		if m, f, ok := strings.Cut(msg, ": write it like "); ok {
			// a duration's or a size's own message ends in how to write one: that is the fix,
			// and the generic one beside it was noise (trial25 #5)
			msg, fix = m, "write it like "+f
		}
		return Problem{File: name, Line: line, Key: pe.LastKey, Msg: msg, Fix: fix}
	}
	// Type mismatches come back as plain errors: "toml: line N (last key "k"): msg".
	if m := typeErrRe().FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		// "type mismatch for section.Wrap: ..." names a Go type, which says nothing to the reader
		msg, fix, key := m[3], "write a value of the type the key takes (see README.md)", m[2]
		if rest, ok := strings.CutPrefix(msg, "type mismatch for "); ok {
			if _, after, ok := strings.Cut(rest, ": "); ok {
				msg = "type mismatch: " + after
				// commands = ["wc"] where [[allowlist.commands]] tables go: say how to write them
				if after == "expected table but found string" && !mutated("policy-table-list-hint") {
					msg = "the value is a list of strings; this key takes a list of tables"
					fix = fmt.Sprintf("write one [[%s]] section per item, each with its keys (see README.md)", m[2])
					if m[2] == "allowlist.commands" {
						fix = `write one [[allowlist.commands]] section per command, with name, path and sha256; ` +
							"`mcpsandbox init --scheme allowlist --allow wc,sort` writes them pinned"
					}
				}
			}
		}
		// "incompatible types: TOML value has type int64; destination has type string" names Go's
		// types: said in the file's words
		if t := incompatibleRe().FindStringSubmatch(msg); t != nil {
			if want, ok := destKinds[t[2]]; ok {
				msg = fmt.Sprintf("the value is %s; this key takes %s", goKinds(t[1]), want[0])
				fix = fmt.Sprintf("write %s %s", want[0], want[1])
			}
			// under an array of tables the decoder names the line where the key was written
			// last, another table's: the value of the wrong type is looked for instead
			if l, k, ok := elementLine(data, m[2], t[1]); ok && !mutated("policy-type-line-element") {
				line = l
				if !mutated("policy-fix-generic") {
					key = k // with the element's index, as every other problem names it (trial36 F9)
				}
			}
		}
		return Problem{File: name, Line: line, Key: key, Msg: msg, Fix: fix}
	}
	return Problem{File: name, Msg: err.Error(), Fix: "correct the value's type"}
}

// elementLine locates a wrongly typed value under an array of tables (allowlist.commands.deny_args
// = "x" in the third command): the first element whose value at key has the Go type goType, at
// that element's line. false when key crosses no array of tables (the decoder's line is right).
func elementLine(data []byte, key, goType string) (int, string, bool) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return 0, "", false
	}
	path, ok := typedPath(doc, strings.Split(key, "."), "", goType, false)
	if !ok {
		return 0, "", false
	}
	n := indexLines(string(data)).line(path)
	return n, path, n > 0
}

// typedPath walks v along segs, into every element of an array of tables, to the first value of
// Go type goType; its key with the elements' indexes (allowlist.commands[2].deny_args).
func typedPath(v any, segs []string, prefix, goType string, inArray bool) (string, bool) {
	if len(segs) == 0 {
		return prefix, inArray && fmt.Sprintf("%T", v) == goType
	}
	switch x := v.(type) {
	case map[string]any:
		child, ok := x[segs[0]]
		if !ok {
			return "", false
		}
		p := segs[0]
		if prefix != "" {
			p = prefix + "." + segs[0]
		}
		return typedPath(child, segs[1:], p, goType, inArray)
	case []map[string]any:
		for i, el := range x {
			if p, ok := typedPath(el, segs, fmt.Sprintf("%s[%d]", prefix, i), goType, true); ok {
				return p, true
			}
		}
	}
	return "", false
}

// incompatibleRe matches the TOML decoder's type mismatch: the value's Go type, the key's kind.
var incompatibleRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^incompatible types: TOML value has type (.+); destination has type (.+)$`)
})

// destKinds says the decoder's kinds of key in the file's words, and how to write one.
var destKinds = map[string][2]string{
	"string": {"a string", `in quotes, e.g. "value"`}, "primitive (string-like)": {"a string", `in quotes, e.g. "value"`},
	"integer": {"a whole number", "without quotes, e.g. 64"}, "float": {"a number", "without quotes, e.g. 0.5"},
	"boolean": {"true or false", "without quotes"}, "slice": {"a list", `in brackets, e.g. ["a", "b"]`},
	"map": {"a table", "as [table] or { key = value }"},
}

// goKinds says a decoded value's Go type, as the decoder prints it, in the file's words.
func goKinds(goType string) string {
	switch {
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a decimal number"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "a table"
	case strings.Contains(goType, "Date") || strings.Contains(goType, "Time"):
		return "a date or time"
	}
	return "another kind of value"
}

// tomlKind says a decoded TOML value's kind in the file's words (%T would name Go's types).
func tomlKind(v any) string {
	return goKinds(strings.ReplaceAll(fmt.Sprintf("%T", v), "interface {}", "any"))
}

// typeErrRe is compiled when a file has a type error, not at every start.
var typeErrRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "([^"]*)"\): (.*)$`)
})

// lineIndex maps dotted keys to the line they are written on. BurntSushi/toml exposes no key
// positions, so this reads table headers and `key =` lines itself; best effort, 0 when unknown.
type lineIndex map[string]int

func indexLines(src string) lineIndex {
	idx := lineIndex{}
	table := ""
	arrayCount := map[string]int{}
	arrKey, arrN := "", 0 // an array of strings still open: its key, its next element index
	for i, raw := range strings.Split(src, "\n") {
		ln := strings.TrimSpace(raw)
		n := i + 1
		if arrKey != "" {
			arrN = idx.elements(arrKey, arrN, ln, n)
			if strings.Contains(stripStrings(ln), "]") {
				arrKey = ""
			}
			continue
		}
		switch {
		case ln == "" || ln[0] == '#':
			continue
		case strings.HasPrefix(ln, "[["):
			name := cleanKey(strings.TrimSuffix(strings.SplitN(ln[2:], "]]", 2)[0], "]]"))
			table = name + "[" + strconv.Itoa(arrayCount[name]) + "]"
			arrayCount[name]++
			idx.set(table, n)
			idx.set(name, n)
		case ln[0] == '[':
			table = cleanKey(strings.SplitN(ln[1:], "]", 2)[0])
			idx.set(table, n)
		default:
			eq := strings.Index(ln, "=")
			if eq <= 0 {
				continue
			}
			key := cleanKey(ln[:eq])
			full := key
			if table != "" {
				full = table + "." + key
			}
			idx.set(full, n)
			// the same key without array indexes, for md.Undecoded() keys
			idx.set(stripIndexes(full), n)
			// arrays of strings: each element's own line, network = [\n "a",\n "b" ] -> key[1]
			if rest := strings.TrimSpace(ln[eq+1:]); strings.HasPrefix(rest, "[") {
				k := full // in an array of tables: commands[3].deny_args[1], its own element's line
				next := idx.elements(k, 0, rest[1:], n)
				if !strings.Contains(stripStrings(rest[1:]), "]") {
					arrKey, arrN = k, next
				}
			}
			// inline tables: env = { LANG = "C" } -> allowlist.env.LANG
			if rest := strings.TrimSpace(ln[eq+1:]); strings.HasPrefix(rest, "{") {
				for _, part := range strings.Split(strings.Trim(rest, "{} "), ",") {
					if e := strings.Index(part, "="); e > 0 {
						idx.set(full+"."+cleanKey(part[:e]), n)
						idx.set(stripIndexes(full)+"."+cleanKey(part[:e]), n)
					}
				}
			}
		}
	}
	return idx
}

// elements indexes the string elements that start on one line of an array (key[i] -> line n)
// and returns the next element's index.
func (idx lineIndex) elements(key string, next int, ln string, n int) int {
	_, strs := scanStrings(ln)
	for ; strs > 0; strs-- {
		idx.set(key+"["+strconv.Itoa(next)+"]", n)
		idx.set(stripIndexes(key)+"["+strconv.Itoa(next)+"]", n)
		next++
	}
	return next
}

// stripStrings blanks quoted strings and comments out of a line, so brackets inside them do
// not count.
func stripStrings(ln string) string {
	bare, _ := scanStrings(ln)
	return bare
}

// scanStrings returns a line without its quoted strings and comment, and how many strings
// start on it.
func scanStrings(ln string) (string, int) {
	var b strings.Builder
	strs := 0
	inStr, quote := false, byte(0)
	for i := 0; i < len(ln); i++ {
		c := ln[i]
		switch {
		case inStr && c == '\\' && quote == '"':
			i++
		case inStr && c == quote:
			inStr = false
		case inStr:
		case c == '"' || c == '\'':
			inStr, quote = true, c
			strs++
		case c == '#':
			return b.String(), strs
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), strs
}

func (idx lineIndex) set(k string, n int) {
	if _, ok := idx[k]; !ok {
		idx[k] = n
	}
}

// line finds the key, else its nearest ancestor. A key naming an element of an array of tables
// (allowlist.commands[11].sha256) is looked up by its indexes first, up to the element itself
// (the key missing there is reported at its table's header): the same key without indexes is the
// first table's line, another element's.
func (idx lineIndex) line(key string) int {
	if !mutated("policy-line-indexed") {
		for k := key; strings.Contains(k, "["); {
			if n, ok := idx[k]; ok {
				return n
			}
			cut := strings.LastIndexAny(k, ".[")
			if cut < 0 {
				break
			}
			k = k[:cut]
		}
	}
	for k := key; k != ""; {
		if n, ok := idx[k]; ok {
			return n
		}
		if n, ok := idx[stripIndexes(k)]; ok {
			return n
		}
		cut := strings.LastIndexAny(k, ".[")
		if cut < 0 {
			break
		}
		k = k[:cut]
	}
	return 0
}

func cleanKey(s string) string {
	parts := strings.Split(strings.TrimSpace(s), ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}

func stripIndexes(k string) string {
	var b strings.Builder
	depth := 0
	for _, r := range k {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// bracketDepth is how many arrays or inline tables a line of TOML opens and leaves open (negative
// when it closes more), outside strings and comments.
func bracketDepth(line string) int {
	depth := 0
	var quote rune
	escaped := false
	for _, r := range line {
		switch {
		case quote != 0:
			if escaped {
				escaped = false
			} else if r == '\\' && quote == '"' {
				escaped = true
			} else if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '#':
			return depth
		case r == '[' || r == '{':
			depth++
		case r == ']' || r == '}':
			depth--
		}
	}
	return depth
}
