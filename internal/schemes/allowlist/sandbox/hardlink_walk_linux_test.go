package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// A directory operand's hard-link check follows the symbolic links below it to directories, as
// grep -R and diff -r do (attack round atk19c): sub/l -> ../vendor made vendor/pkg/x, a hard
// link to a file outside the workspace, readable by grep -R through a directory that has no
// hard link of its own. Shown at the check and through a real call.
func TestHardLinkBelowLinkedDirectory(t *testing.T) {
	e := pythonExecutor(t, nil, false)
	outsideFile := hardLinkWorkspace(t, e)
	os.Mkdir(filepath.Join(e.ws, "sub"), 0o755)
	os.Symlink("../vendor", filepath.Join(e.ws, "sub", "l")) // a link to a directory outside the operand
	os.Symlink("../clean", filepath.Join(e.ws, "sub2"))      // control target
	os.Mkdir(filepath.Join(e.ws, "ok"), 0o755)               // control: a link to a clean directory
	os.Symlink("../clean", filepath.Join(e.ws, "ok", "l"))   //
	os.Mkdir(filepath.Join(e.ws, "loop"), 0o755)             // a cycle: the walk ends
	os.Symlink("..", filepath.Join(e.ws, "loop", "up"))      // (it leads to the root, which holds vendor)
	os.Mkdir(filepath.Join(e.ws, "out"), 0o755)              // a link out of the workspace: not walked
	os.Symlink(filepath.Dir(outsideFile), filepath.Join(e.ws, "out", "l"))
	checkHardLinkCases(t, e, outsideFile, []hardLinkCase{
		{"grep", []string{"-R", "s3cret", "sub"}, true},
		{"grep", []string{"--dereference-recursive", "s3cret", "sub"}, true},
		{"diff", []string{"-r", "sub", "clean"}, true},
		{"grep", []string{"-R", "s3cret", "loop"}, true},
		{"grep", []string{"-R", "a", "ok"}, false},  // control: the linked directory is clean
		{"grep", []string{"-R", "a", "out"}, false}, // control: outside, the kernel's to refuse
	})
	// through a call: grep -R must not print the outside file's content
	args, _ := json.Marshal(map[string]any{"command": "grep", "args": []string{"-R", "s3cret", "sub"}})
	res, err := e.run(context.Background(), executor.Call{Args: args, Timeout: 10 * time.Second, MaxOutput: 64 << 10})
	if err == nil && strings.Contains(res.Stdout, "s3cret") {
		t.Fatalf("grep -R read the file outside the workspace through sub/l: %q", res.Stdout)
	}
	var ref *executor.Refusal
	if !errors.As(err, &ref) || ref.Rule != "allowlist.hardlinks" {
		t.Fatalf("grep -R sub: want the hard-link refusal, got %v %+v", err, res)
	}
}

// A program without an option model (cp, allowlisted by init's --allow) may read any directory
// it is given whole; its arguments are judged as writes, and a write's check did not look for
// hard links below a directory (attack round atk19c): cp -r vendor copy copied vendor/pkg/x, a
// hard link to a file outside the workspace, into copy/pkg/x, a file of one link any command
// then reads. (tar, zip and cpio are interpreters: their calls hide hard-linked files.)
func TestHardLinkBelowDirectoryUnmodelled(t *testing.T) {
	if _, err := os.Stat("/usr/bin/cp"); err != nil {
		t.Skip("no /usr/bin/cp")
	}
	e := pythonExecutor(t, nil, false, "/usr/bin/cp") // allowlisted as "self"
	outsideFile := hardLinkWorkspace(t, e)
	e.cmds["cp"] = e.cmds["self"]
	checkHardLinkCases(t, e, outsideFile, []hardLinkCase{
		{"cp", []string{"-r", "vendor", "copy"}, true},
		{"cp", []string{"-r", ".", "copy"}, true},
		{"cp", []string{"-r", "clean", "copy"}, false}, // control: no hard link below
	})
	args, _ := json.Marshal(map[string]any{"command": "self", "args": []string{"-r", "vendor", "copy"}})
	res, err := e.run(context.Background(), executor.Call{Args: args, Timeout: 10 * time.Second, MaxOutput: 64 << 10})
	if b, _ := os.ReadFile(filepath.Join(e.ws, "copy", "pkg", "x")); strings.Contains(string(b), "s3cret") {
		t.Fatalf("cp copied the file outside the workspace into it, through its hard link in vendor")
	}
	var ref *executor.Refusal
	if !errors.As(err, &ref) || ref.Rule != "allowlist.hardlinks" {
		t.Fatalf("cp -r vendor copy: want the hard-link refusal, got %v %+v", err, res)
	}
}
