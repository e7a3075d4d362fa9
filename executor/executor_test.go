package executor

import (
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
