package generate

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCodexConfigDepthRefused: a Codex config (TOML) of nested inline tables took init past
// 3 GB in BurntSushi/toml (quadratic in the depth). init refuses it at its line, naming the
// bound, quickly and without the decoder's memory; every TOML path (merge, list, users) does.
func TestCodexConfigDepthRefused(t *testing.T) {
	deep := "model = \"x\"\nx = " + strings.Repeat("{a = ", 2000) + "1" + strings.Repeat("}", 2000) + "\n"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := Merge(client(t, "codex"), []byte(deep), "sandbox", NewServerEntry("/bin/m", "/p.toml"), false)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || !strings.Contains(se.Msg, "more than 64 deep") {
		t.Errorf("merge: err = %v, want a syntax error on line 2 naming the bound 64", err)
	}
	if took > 2*time.Second {
		t.Errorf("took %v", took)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("allocated %d MiB", alloc>>20)
	}
	tgt := Target{Client: client(t, "codex")}
	tgt.Client.KeyPath = []string{tgt.Client.Key}
	if _, err := listTOML(tgt, []byte(deep)); !errors.As(err, &se) || se.Line != 2 {
		t.Errorf("list: err = %v, want a syntax error on line 2", err)
	}
	// arrays too, and the bound itself still parses
	if _, err := Merge(client(t, "codex"), []byte("x = "+strings.Repeat("[", 65)+strings.Repeat("]", 65)+"\n"), "sandbox", NewServerEntry("/bin/m", "/p.toml"), false); !errors.As(err, &se) {
		t.Errorf("65 nested arrays: %v", err)
	}
	if _, err := Merge(client(t, "codex"), []byte("x = "+strings.Repeat("[", 64)+strings.Repeat("]", 64)+"\n"), "sandbox", NewServerEntry("/bin/m", "/p.toml"), false); err != nil {
		t.Errorf("64 nested arrays: %v", err)
	}
}

// TestClientConfigTooLarge: a client config past MaxConfigBytes is refused, not read whole.
func TestClientConfigTooLarge(t *testing.T) {
	home := t.TempDir()
	env := Env{Home: home, ConfigDir: filepath.Join(home, ".config"), Project: t.TempDir()}
	tgt, err := ResolveTarget("cursor", env)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(tgt.Path), 0o755)
	if err := os.WriteFile(tgt.Path, []byte("{}"+strings.Repeat(" ", MaxConfigBytes)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ClientChange(tgt, "sandbox", NewServerEntry("/b", "/p"), false); err == nil || !strings.Contains(err.Error(), "larger than 16777216 bytes") {
		t.Errorf("a config past MaxConfigBytes: %v", err)
	}
}

// TestJSONConfigDepthRefused: the JSONC parser recursed once a level without a bound, and a
// 10 MB config of nested arrays overflowed its stack (a fatal error). Past maxJSONDepth it is a
// syntax error at its line; at the bound it still parses.
func TestJSONConfigDepthRefused(t *testing.T) {
	e := NewServerEntry("/bin/m", "/p.toml")
	deep := "{\n\"a\": " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}"
	_, err := Merge(client(t, "cursor"), []byte(deep), "sandbox", e, false)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || !strings.Contains(se.Msg, "more than 512 deep") {
		t.Errorf("err = %v, want a syntax error on line 2 naming the bound 512", err)
	}
	// the top object is one level: 511 arrays inside it reach the bound
	ok := "{\"a\": " + strings.Repeat("[", maxJSONDepth-1) + strings.Repeat("]", maxJSONDepth-1) + "}"
	if _, err := Merge(client(t, "cursor"), []byte(ok), "sandbox", e, false); err != nil {
		t.Errorf("nested to the bound: %v", err)
	}
}
