package audit

import (
	"errors"
	"strings"
	"testing"
)

// Keys equal under case folding (after escapes are decoded), exact duplicates and keys that are
// not valid Unicode are found in any object at any depth; equal keys of different objects,
// keys spelled like values and strings inside strings are not.
func TestCheckKeys(t *testing.T) {
	bad := map[string]string{
		`{"command":"wc","COMMAND":"python3"}`:           `"command" and "COMMAND"`,
		`{"a":1,"a":2}`:                                  `"a" twice`,
		`{"na\u006de":1,"name":2}`:                       `"name" twice`,
		`{"x":[{"k":1}],"y":{"z":{"\u212a":1,"K":2}}}`:   "\"\u212a\" and \"K\"", // Kelvin sign
		`{"b":1,"a":2,"A":3,"B":4}`:                      `"a" and "A"`,          // the first collision a reader meets
		`{"ſ":1,"S":2}`:                                  `"ſ" and "S"`,
		`[1,{"p":{"Name":1,"nAME":2}}]`:                  `depth 3`,
		`{"jsonrpc":"2.0","method":"a","Method":"b"}`:    `"method" and "Method"`,
		`{"\ud800x":1}`:                                  `not valid Unicode`,
		"{\"a\xffb\":1}":                                 `not valid Unicode`,
		`{"a":{"b":1},"c":[{"d":1,"e":{"f":1,"F":{}}}]}`: `"f" and "F"`,
		`{"` + strings.Repeat("k", 200) + `":1,"` + strings.Repeat("K", 200) + `":2}`: `…`,
	}
	for in, want := range bad {
		err := CheckKeys([]byte(in))
		var ke *KeyError
		if !errors.As(err, &ke) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckKeys(%.60s) = %v, want a KeyError saying %s", in, err, want)
		}
	}
	good := []string{
		`{"a":{"a":1},"b":[{"a":1},{"a":2}]}`,
		`{"a":"A","b":"a","A\u0062":"\"A\":1,\"a\":2"}`,
		`{"k":1,"\u212ax":1,"é":1,"É1":1}`,
		`["a","a",{"a":"a"}]`,
		`{"\ud83d\ude00":1,"\ud83d\ude01":2}`,
		``, `"a"`, `{`, `{"a":1,`,
	}
	for _, in := range good {
		if err := CheckKeys([]byte(in)); err != nil {
			t.Errorf("CheckKeys(%.60s) = %v, want nil", in, err)
		}
	}
	var many strings.Builder
	many.WriteString("{")
	for i := range 30000 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`"k` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i) + `":1`)
	}
	many.WriteString("}")
	var c KeyChecker
	raw := []byte(many.String())
	if err := c.Check(raw); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(3, func() { _ = c.Check(raw) }); n > 0 {
		t.Errorf("a reused KeyChecker allocates %v times a check", n)
	}
}

func itoa(i int) string {
	b := []byte{}
	for ; i > 0 || len(b) == 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// BenchmarkCheckKeys: a 4 MiB message of small keys (wrap's MaxFrame), and keys of runes with
// long folding orbits.
func BenchmarkCheckKeys(b *testing.B) {
	object := func(key func(i int) string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := 0; b.Len() < 4<<20; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"` + key(i) + `":1`)
		}
		return b.String() + "}"
	}
	small := object(func(i int) string { return "k" + itoa(i) })
	folded := object(func(i int) string { return strings.Repeat("ſKΩ", 8) + itoa(i) })
	for _, c := range []struct{ name, raw string }{{"small-keys-4MiB", small}, {"folded-keys-4MiB", folded}} {
		b.Run(c.name, func(b *testing.B) {
			raw := []byte(c.raw)
			b.SetBytes(int64(len(raw)))
			var k KeyChecker
			for b.Loop() {
				if err := k.Check(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
