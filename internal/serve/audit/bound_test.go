package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// hostile is content that grows when encoded (Go escapes <>& to six bytes, control characters
// and invalid UTF-8 too) or is simply huge.
var hostile = map[string]string{
	"1MiB of <":        strings.Repeat("<", 1<<20),
	"amp and gt":       strings.Repeat("&>", 40<<10),
	"invalid utf-8":    strings.Repeat("\xff\xfe", 30<<10),
	"control chars":    strings.Repeat("\x01\x1f", 30<<10),
	"line separators":  strings.Repeat("\u2028", 20<<10),
	"quotes":           strings.Repeat(`"\`, 50<<10),
	"5MB reason":       strings.Repeat("x", 5<<20),
	"mixed multi-byte": strings.Repeat("é<\xffü\x00", 10<<10),
}

func setField(e *Entry, field, v string) {
	switch field {
	case "time":
		e.Time = v
	case "server":
		e.Server = v
	case "session":
		e.Session = v
	case "call":
		e.Call = v
	case "tool":
		e.Tool = v
	case "decision":
		e.Decision = v
	case "rule":
		e.Rule = v
	case "reason":
		e.Reason = v
	case "policy_hash":
		e.PolicyHash = v
	case "arguments":
		b, _ := json.Marshal(map[string]string{"command": v})
		e.Arguments = b
	case "arguments-not-json":
		e.Arguments = json.RawMessage(v)
	case "client":
		e.Client = v
	case "origin":
		e.Origin = v
	case "policy_path":
		e.PolicyPath = v
	case "workspace_dir":
		e.WorkDir = v
	}
}

var fields = []string{"time", "server", "session", "call", "tool", "decision", "rule", "reason", "policy_hash", "arguments", "arguments-not-json",
	"client", "origin", "policy_path", "workspace_dir"} // fields[:10]: the ones every line has

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// Whatever a field holds, Append succeeds, the line stays within MaxLine, the clipped field is
// named with its whole value's length and sha256, the chain verifies, and the next append works.
func TestBoundHostileContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	n := 0
	for name, v := range hostile {
		for _, field := range fields {
			e := Entry{Tool: "t", Decision: "ran"}
			setField(&e, field, v)
			if err := l.Append(e); err != nil {
				t.Fatalf("%s in %s: %v", name, field, err)
			}
			n++
			ls := lines(t, path)
			last := ls[len(ls)-1]
			if len(last)+1 > MaxLine {
				t.Fatalf("%s in %s: line of %d bytes, bound %d", name, field, len(last)+1, MaxLine)
			}
			var got Entry
			if err := json.Unmarshal([]byte(last), &got); err != nil {
				t.Fatalf("%s in %s: line is not JSON: %v", name, field, err)
			}
			want := strings.TrimSuffix(field, "-not-json")
			whole := []byte(v)
			if field == "arguments" {
				whole = e.Arguments
			}
			sum := sha256.Sum256(whole)
			found := false
			for _, c := range got.Clipped {
				if c.Field == want {
					found = true
					if c.Bytes != int64(len(whole)) || c.SHA256 != hex.EncodeToString(sum[:]) {
						t.Errorf("%s in %s: clip record %+v, want %d bytes sha %x", name, field, c, len(whole), sum)
					}
				}
			}
			if !found && len(v) > MaxLine {
				t.Errorf("%s in %s: no clip record for %s: %+v", name, field, want, got.Clipped)
			}
		}
	}
	// Every field hostile at once, and a caller's own clip records hostile too.
	e := Entry{}
	for _, field := range fields[:10] {
		setField(&e, field, hostile["1MiB of <"])
	}
	for i := range 50 {
		e.Clipped = append(e.Clipped, Clip{Field: strings.Repeat("<", 1000+i), Bytes: 1, SHA256: strings.Repeat("&", 5000)})
	}
	if err := l.Append(e); err != nil {
		t.Fatal(err)
	}
	n++
	ls := lines(t, path)
	if len(ls) != n {
		t.Fatalf("%d lines, want %d", len(ls), n)
	}
	for i, s := range ls {
		if len(s)+1 > MaxLine {
			t.Errorf("line %d: %d bytes", i+1, len(s)+1)
		}
	}
	f, _ := os.Open(path)
	defer f.Close()
	if rep, err := Verify(f); err != nil || rep.Lines != n {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// A secret straddling the clip point is redacted before the clip: no part of it survives.
func TestBoundRedactsBeforeClipping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	secret := "sk-live-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	l, err := Open(path, []string{"MY_API_KEY=" + secret})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for pad := MaxLine - 1200; pad < MaxLine; pad += 7 {
		v := strings.Repeat("a", pad) + secret + strings.Repeat("b", 100)
		args, _ := json.Marshal(map[string]string{"command": v})
		if err := l.Append(Entry{Tool: "t", Decision: "ran", Arguments: args, Reason: strings.Repeat("r", maxReason-400+pad%500) + secret}); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, []byte(secret[:8])) {
		t.Fatal("part of a secret survived the clip")
	}
}

// Any last line, however it came there, is chained over with a marker; Verify names each such
// line; entries after it are answered and chained.
func TestForeignLinesAreChainedOverAndReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendRaw := func(s string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	ok := func() {
		t.Helper()
		if err := l.Append(Entry{Tool: "t", Decision: "ran"}); err != nil {
			t.Fatal(err)
		}
	}
	ok()
	foreign := []struct{ name, raw string }{
		{"over-long", strings.Repeat("<", 200<<10) + "\n"},
		{"over-parse", strings.Repeat("y", 2<<20) + "\n"},
		{"malformed", `{"time":"x","hash":"1234"` + "\n"},
		{"valid json, not an entry", `{"tool":"t","decision":"ran"}` + "\n"},
		{"unterminated", `{"tool":"t","dec`},
		{"empty", "\n"},
	}
	var want []int
	for _, f := range foreign {
		appendRaw(f.raw)
		want = append(want, len(lines(t, path)))
		ok()
		ls := lines(t, path)
		if len(ls) != want[len(want)-1]+2 || !strings.Contains(ls[len(ls)-2], `"decision":"foreign"`) {
			t.Fatalf("%s: no marker before the next entry: %d lines, want %d", f.name, len(ls), want[len(want)-1]+2)
		}
		ok() // and the one after that chains normally
	}
	fh, _ := os.Open(path)
	defer fh.Close()
	rep, err := Verify(fh)
	if err == nil {
		t.Fatal("verify passed a log with foreign lines")
	}
	var got []int
	for _, p := range rep.Problems {
		got = append(got, p.Line)
		if strings.Contains(p.What, "chain broken") {
			t.Errorf("the markers did not keep the chain: %+v", p)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("problems at lines %v, want %v: %+v", got, want, rep.Problems)
	}
}

// An over-long line that is a true entry (written before lines were bounded) is accounted for.
func TestOldLongEntryIsAccepted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	e := Entry{Tool: "t", Decision: "ran", Reason: strings.Repeat("<", 100<<10)}
	line, _ := e.seal()
	os.WriteFile(path, append(line, '\n'), 0o600)
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Entry{Tool: "t", Decision: "ran"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	fh, _ := os.Open(path)
	defer fh.Close()
	if rep, err := Verify(fh); err != nil || rep.Lines != 2 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// A log moved aside, or whose path was unwritable for a while, is written again without a
// restart: the path is opened again and a new chain starts there.
func TestReopensWhenTheFileIsReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	app := func() error { return l.Append(Entry{Tool: "t", Decision: "ran"}) }
	if err := app(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil { // the path cannot be a log for now
		t.Fatal(err)
	}
	if err := app(); err == nil {
		t.Fatal("append succeeded into a file no longer at the log's path")
	}
	os.Remove(path)
	if err := app(); err != nil {
		t.Fatalf("append after the path became writable again: %v", err)
	}
	if err := app(); err != nil {
		t.Fatal(err)
	}
	if n := len(lines(t, path)); n != 2 {
		t.Fatalf("new file has %d lines, want 2", n)
	}
	if n := len(lines(t, path+".old")); n != 1 {
		t.Fatalf("moved file has %d lines, want 1", n)
	}
	for _, p := range []string{path, path + ".old"} {
		fh, _ := os.Open(p)
		if _, err := Verify(fh); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		fh.Close()
	}
	l.Close()
	if err := app(); err == nil {
		t.Fatal("append after Close succeeded")
	}
}

// Two Logs (two serves) appending to one file at once keep one chain, big lines included.
func TestTwoLogsShareOneChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var wg sync.WaitGroup
	for w := range 2 {
		l, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 15 {
					args, _ := json.Marshal(map[string]string{"x": strings.Repeat("<", (i%3)*20000)})
					if err := l.Append(Entry{Server: fmt.Sprint(w), Tool: fmt.Sprint(g), Decision: "ran", Arguments: args}); err != nil {
						t.Error(err)
					}
				}
			}()
		}
	}
	wg.Wait()
	fh, _ := os.Open(path)
	defer fh.Close()
	if rep, err := Verify(fh); err != nil || rep.Lines != 120 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// Verify counts calls whose "started" entry has no outcome.
func TestVerifyCountsUnfinishedCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := Open(path, nil)
	l.Append(Entry{Call: "a", Decision: DecisionStarted})
	l.Append(Entry{Call: "b", Decision: DecisionStarted})
	l.Append(Entry{Call: "a", Decision: "ran"})
	l.Close()
	fh, _ := os.Open(path)
	defer fh.Close()
	if rep, err := Verify(fh); err != nil || rep.Unfinished != 1 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

func BenchmarkAppend(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), []string{"MY_API_KEY=sk-0123456789"})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	args := json.RawMessage(`{"command":"ls","args":["-la","/workspace"]}`)
	for b.Loop() {
		if err := l.Append(Entry{Server: "s", Tool: "run_command", Decision: "ran", Arguments: args}); err != nil {
			b.Fatal(err)
		}
	}
}

// The file records are bounded and redacted like every other field: a read_file or write_file
// path of 4 KiB of "<" (24 KiB encoded), or pictures' names from a sandbox, made a line no
// clipping could fit, so the call ran and its outcome could not be written. Red with mutant
// audit-bound-files.
func TestBoundHostileFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, []string{"MY_API_TOKEN=hunter2-secret-value"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	files := func(v string, n int) []FileRecord {
		var fs []FileRecord
		for i := range n {
			fs = append(fs, FileRecord{Op: v, Path: fmt.Sprintf("%d/%s", i, v), Bytes: int64(i), SHA256: v})
		}
		return fs
	}
	entries := []Entry{{Tool: "write_file", Decision: "ran", Files: files(strings.Repeat("<", 4096), 1)}}
	for _, v := range hostile {
		v = v[:16<<10]
		entries = append(entries, Entry{Tool: "t", Decision: "ran", Files: files(v, 9)}, Entry{Tool: "t", Decision: "ran", Files: files(v, 30)})
	}
	worst := Entry{Files: files(hostile["1MiB of <"][:16<<10], 30)}
	for _, field := range fields[:10] {
		setField(&worst, field, hostile["1MiB of <"])
	}
	for i := range 50 {
		worst.Clipped = append(worst.Clipped, Clip{Field: strings.Repeat("<", 1000+i), Bytes: 1, SHA256: strings.Repeat("&", 5000)})
	}
	entries = append(entries, worst, Entry{Tool: "read_file", Decision: "ran", Files: []FileRecord{{Op: "read", Path: "a/hunter2-secret-value/b"}}})
	for i, e := range entries {
		whole, _ := json.Marshal(e.Files)
		if err := l.Append(e); err != nil {
			t.Fatalf("entry %d (%d file records, %d bytes of them): %v", i, len(e.Files), len(whole), err)
		}
		ls := lines(t, path)
		last := ls[len(ls)-1]
		if len(last)+1 > MaxLine {
			t.Fatalf("entry %d: a line of %d bytes, bound %d", i, len(last)+1, MaxLine)
		}
		var got Entry
		if err := json.Unmarshal([]byte(last), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Files) == 0 || len(got.Files) > maxFiles {
			t.Errorf("entry %d: %d file records kept", i, len(got.Files))
		}
		clipped := false
		for _, c := range got.Clipped {
			clipped = clipped || c.Field == "files"
		}
		if cut := len(whole) > 1024; cut != clipped {
			t.Errorf("entry %d: a files clip record %v, want %v", i, clipped, cut)
		}
	}
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("hunter2")) {
		t.Error("a secret in a file record's path was logged")
	}
	f, _ := os.Open(path)
	defer f.Close()
	if rep, err := Verify(f); err != nil || rep.Lines != len(entries) {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}
