package executor

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestCapBuffer(t *testing.T) {
	c := &CapBuffer{Limit: 10}
	for i := 0; i < 3; i++ {
		if n, err := c.Write([]byte("abcdef")); n != 6 || err != nil {
			t.Fatalf("Write = %d, %v: writes must never fail", n, err)
		}
	}
	if c.String() != "abcdefabcd" || c.Dropped() != 8 {
		t.Fatalf("kept %q dropped %d", c.String(), c.Dropped())
	}
	b := &CapBuffer{Limit: 100}
	b.Write([]byte{0xff, 'a'})
	if !strings.Contains(b.String(), "\uFFFD") {
		t.Error("invalid UTF-8 not replaced")
	}
}

// io.Copy from a pipe goes through ReadFrom: it keeps and counts exactly as Write does, and
// reports a read error.
func TestCapBufferReadFrom(t *testing.T) {
	src := strings.Repeat("0123456789", 5000) // over the pooled buffer, so several reads
	c := &CapBuffer{Limit: 30000}
	n, err := io.Copy(c, struct{ io.Reader }{strings.NewReader(src)})
	if n != int64(len(src)) || err != nil {
		t.Fatalf("io.Copy = %d, %v; want %d, nil", n, err, len(src))
	}
	if c.String() != src[:30000] || c.Dropped() != int64(len(src)-30000) {
		t.Fatalf("kept %d bytes (want the first 30000), dropped %d (want %d)", len(c.String()), c.Dropped(), len(src)-30000)
	}
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("abc"), iotestErr{boom})
	d := &CapBuffer{Limit: 10}
	if n, err := d.ReadFrom(r); n != 3 || !errors.Is(err, boom) || d.String() != "abc" {
		t.Fatalf("ReadFrom = %d, %v, kept %q; want 3, boom, abc", n, err, d.String())
	}
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

func TestDecodeArgsStrict(t *testing.T) {
	var v struct{ A string }
	if err := DecodeArgs([]byte(`{"A":"x","B":1}`), &v); err == nil {
		t.Fatal("unknown field accepted")
	} else if r, ok := err.(*Refusal); !ok || r.Rule != "tool.arguments" {
		t.Fatalf("want a tool.arguments refusal, got %v", err)
	}
	// an unknown argument's refusal names the ones the tool takes
	var sh struct {
		Script  string  `json:"script"`
		Timeout float64 `json:"timeout,omitempty"`
	}
	if err := DecodeArgs([]byte(`{"command":"ls"}`), &sh); err == nil || !strings.Contains(err.Error(), `unknown field "command" (this tool takes: script, timeout)`) {
		t.Errorf("an unknown argument: %v, want the tool's arguments named", err)
	}
	if err := DecodeArgs([]byte(`{"A":5}`), &v); err == nil || !strings.Contains(err.Error(), `argument "A" must be a string`) || strings.Contains(err.Error(), "Go struct") {
		t.Fatalf("a wrong type is not said in words: %v", err)
	}
	if err := DecodeArgs(nil, &v); err != nil {
		t.Fatalf("empty arguments: %v", err)
	}
}

// Argument names are matched exactly: encoding/json would take "Script", "SCRIPT" or "ſcript"
// (U+017F folds to s) for "script", and the audit would keep the name as sent (atk29 N2).
// Red with mutant args-key-fold.
func TestDecodeArgsNamesExact(t *testing.T) {
	type common struct {
		Timeout float64 `json:"timeout,omitempty"`
	}
	var sh struct {
		Script string `json:"script"`
		common
	}
	for _, k := range []string{"Script", "SCRIPT", "ſcript", "TimeOut"} {
		raw := fmt.Sprintf(`{%q:"x"}`, k)
		if strings.HasPrefix(k, "T") {
			raw = fmt.Sprintf(`{"script":"x",%q:1}`, k)
		}
		err := DecodeArgs([]byte(raw), &sh)
		var r *Refusal
		if !errors.As(err, &r) || r.Rule != "tool.arguments" || !strings.Contains(err.Error(), "matched exactly") {
			t.Errorf("argument name %q: %v, want a refusal naming exact matching", k, err)
		}
	}
	if err := DecodeArgs([]byte(`{"script":"x","timeout":2}`), &sh); err != nil || sh.Script != "x" || sh.Timeout != 2 {
		t.Fatalf("exact names, an embedded struct's among them: %v %+v", err, sh)
	}
}

// topKeys reads the top-level keys only, escapes decoded, whatever the values hold.
func TestTopKeys(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"b":{"c":[{"d":2}],"e":"x\\"},"f":["g","h"],"\u0073cript":"}{,\""}`: "a b f script",
		`["a","b"]`:          "",
		`{}`:                 "",
		` { "k" : [ ] } `:    "k",
		`{"a":"unterminated`: "a",
	} {
		if got := strings.Join(topKeys([]byte(in)), " "); got != want {
			t.Errorf("topKeys(%s) = %q, want %q", in, got, want)
		}
	}
}
