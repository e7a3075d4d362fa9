package audit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"golang.org/x/sys/unix"
)

// smallDisk mounts a tmpfs of size bytes at a fresh directory (root only).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	return testenv.Mount(t, "tmpfs", "tmpfs", 0, "size="+size)
}

// fill writes into dir until its filesystem is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			t.Fatal(err)
		}
	}
	for _, n := range []int{4096, 1} { // the last bytes too
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
}

// A disk that fills while calls run leaves each call that started with its outcome line:
// the log keeps Reserve bytes allocated past its end, and a started line is written only with
// that room (attack round atk31, F3: the call's writes landed, its outcome was a 19-byte
// fragment, and audit verify called the log tampered). With the room gone a call is refused
// before it runs; a write cut short leaves no torn line.
func TestOutcomeLinesFitADiskThatFills(t *testing.T) {
	dir := smallDisk(t, "8m")
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	big := strings.Repeat("r", MaxLine) // clipped to fit a line: the largest outcome there is
	for i := 0; i < 8; i++ {
		if err := l.Append(Entry{Call: fmt.Sprint("c", i), Tool: "t", Decision: DecisionStarted}); err != nil {
			t.Fatal(err)
		}
	}
	fill(t, dir)
	// every outcome of a call that started fits, the largest ones included
	for i := 0; i < 8; i++ {
		if err := l.Append(Entry{Call: fmt.Sprint("c", i), Tool: "t", Decision: "ran", Reason: big}); err != nil {
			t.Fatalf("outcome %d on a full disk: %v", i, err)
		}
	}
	// new calls start while the reserve holds; once it runs low they are refused, and the
	// log never holds a started line without room for its outcome
	refused := false
	for i := 0; i < 400 && !refused; i++ {
		if err := l.Append(Entry{Call: "n", Tool: "t", Decision: DecisionStarted, Reason: big}); err != nil {
			if !strings.Contains(err.Error(), "reserve space in audit log") {
				t.Fatalf("a started line on a full disk: %v, want the reserve's refusal", err)
			}
			refused = true
			continue
		}
		if err := l.Append(Entry{Call: "n", Tool: "t", Decision: "ran", Reason: big}); err != nil {
			t.Fatalf("the outcome of call %d, which started: %v", i, err)
		}
	}
	if !refused {
		t.Fatal("a full disk never refused a call's start")
	}
	f, _ := os.Open(path)
	defer f.Close()
	if rep, err := Verify(f); err != nil || rep.Unfinished != 0 {
		t.Fatalf("the log on a full disk: %v, %+v", err, rep)
	}
}

// A write the disk cuts short is taken back: no torn line joins the chain.
func TestShortWriteLeavesNoTornLine(t *testing.T) {
	dir := smallDisk(t, "1m")
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fill(t, dir) // the log's reserve included: nothing is left
	// the line is a running call's outcome, the one kind written without room after it (any other
	// is refused before it is written: TestRefusedLinesLeaveTheRunningCallsRoom)
	l.running = map[string]struct{}{"c": {}}
	// one page free (the one Open held past the empty log's end, asking whether room can be
	// held there), then a line of 4.5 KB (its reason clipped): the write is cut short after 4 KB
	err = l.Append(Entry{Call: "c", Tool: "t", Decision: "ran", Reason: strings.Repeat("r", MaxLine)})
	if err == nil {
		t.Skip("the line fitted: the disk was not full enough to cut it short")
	}
	b, _ := os.ReadFile(path)
	if len(b) > 0 {
		t.Fatalf("a torn line is left: %d bytes, ends %q", len(b), b[max(0, len(b)-20):])
	}
}

// On a full disk, lines that are no running call's outcome (a refused call's, an egress
// decision: lines a client makes at will) are refused once writing them would leave less than
// Reserve: they cannot take the room of a running call's outcome (attack round atk32, F3: 330
// refused calls of 16 KiB did, and the running call's writes landed with no outcome line).
func TestRefusedLinesLeaveTheRunningCallsRoom(t *testing.T) {
	dir := smallDisk(t, "8m")
	l, err := Open(filepath.Join(dir, "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	big := strings.Repeat("r", MaxLine)
	if err := l.Append(Entry{Call: "run", Tool: "t", Decision: DecisionStarted}); err != nil {
		t.Fatal(err)
	}
	fill(t, dir)
	refused := 0
	for i := 0; i < 600; i++ {
		if err := l.Append(Entry{Call: fmt.Sprint("x", i), Tool: "nope", Decision: "refused", Reason: big}); err != nil {
			if !strings.Contains(err.Error(), "kept for the outcomes of running calls") {
				t.Fatalf("a refused call's line on a full disk: %v", err)
			}
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("600 refused calls' lines of 16 KiB all went into the reserve")
	}
	if err := l.Append(Entry{Call: "run", Tool: "t", Decision: "ran", Reason: big}); err != nil {
		t.Fatalf("the running call's outcome after a flood of refused calls: %v", err)
	}
}

// A log truncated in place (logrotate's copytruncate) frees its reserve with its blocks: the
// next append takes it again (attack round atk32, F5).
func TestTruncatedLogTakesItsReserveAgain(t *testing.T) {
	dir := smallDisk(t, "16m")
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	blocks := func() int64 {
		var st syscall.Stat_t
		syscall.Stat(path, &st)
		return st.Blocks * 512
	}
	for i := 0; i < 3; i++ {
		if err := l.Append(Entry{Call: fmt.Sprint("c", i), Tool: "t", Decision: DecisionStarted}); err != nil {
			t.Fatal(err)
		}
	}
	if b := blocks(); b < Reserve {
		t.Fatalf("%d bytes allocated after a call's start, want the reserve (%d)", b, Reserve)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Entry{Call: "d", Tool: "t", Decision: DecisionStarted}); err != nil {
		t.Fatal(err)
	}
	if b := blocks(); b < Reserve {
		t.Errorf("%d bytes allocated after a truncation and a call's start, want the reserve (%d) again", b, Reserve)
	}
}

// A log on a file system without fallocate (ramfs here; NFSv3, many FUSE file systems) holds
// no room, and says so before the first call (atk32 N2: the reserve was silently absent and
// recorded as taken); its lines are still written.
func TestALogThatCannotHoldRoomSaysSo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a ramfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("none", dir, "ramfs", 0, ""); err != nil {
		t.Skipf("mount a ramfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	l, err := Open(filepath.Join(dir, "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if note := l.ReserveNote(); !strings.Contains(note, "no room can be held") || !strings.Contains(note, dir) {
		t.Fatalf("a log on a ramfs: ReserveNote %q, want what it cannot hold and where", note)
	}
	for _, d := range []string{DecisionStarted, "ran"} {
		if err := l.Append(Entry{Call: "c", Tool: "t", Decision: d}); err != nil {
			t.Fatalf("a %s line on a ramfs (it states no size: nothing to check): %v", d, err)
		}
	}
	// a file system that can: nothing to say
	l2, err := Open(filepath.Join(smallDisk(t, "1m"), "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if note := l2.ReserveNote(); note != "" {
		t.Fatalf("a log on a tmpfs: ReserveNote %q, want none", note)
	}
}

// Where no room can be held, every line but a running call's outcome is written only when the
// file system says Reserve bytes are free after it: on a disk that fills, calls are refused
// before they run and refused calls' lines stop, and the running call's outcome still fits.
func TestWithoutFallocateEveryLineChecksTheRoom(t *testing.T) {
	dir := smallDisk(t, "16m")
	fallocate = func(int, uint32, int64, int64) error { return syscall.EOPNOTSUPP }
	t.Cleanup(func() { fallocate = unix.Fallocate })
	l, err := Open(filepath.Join(dir, "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.ReserveNote() == "" {
		t.Fatal("no fallocate, and the log does not say it holds no room")
	}
	big := strings.Repeat("r", MaxLine)
	if err := l.Append(Entry{Call: "run", Tool: "t", Decision: DecisionStarted}); err != nil {
		t.Fatal(err)
	}
	fill(t, dir)
	filler := filepath.Join(dir, "filler")
	st, _ := os.Stat(filler)
	os.Truncate(filler, st.Size()-Reserve-256<<10) // the room and a little more
	refused := 0
	for i := 0; i < 100; i++ {
		if err := l.Append(Entry{Call: fmt.Sprint("x", i), Tool: "nope", Decision: "refused", Reason: big}); err != nil {
			if !strings.Contains(err.Error(), "kept for the outcomes of running calls") {
				t.Fatalf("a refused call's line on a full disk: %v", err)
			}
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("100 refused calls' lines of 16 KiB went into the room a running call's outcome needs")
	}
	started := []string{"run"}
	for i := 0; ; i++ {
		err := l.Append(Entry{Call: fmt.Sprint("n", i), Tool: "t", Decision: DecisionStarted, Reason: big})
		if err != nil {
			if !strings.Contains(err.Error(), "reserve space in audit log") {
				t.Fatalf("a call's start on a full disk: %v, want the reserve's refusal", err)
			}
			break
		}
		if i == 100 {
			t.Fatal("100 calls started on a full disk with no room held")
		}
		started = append(started, fmt.Sprint("n", i))
	}
	for _, c := range started {
		if err := l.Append(Entry{Call: c, Tool: "t", Decision: "ran", Reason: big}); err != nil {
			t.Fatalf("the outcome of %s, which started: %v", c, err)
		}
	}
}

// A log moved aside (logrotate's create mode) gives its reserve back when serve opens the new
// file, and a log serve closes gives it back too (trial38 F5: a 995-byte rotated file held 8 MiB
// for good, also after serve exited).
func TestRotatedAndClosedLogsReleaseTheirReserve(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.ReserveNote() != "" {
		t.Skip("no fallocate here")
	}
	blocks := func(p string) int64 {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return st.Blocks * 512
	}
	if err := l.Append(Entry{Call: "a", Tool: "t", Decision: DecisionStarted}); err != nil {
		t.Fatal(err)
	}
	if b := blocks(path); b < Reserve {
		t.Fatalf("%d bytes allocated, want the reserve (%d)", b, Reserve)
	}
	old := path + ".1"
	if err := os.Rename(path, old); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Entry{Call: "a", Tool: "t", Decision: "ran"}); err != nil {
		t.Fatal(err)
	}
	if b := blocks(old); b > 64<<10 {
		t.Errorf("the rotated log holds %d bytes of disk after serve moved to the new file, want its reserve released", b)
	}
	if b := blocks(path); b < Reserve {
		t.Errorf("the new log holds %d bytes, want the reserve (%d)", b, Reserve)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if b := blocks(path); b > 64<<10 {
		t.Errorf("the closed log holds %d bytes of disk, want its reserve released", b)
	}
}

// A second Log on the same file takes the room again at its next append after the first one
// released it on close.
func TestSharedLogTakesTheReserveAgainAfterAClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.ReserveNote() != "" {
		t.Skip("no fallocate here")
	}
	b, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, l := range []*Log{a, b} {
		if err := l.Append(Entry{Tool: "t", Decision: "ran"}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	if err := b.Append(Entry{Tool: "t", Decision: "ran"}); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 < Reserve {
		t.Errorf("%d bytes allocated after the other Log closed, want the reserve (%d) taken again", st.Blocks*512, Reserve)
	}
}

// A serve that closes a log another serve still writes keeps the reserve: the other's running
// call needs it for its outcome line on a full disk (atk38b F4: the first to close released it
// for both); the last to close releases it. Red with mutant audit-reserve-release-shared.
func TestSharedLogReserveReleasedByTheLastOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.ReserveNote() != "" {
		t.Skip("no fallocate here")
	}
	b, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	blocks := func() int64 {
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		return st.Blocks * 512
	}
	if err := a.Append(Entry{Call: "a", Tool: "t", Decision: DecisionStarted}); err != nil {
		t.Fatal(err)
	}
	if err := b.Append(Entry{Call: "b", Tool: "t", Decision: "ran"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n := blocks(); n < Reserve {
		t.Errorf("after the other serve closed, %d bytes allocated, want the reserve (%d) kept for this one's running call", n, Reserve)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := blocks(); n > 64<<10 {
		t.Errorf("after the last serve closed, %d bytes allocated, want the reserve released", n)
	}
}
