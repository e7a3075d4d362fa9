package procid

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Another boot of this machine id is dead only when this machine's record shows it: a clone
// that shares the machine id has a boot of its own (atk37b F5). Red with procid-other-boot-dead.
func TestJudgeOtherBootOnlyWhenRecorded(t *testing.T) {
	me := Self()
	if me.Boot == "" || me.Machine == "" {
		t.Skipf("no boot or machine id here (%+v)", me)
	}
	if !ranHere(me.Boot) {
		t.Fatalf("Self did not note its boot %s in %s", me.Boot, bootsFile())
	}
	twin := me
	twin.Boot, twin.PID, twin.Start = "11111111-2222-3333-4444-555555555555", 1, 1
	if got := me.Judge(twin); got != Unknown {
		t.Errorf("a live clone's serve (same machine id, a boot this machine never ran): %v, want unknown", got)
	}
	earlier := twin
	earlier.Boot = "66666666-7777-8888-9999-000000000000"
	if err := NoteBoot(earlier.Boot); err != nil {
		t.Fatal(err)
	}
	if got := me.Judge(earlier); got != Dead {
		t.Errorf("a serve of an earlier boot of this machine: %v, want dead", got)
	}
}

// The record keeps the latest maxBoots, ignores what is not a boot id, and never holds a line
// twice.
func TestNoteBootBounded(t *testing.T) {
	p := bootsFile()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("not a boot id!\n"+strings.Repeat("x", 100)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < maxBoots+10; i++ {
		if err := NoteBoot("boot-" + strings.Repeat("a", i%3) + string(rune('a'+i%26)) + "-" + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	_ = NoteBoot("boot-a-0") // already gone: added again, once
	_ = NoteBoot("boot-a-0")
	b := readBoots(p)
	if len(b) != maxBoots {
		t.Errorf("%d boots kept, want %d", len(b), maxBoots)
	}
	seen := map[string]bool{}
	for _, x := range b {
		if seen[x] {
			t.Errorf("%s twice", x)
		}
		seen[x] = true
	}
	if ranHere("not a boot id!") || !ranHere("boot-a-0") || ranHere("boot-ab-1") {
		t.Errorf("record %v", b[:3])
	}
}
