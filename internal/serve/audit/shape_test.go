package audit

import (
	"strings"
	"testing"
)

func TestCheckShape(t *testing.T) {
	cases := []struct {
		json          string
		values, depth int
		ok            bool
	}{
		{`{"a":[1,2,"x"],"b":{"c":null}}`, 10, 2, true}, // keys count as values
		{`{"a":[1,2,"x"],"b":{"c":null}}`, 9, 2, false},
		{`{"a":[1,2,"x"],"b":{"c":null}}`, 10, 1, false},
		{`{"a":"\"[[[[{{{"}`, 3, 1, true}, // brackets inside a string do not count
		{`[-1.5e3, true,false ,null]`, 5, 1, true},
		{`[-1.5e3, true,false ,null]`, 4, 1, false},
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), 100, 64, false},
		{strings.Repeat("[", 64) + strings.Repeat("]", 64), 100, 64, true},
	}
	for _, c := range cases {
		if err := CheckShape([]byte(c.json), c.values, c.depth); (err == nil) != c.ok {
			t.Errorf("CheckShape(%.40s, %d, %d) = %v, want ok=%v", c.json, c.values, c.depth, err, c.ok)
		}
	}
	many := "[" + strings.Repeat(`"",`, 4<<20) + `""]`
	if n := testing.AllocsPerRun(3, func() { _ = CheckShape([]byte(many), MaxJSONValues, MaxJSONDepth) }); n > 2 {
		t.Errorf("CheckShape allocates %v times", n)
	}
}
