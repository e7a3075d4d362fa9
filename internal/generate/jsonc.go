package generate

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A small JSON parser that also takes what editors' config files hold (JSONC: // and /* */
// comments, trailing commas) and records where every value sits, so init can splice one entry
// into a file and leave every other byte, comment and indent as the user wrote it.

type jnode struct {
	kind       byte // '{', '[', '"', '0' (number), 'l' (literal)
	start, end int  // [start, end) in the source
	members    []jmember
}

type jmember struct {
	key      string
	keyStart int
	val      *jnode
}

type jparser struct {
	src   []byte
	pos   int
	depth int // objects and arrays open around pos
}

// maxJSONDepth bounds how deeply a JSON config's objects and arrays may nest: the parser
// recurses once a level, and 5 million nested [ (10 MB) overflowed its stack (a fatal error, not
// an error init could report). No client config nests more than a dozen.
const maxJSONDepth = 512

// enter counts one more level open, refusing one past maxJSONDepth; leave closes it.
func (p *jparser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth && !mutated("init-json-depth") {
		return p.fail("objects and arrays nest more than %d deep (the most init reads): write fewer levels", maxJSONDepth)
	}
	return nil
}

func (p *jparser) leave() { p.depth-- }

// SyntaxError locates a problem in a config file.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

func (p *jparser) fail(format string, a ...any) error {
	line, col := 1, 1
	for _, c := range p.src[:min(p.pos, len(p.src))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf(format, a...)}
}

func parseJSONC(src []byte) (*jnode, error) {
	p := &jparser{src: src}
	if err := p.ws(); err != nil {
		return nil, err
	}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.ws(); err != nil {
		return nil, err
	}
	if p.pos != len(src) {
		return nil, p.fail("unexpected %q after the top-level value", src[p.pos])
	}
	return n, nil
}

// ws skips whitespace and comments.
func (p *jparser) ws() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			end := strings.Index(string(p.src[p.pos+2:]), "*/")
			if end < 0 {
				return p.fail("unterminated /* comment")
			}
			p.pos += end + 4
		default:
			return nil
		}
	}
	return nil
}

func (p *jparser) value() (*jnode, error) {
	if p.pos >= len(p.src) {
		return nil, p.fail("unexpected end of file")
	}
	switch c := p.src[p.pos]; {
	case c == '{' || c == '[':
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		if c == '{' {
			return p.object()
		}
		return p.array()
	case c == '"':
		start := p.pos
		if _, err := p.str(); err != nil {
			return nil, err
		}
		return &jnode{kind: '"', start: start, end: p.pos}, nil
	case c == '-' || c >= '0' && c <= '9':
		start := p.pos
		for p.pos < len(p.src) && strings.IndexByte("+-0123456789.eE", p.src[p.pos]) >= 0 {
			p.pos++
		}
		var f float64
		if json.Unmarshal(p.src[start:p.pos], &f) != nil {
			p.pos = start
			return nil, p.fail("bad number")
		}
		return &jnode{kind: '0', start: start, end: p.pos}, nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(string(p.src[p.pos:]), lit) {
				p.pos += len(lit)
				return &jnode{kind: 'l', start: p.pos - len(lit), end: p.pos}, nil
			}
		}
		return nil, p.fail("unexpected %q", c)
	}
}

func (p *jparser) str() (string, error) {
	start := p.pos
	p.pos++
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '\\':
			p.pos += 2
		case '"':
			p.pos++
			var s string
			if err := json.Unmarshal(p.src[start:p.pos], &s); err != nil {
				p.pos = start
				return "", p.fail("bad string: %v", err)
			}
			return s, nil
		case '\n':
			return "", p.fail("newline inside a string")
		default:
			p.pos++
		}
	}
	p.pos = start
	return "", p.fail("unterminated string")
}

func (p *jparser) object() (*jnode, error) {
	n := &jnode{kind: '{', start: p.pos}
	p.pos++
	for {
		if err := p.ws(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return nil, p.fail("expected a \"key\" or }")
		}
		m := jmember{keyStart: p.pos}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		m.key = k
		if err := p.ws(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.fail("expected : after key %q", k)
		}
		p.pos++
		if err := p.ws(); err != nil {
			return nil, err
		}
		if m.val, err = p.value(); err != nil {
			return nil, err
		}
		n.members = append(n.members, m)
		if err := p.ws(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			continue
		}
		return nil, p.fail("expected , or } after the value of %q", k)
	}
}

func (p *jparser) array() (*jnode, error) {
	n := &jnode{kind: '[', start: p.pos}
	p.pos++
	for {
		if err := p.ws(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		if _, err := p.value(); err != nil {
			return nil, err
		}
		if err := p.ws(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			continue
		}
		return nil, p.fail("expected , or ]")
	}
}

func (n *jnode) member(key string) *jmember {
	for i := range n.members {
		if n.members[i].key == key {
			return &n.members[i]
		}
	}
	return nil
}

// uniqueMember refuses an object that holds key twice: init would write into the first, and
// clients read the last (JSON.parse, Go's encoding/json), so the entry init proves would not be
// the one a client starts.
func (n *jnode) uniqueMember(src []byte, key string) error {
	first := -1
	for i := range n.members {
		if n.members[i].key != key {
			continue
		}
		if first >= 0 && !mutated("init-duplicate-keys") {
			return &SyntaxError{Line: lineOf(src, n.members[i].keyStart), Col: 1,
				Msg: fmt.Sprintf("%q appears twice in one object (also on line %d): clients read the last, so init will not guess; remove one", key, lineOf(src, n.members[first].keyStart))}
		}
		first = i
	}
	return nil
}

// jsonUnmarshalStrict decodes one JSON value (no comments) for tests and checks.
func jsonUnmarshalStrict(b []byte, v any) error { return json.Unmarshal(b, v) }
