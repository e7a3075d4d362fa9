package audit

import "fmt"

// Bounds on the shape of a call's JSON arguments (serve refuses calls past them with rule
// tool.arguments before anything decodes the arguments; the log redacts decoded arguments only
// within them).
const (
	MaxJSONValues = 65_536 // JSON values: every string (object keys included), number, literal, array and object
	MaxJSONDepth  = 64     // nesting of arrays and objects
)

// ShapeError is JSON over a shape bound.
type ShapeError struct {
	Values, Depth int // the first bound crossed: Values > max, or Depth > max (the other is 0)
	MaxValues     int
	MaxDepth      int
}

func (e *ShapeError) Error() string {
	if e.Depth > 0 {
		return fmt.Sprintf("the JSON nests deeper than %d levels", e.MaxDepth)
	}
	return fmt.Sprintf("the JSON holds more than %d values", e.MaxValues)
}

// CheckShape scans raw JSON without decoding it (no allocation) and fails, as soon as it is
// crossed, when it holds more than maxValues values or nests deeper than maxDepth. It does not
// check the JSON is valid: what it cannot read as JSON it counts as best it can.
func CheckShape(raw []byte, maxValues, maxDepth int) error {
	values, depth := 0, 0
	inString, escaped, inScalar := false, false, false
	for _, c := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r', ',', ':':
			inScalar = false
			continue
		case '"':
			inString, inScalar = true, false
			values++
		case '{', '[':
			inScalar = false
			values++
			if depth++; depth > maxDepth {
				return &ShapeError{Depth: depth, MaxValues: maxValues, MaxDepth: maxDepth}
			}
		case '}', ']':
			inScalar = false
			depth--
			continue
		default: // a number or a literal: counted at its first byte
			if inScalar {
				continue
			}
			inScalar = true
			values++
		}
		if values > maxValues {
			return &ShapeError{Values: values, MaxValues: maxValues, MaxDepth: maxDepth}
		}
	}
	return nil
}
