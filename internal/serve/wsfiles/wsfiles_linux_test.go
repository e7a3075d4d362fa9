//go:build linux

package wsfiles

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"golang.org/x/sys/unix"
)

func newFS(t *testing.T) (*FS, string, string) {
	t.Helper()
	dir := t.TempDir()
	ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := &FS{Root: ws, SandboxPath: "/workspace", Rule: "test.workspace", CommitRule: "test.protect",
		Commit: func(l *wslayer.Layer) (*executor.WorkspaceChanges, error) {
			return l.Commit(wslayer.Rules{Protect: policy.DefaultProtect, Quota: 64 << 20, UID: -1, GID: -1, SandboxPath: "/workspace"})
		}}
	return f, ws, outside
}

func rule(err error) string {
	var r *executor.Refusal
	if errors.As(err, &r) {
		return r.Rule
	}
	return ""
}

var bg = context.Background()

// Binary content round-trips byte for byte; an absolute path under the sandbox's name of the
// workspace is the same file.
func TestWriteReadRoundTrip(t *testing.T) {
	f, ws, _ := newFS(t)
	data := make([]byte, 1<<20)
	rand.Read(data)
	res, err := f.WriteFile(bg, executor.Call{}, "sub/dir/blob.bin", data)
	if err != nil {
		t.Fatal(err)
	}
	if res.Workspace == nil || res.Workspace.Committed == 0 {
		t.Errorf("no commit reported: %+v", res.Workspace)
	}
	got, size, err := f.ReadFile(bg, executor.Call{}, "/workspace/sub/dir/blob.bin", 2<<20)
	if err != nil || !bytes.Equal(got, data) || size != int64(len(data)) {
		t.Fatalf("read back %d bytes (size %d): %v", len(got), size, err)
	}
	if onDisk, _ := os.ReadFile(filepath.Join(ws, "sub/dir/blob.bin")); !bytes.Equal(onDisk, data) {
		t.Fatal("the workspace does not hold the bytes written")
	}
	got, size, err = f.ReadFile(bg, executor.Call{}, "sub/dir/blob.bin", 10)
	if err != nil || len(got) != 10 || size != int64(len(data)) {
		t.Fatalf("bounded read: %d bytes, size %d, %v", len(got), size, err)
	}
	ents, more, err := f.ListFiles(bg, executor.Call{}, "sub/dir")
	if err != nil || more != 0 || len(ents) != 1 || ents[0].Name != "blob.bin" || ents[0].Size != 1<<20 || ents[0].Type != "file" {
		t.Fatalf("list: %+v %d %v", ents, more, err)
	}
}

// Paths out of the workspace, by "..", absolutely or through a link, read and write nothing.
func TestPathsStayInside(t *testing.T) {
	f, ws, outside := newFS(t)
	canary := filepath.Join(outside, "canary")
	os.WriteFile(canary, []byte("secret"), 0o644)
	os.Symlink(canary, filepath.Join(ws, "link"))
	os.Symlink(outside, filepath.Join(ws, "dirlink"))
	os.Symlink("../outside/canary", filepath.Join(ws, "rel"))
	for _, p := range []string{"../outside/canary", "a/../../outside/canary", canary, "/workspacex/canary", "link", "dirlink/canary", "rel"} {
		data, _, err := f.ReadFile(bg, executor.Call{}, p, 100)
		if err == nil || rule(err) != "test.workspace" || bytes.Contains(data, []byte("secret")) {
			t.Errorf("read %q: %q, %v (want a test.workspace refusal)", p, data, err)
		}
	}
	for _, p := range []string{"../outside/new", canary, "dirlink/new", "link"} {
		if _, err := f.WriteFile(bg, executor.Call{}, p, []byte("pwned")); rule(err) != "test.workspace" {
			t.Errorf("write %q: %v (want a test.workspace refusal)", p, err)
		}
	}
	if _, _, err := f.ListFiles(bg, executor.Call{}, "dirlink"); rule(err) != "test.workspace" {
		t.Errorf("list through a link out: %v", err)
	}
	if b, _ := os.ReadFile(canary); string(b) != "secret" {
		t.Errorf("the canary changed: %q", b)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("files appeared outside: %v", ents)
	}
	if fi, err := os.Lstat(filepath.Join(ws, "dirlink")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link in the workspace was replaced")
	}
	// a link that stays inside is followed
	os.WriteFile(filepath.Join(ws, "real"), []byte("ok"), 0o644)
	os.Symlink("real", filepath.Join(ws, "inlink"))
	if d, _, err := f.ReadFile(bg, executor.Call{}, "inlink", 10); err != nil || string(d) != "ok" {
		t.Errorf("a link inside: %q %v", d, err)
	}
}

// A FIFO is refused without being opened (no hang); a device and a socket likewise.
func TestSpecialFilesRefused(t *testing.T) {
	f, ws, _ := newFS(t)
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := f.ReadFile(bg, executor.Call{}, "fifo", 10); done <- err }()
	select {
	case err := <-done:
		if rule(err) != executor.RuleFilePath || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("fifo: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO hung")
	}
	if _, err := f.WriteFile(bg, executor.Call{}, "fifo", []byte("x")); rule(err) != executor.RuleFilePath {
		t.Errorf("writing over a FIFO: %v", err)
	}
	os.Mkdir(filepath.Join(ws, "d"), 0o755)
	if _, err := f.WriteFile(bg, executor.Call{}, "d", []byte("x")); rule(err) != executor.RuleFilePath {
		t.Errorf("writing over a directory: %v", err)
	}
	if _, _, err := f.ReadFile(bg, executor.Call{}, "d", 10); rule(err) != executor.RuleFilePath {
		t.Errorf("reading a directory: %v", err)
	}
}

// Writes go through the commit: protected names are refused naming the rule, and nothing lands.
func TestWritesCheckedByCommit(t *testing.T) {
	f, ws, _ := newFS(t)
	os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755)
	for _, p := range []string{".git/hooks/pre-commit", ".envrc", "sub/.git/config", ".vscode/tasks.json"} {
		_, err := f.WriteFile(bg, executor.Call{}, p, []byte("#!/bin/sh\ntouch /tmp/pwned\n"))
		if rule(err) != "test.protect" {
			t.Errorf("write %q: %v (want a test.protect refusal)", p, err)
		}
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%q was written", p)
		}
	}
	f.ReadOnly = "test.readonly"
	if _, err := f.WriteFile(bg, executor.Call{}, "ok.txt", []byte("x")); rule(err) != "test.readonly" {
		t.Errorf("read-only: %v", err)
	}
}

// Listing is bounded and counts the rest.
func TestListBound(t *testing.T) {
	f, ws, _ := newFS(t)
	for i := range executor.MaxListEntries + 5 {
		os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%05d", i)), nil, 0o644)
	}
	ents, more, err := f.ListFiles(bg, executor.Call{}, "")
	if err != nil || len(ents) != executor.MaxListEntries || more != 5 || ents[0].Name != "f00000" {
		t.Fatalf("%d entries, %d more, %v", len(ents), more, err)
	}
	// the first names in order, whatever order the directory gives them in
	for i, e := range ents {
		if want := fmt.Sprintf("f%05d", i); e.Name != want {
			t.Fatalf("entry %d is %q, want %q", i, e.Name, want)
		}
	}
}

// Without openat2 the walk follows no link at all and never climbs.
func TestWalkOpenFollowsNoLink(t *testing.T) {
	_, ws, outside := newFS(t)
	os.WriteFile(filepath.Join(outside, "canary"), []byte("secret"), 0o644)
	os.Symlink(outside, filepath.Join(ws, "out"))
	os.Mkdir(filepath.Join(ws, "d"), 0o755)
	os.WriteFile(filepath.Join(ws, "d", "f"), []byte("ok"), 0o644)
	root, err := syscall.Open(ws, unix.O_PATH|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(root)
	for _, rel := range []string{"out/canary", "out", "../outside/canary"} {
		if fd, err := walkOpen(root, rel, syscall.O_RDONLY); err == nil {
			syscall.Close(fd)
			t.Errorf("walkOpen %q opened it", rel)
		}
	}
	fd, err := walkOpen(root, "d/f", syscall.O_RDONLY)
	if err != nil {
		t.Fatalf("walkOpen d/f: %v", err)
	}
	syscall.Close(fd)
}

// A file with another hard link is refused when the scheme says so (its other name may lie
// outside the workspace).
func TestHardLinkedReadRefused(t *testing.T) {
	f, ws, outside := newFS(t)
	os.WriteFile(filepath.Join(outside, "canary"), []byte("secret"), 0o644)
	if err := os.Link(filepath.Join(outside, "canary"), filepath.Join(ws, "hl")); err != nil {
		t.Skip("no hard links here:", err)
	}
	f.HardLinks = "test.hardlinks"
	if d, _, err := f.ReadFile(bg, executor.Call{}, "hl", 100); rule(err) != "test.hardlinks" {
		t.Errorf("read a hard-linked file: %q %v", d, err)
	}
}

// A refused write leaves nothing behind: not the file, nor the directories its commit made on
// the way (a/b/c for a/b/c/CLAUDE.md); directories that were there stay, and so does one the
// write did not make empty.
func TestRefusedWriteLeavesNoDirectories(t *testing.T) {
	f, ws, _ := newFS(t)
	if err := os.MkdirAll(filepath.Join(ws, "kept", "full"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"x/y/z/CLAUDE.md", "kept/new/deeper/.envrc", "kept/full/.mcp.json", "q/.vscode/tasks.json"} {
		if _, err := f.WriteFile(bg, executor.Call{}, p, []byte("x")); rule(err) != "test.protect" {
			t.Fatalf("write %q: %v (want a test.protect refusal)", p, err)
		}
	}
	var left []string
	filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if r, _ := filepath.Rel(ws, p); r != "." {
			left = append(left, r)
		}
		return nil
	})
	if want := []string{"kept", "kept/full"}; fmt.Sprint(left) != fmt.Sprint(want) {
		t.Errorf("after refused writes the workspace holds %q, want %q", left, want)
	}
	if _, err := f.WriteFile(bg, executor.Call{}, "n/m/ok.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, "n", "m", "ok.txt")); err != nil {
		t.Errorf("an applied deep write: %v", err)
	}
}
