package audit

import (
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpsandbox/mcpsandbox/internal/casefold"
)

// RuleAmbiguousKeys names the refusal of JSON whose objects hold two keys equal under Unicode
// case folding (exact duplicates included), or a key that is not valid Unicode.
const RuleAmbiguousKeys = "json.ambiguous_keys"

// KeyError is JSON whose meaning depends on the parser: Go's encoding/json matches object keys
// case-insensitively and keeps the last duplicate, other parsers keep the first, or the last
// exact match, so what one program judges is not what the next one runs.
type KeyError struct {
	Key, Other string // the colliding keys as decoded (clipped); Other is "" for invalid Unicode
	Depth      int    // nesting of the object holding them (1: the top level)
	Invalid    bool   // Key is not valid Unicode (invalid UTF-8 or an unpaired surrogate escape)
}

func (e *KeyError) Error() string {
	switch {
	case e.Invalid:
		return fmt.Sprintf("an object at depth %d holds the key %s, which is not valid Unicode (parsers decode it differently); send keys as valid UTF-8", e.Depth, strconv.Quote(e.Key))
	case e.Key == e.Other:
		return fmt.Sprintf("an object at depth %d holds the key %s twice (parsers disagree on which one counts); send each key once", e.Depth, strconv.Quote(e.Key))
	}
	return fmt.Sprintf("an object at depth %d holds the keys %s and %s, equal under Unicode case folding (Go's encoding/json reads them as one key, other parsers as two); send each key once, in one spelling",
		e.Depth, strconv.Quote(e.Key), strconv.Quote(e.Other))
}

// maxQuotedKey is how much of a colliding key a KeyError quotes.
const maxQuotedKey = 64

// keySeed seeds the key hashes (random per process: colliding hashes cannot be crafted).
var keySeed = maphash.MakeSeed()

// keyEntry is one object key met by a KeyChecker.
type keyEntry struct {
	hash  uint64 // of the object's number and the key's case-folded runes
	obj   uint32 // which object (numbered in the order they open)
	start uint32 // offset of the key's opening quote
}

// KeyChecker finds ambiguous object keys in raw JSON without decoding it. Its buffers are
// reused from one Check to the next; it is not safe for concurrent use.
type KeyChecker struct {
	keys  []keyEntry
	table []uint32 // open addressing: 1 + an index into keys, 0 for an empty slot
	stack []uint32 // per open container: its object number, or 0 for an array
}

// CheckKeys reports, as a *KeyError, the first JSON object of raw holding two keys equal under
// Unicode case folding (strings.EqualFold, after decoding escapes; exact duplicates included)
// or a key that is not valid Unicode. It allocates only its key list (one entry a key).
func CheckKeys(raw []byte) error {
	var c KeyChecker
	return c.Check(raw)
}

// Check is CheckKeys with c's buffers. It does not check raw is valid JSON: it reads what it
// can as JSON, and keys it cannot tell apart from values are compared as keys.
func (c *KeyChecker) Check(raw []byte) error {
	if uint64(len(raw)) > math.MaxUint32 {
		return fmt.Errorf("the JSON is over %d bytes: its keys cannot be checked", uint32(math.MaxUint32))
	}
	err := c.scan(raw)
	if cap(c.keys) > 1<<16 || cap(c.stack) > 1<<16 { // a huge message's lists are not kept for the next one
		c.keys, c.table, c.stack = nil, nil, nil
	}
	return err
}

// scan lists raw's object keys (an invalid one is an error at once), then looks for collisions.
func (c *KeyChecker) scan(raw []byte) error {
	c.keys, c.stack = c.keys[:0], c.stack[:0]
	objects := uint32(0)
	expectKey := false
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			end := stringEnd(raw, i)
			if expectKey && len(c.stack) > 0 {
				obj := c.stack[len(c.stack)-1]
				h, ok := foldHash(obj, raw[i+1:end])
				if !ok {
					return &KeyError{Key: clipKey(raw[i+1 : end]), Depth: len(c.stack), Invalid: true}
				}
				c.keys = append(c.keys, keyEntry{hash: h, obj: obj, start: uint32(i)})
			}
			expectKey = false
			i = end
		case '{':
			objects++
			c.stack = append(c.stack, objects)
			expectKey = true
		case '[':
			c.stack = append(c.stack, 0)
			expectKey = false
		case '}', ']':
			if len(c.stack) > 0 {
				c.stack = c.stack[:len(c.stack)-1]
			}
			expectKey = false
		case ',':
			expectKey = len(c.stack) > 0 && c.stack[len(c.stack)-1] != 0
		case ':':
			expectKey = false
		}
	}
	return c.collisions(raw)
}

// collisions finds the first key (in raw's order) that folds equal to an earlier key of its
// object: the first collision a reader meets. The keys go into an open-addressing table by hash.
func (c *KeyChecker) collisions(raw []byte) error {
	size := 1
	for size < 2*len(c.keys) {
		size <<= 1
	}
	c.table = slices.Grow(c.table[:0], size)[:size]
	clear(c.table)
	mask := uint64(size - 1)
	for j := range c.keys {
		k := &c.keys[j]
		for slot := k.hash & mask; ; slot = (slot + 1) & mask {
			i := c.table[slot]
			if i == 0 {
				c.table[slot] = uint32(j + 1)
				break
			}
			if e := &c.keys[i-1]; e.hash == k.hash && e.obj == k.obj && foldEqual(keyText(raw, e.start), keyText(raw, k.start)) {
				return &KeyError{Key: clipKey(keyText(raw, e.start)), Other: clipKey(keyText(raw, k.start)), Depth: depthAt(raw, int(e.start))}
			}
		}
	}
	return nil
}

// depthAt is the nesting of raw[at] (outside strings).
func depthAt(raw []byte, at int) int {
	depth := 0
	for i := 0; i < at; i++ {
		switch raw[i] {
		case '"':
			i = stringEnd(raw, i)
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
	}
	return depth
}

// stringEnd is the offset of the quote closing the string opened at raw[open] (len(raw) when
// it is not closed).
func stringEnd(raw []byte, open int) int {
	for i := open + 1; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(raw)
}

// keyText is the escaped text of the key whose opening quote is at raw[start].
func keyText(raw []byte, start uint32) []byte {
	return raw[start+1 : stringEnd(raw, int(start))]
}

// nextRune decodes the first rune of s, escaped JSON string text: the rune, its length in s,
// and whether it is valid Unicode (invalid UTF-8 and unpaired surrogate escapes are not).
func nextRune(s []byte) (r rune, n int, ok bool) {
	if s[0] != '\\' {
		if s[0] < utf8.RuneSelf {
			return rune(s[0]), 1, true
		}
		r, n = utf8.DecodeRune(s)
		return r, n, r != utf8.RuneError || n == 3
	}
	if len(s) < 2 {
		return utf8.RuneError, len(s), false
	}
	switch s[1] {
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'u':
		r1, ok := hex4(s[2:])
		if !ok {
			return utf8.RuneError, min(len(s), 2), false
		}
		if !utf16.IsSurrogate(r1) {
			return r1, 6, true
		}
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if r2, ok := hex4(s[8:]); ok {
				if r := utf16.DecodeRune(r1, r2); r != unicode.ReplacementChar {
					return r, 12, true
				}
			}
		}
		return utf8.RuneError, 6, false
	}
	return rune(s[1]), 2, true // \" \\ \/ (and what is not JSON: read as the character)
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var v rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// foldHash hashes the object's number and the folding classes of escaped key text's runes; false when it is not valid
// Unicode.
func foldHash(obj uint32, s []byte) (uint64, bool) {
	var h maphash.Hash
	h.SetSeed(keySeed)
	var buf [64]byte
	buf[0], buf[1], buf[2], buf[3] = byte(obj), byte(obj>>8), byte(obj>>16), byte(obj>>24)
	n := 4
	for len(s) > 0 {
		r, size, ok := nextRune(s)
		if !ok {
			return 0, false
		}
		s = s[size:]
		f := casefold.Rune(r)
		buf[n], buf[n+1], buf[n+2] = byte(f), byte(f>>8), byte(f>>16)
		if n += 3; n > len(buf)-3 {
			h.Write(buf[:n])
			n = 0
		}
	}
	h.Write(buf[:n])
	return h.Sum64(), true
}

// foldEqual reports whether two escaped key texts decode to strings equal under case folding.
func foldEqual(a, b []byte) bool {
	for len(a) > 0 && len(b) > 0 {
		ra, na, _ := nextRune(a)
		rb, nb, _ := nextRune(b)
		if ra != rb && casefold.Rune(ra) != casefold.Rune(rb) {
			return false
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) == 0 && len(b) == 0
}

// clipKey is escaped key text decoded for a message, at most maxQuotedKey bytes of it.
func clipKey(s []byte) string {
	out := make([]rune, 0, 16)
	for n := 0; len(s) > 0 && n < maxQuotedKey; {
		r, size, _ := nextRune(s)
		out = append(out, r)
		s, n = s[size:], n+utf8.RuneLen(r)
	}
	if len(s) > 0 {
		return string(out) + "…"
	}
	return string(out)
}
