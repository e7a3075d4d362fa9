package audit

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// strs collects every string (keys included) and number text in a decoded JSON value; a string
// that is itself JSON is decoded too (the arguments of a clipped entry are a string of JSON text).
func strs(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
		var inner any
		if json.Unmarshal([]byte(x), &inner) == nil {
			if _, isString := inner.(string); !isString {
				strs(inner, out)
			}
		}
	case json.Number:
		*out = append(*out, string(x))
	case []any:
		for _, e := range x {
			strs(e, out)
		}
	case map[string]any:
		for k, e := range x {
			*out = append(*out, k)
			strs(e, out)
		}
	}
}

// A secret from the environment sent in escaped form (\u0061, \/, an escaped or raw U+2028),
// as a key or as a number, is redacted: no decoded field of the line holds it, also when the
// arguments are too long for the line and only their start is kept.
func TestRedactionSeesThroughJSONEscapes(t *testing.T) {
	const (
		plain   = "abcdef-0123456789"
		slashed = "sk/live/0123456789"
		sep     = "tok\u2028en-0123456789"
		number  = "9876543210123"
	)
	env := []string{"MY_API_KEY=" + plain, "OTHER_TOKEN=" + slashed, "SEP_SECRET=" + sep, "NUM_PASSWORD=" + number}
	pad := strings.Repeat("<", 20<<10) // over the line: the clipped path
	cases := map[string]string{
		"\\u0061 escape":        `{"x":"\u0061bcdef-0123456789"}`,
		"every byte escaped":    `{"x":"` + escapeAll(plain) + `"}`,
		"escaped slashes":       `{"x":"sk\/live\/0123456789"}`,
		"escaped U+2028":        `{"x":"tok\u2028en-0123456789"}`,
		"raw U+2028":            `{"x":"` + sep + `"}`,
		"as a key":              `{"\u0061bcdef-0123456789":1}`,
		"as a number":           `{"n":9876543210123}`,
		"in a list":             `{"args":["run","--key=\u0061bcdef-0123456789"]}`,
		"clipped, escaped":      `{"a":"\u0061bcdef-0123456789","z":"` + pad + `"}`,
		"clipped, key at start": `{"\u0061bcdef-0123456789":"` + pad + `"}`,
	}
	for name, args := range cases {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		l, err := Open(path, env)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid([]byte(args)) {
			t.Fatalf("%s: test arguments are not JSON", name)
		}
		if err := l.Append(Entry{Tool: "t", Decision: "ran", Arguments: json.RawMessage(args), Reason: "reason " + sep}); err != nil {
			t.Fatal(err)
		}
		l.Close()
		ls := lines(t, path)
		d := json.NewDecoder(strings.NewReader(ls[0]))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		var all []string
		strs(v, &all)
		for _, s := range all {
			for _, secret := range []string{plain, slashed, sep, number, `\u0061bcdef`} {
				if strings.Contains(s, secret) {
					t.Errorf("%s: the logged line holds secret %q in %.200q", name, secret, s)
				}
			}
		}
		if !strings.Contains(ls[0], "[redacted:") {
			t.Errorf("%s: no redaction marker: %.300s", name, ls[0])
		}
	}
}

func escapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(`\u00`)
		b.WriteString(strings.ToLower(string("0123456789ABCDEF"[r>>4]) + string("0123456789ABCDEF"[r&15])))
	}
	return b.String()
}

// The arguments as logged (secrets in the environment, so decoded and encoded again) keep
// their keys' order and a key given twice (atk29 N1: a call refused for duplicate keys was
// recorded with one of them), and are the same JSON as those sent.
func TestRedactedArgumentsKeepWhatWasSent(t *testing.T) {
	l := &Log{}
	l.redact, l.hasSecrets = strings.NewReplacer("abcdef-0123456789", "[redacted:K]"), true
	for _, c := range []struct{ in, want string }{
		{`{"command":"cat","args":["sa"],"args":["sb"]}`, `{"command":"cat","args":["sa"],"args":["sb"]}`},
		{`{"z":1,"a":{"y":[1,{"q":null,"q":true}],"b":"<&>"},"c":[]}`, `{"z":1,"a":{"y":[1,{"q":null,"q":true}],"b":"<&>"},"c":[]}`},
		{` [ {} , [ ], "\u0061bcdef-0123456789", 1.5e3, false ] `, `[{},[],"[redacted:K]",1.5e3,false]`},
		{`"x\\u003c"`, `"x\\u003c"`},
		{`{"args":null}`, `{"args":null}`},
	} {
		got, whole := l.redactArgs(json.RawMessage(c.in))
		if got != c.want || whole != nil {
			t.Errorf("%s logged as %s, want %s", c.in, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s logged as %s: not JSON", c.in, got)
		}
	}
}
