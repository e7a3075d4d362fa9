// Package wsfiles is the file tools' view of a workspace directory on serve's host
// (executor.FileSystem, issue 27): reads and listings never leave the workspace (no link
// followed out of it, no FIFO, device or socket opened), and a write is applied exactly as a
// call's writes are: put in a layer of its own and committed by internal/serve/wslayer, each change
// checked against the scheme's rules (protected names, git's set-up, links out, quota, owner).
// So write_file can do nothing a command could not.
package wsfiles

import (
	"context"
	"path"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
)

// FS is a workspace's files.
type FS struct {
	// Root is the workspace on serve's host (absolute).
	Root string
	// SandboxPath is the workspace's path as the sandbox names it (the allowlist: Root; docker:
	// /workspace): an absolute path argument must lie under it.
	SandboxPath string
	// Rule names the rule a path outside the workspace breaks (allowlist.workspace, docker.workspace).
	Rule string
	// ReadOnly, when set, refuses every write naming this rule (docker.workspace_writable).
	ReadOnly string
	// HardLinks, when set, refuses reading a regular file with more than one hard link, naming
	// this rule: another name of it may lie outside the workspace (allowlist.hardlinks).
	HardLinks string
	// CommitRule names the rule a write the commit refused breaks (allowlist.protect).
	CommitRule string
	// Commit applies a write's layer to the workspace, with the scheme's rules (it removes the
	// layer). Nil: writes are refused.
	Commit func(l *wslayer.Layer) (*executor.WorkspaceChanges, error)
	// As, when set, is the user the tools read, list and may write as: the commands' (a root
	// serve's run as an unprivileged uid). A root serve's file tools otherwise read, listed and
	// wrote what its commands may not (attack round atk24c, F7). Nil: serve's own.
	As *User
	// RootAsServe: the As user reaches the workspace's root as serve does (docker: through the
	// engine's bind mount, whatever the modes of the directories above it on the host); only
	// what lies below the root is judged as As.
	RootAsServe bool
	// Fix, when set, is what lets the tools' user (and the calls') create files in the workspace,
	// said with a refusal for want of permission: it said "(its owner or mode)" and nothing to
	// do, where verify and init name the chown (trial48 F2).
	Fix string
	// rootFD, in a copy asUser makes when RootAsServe, is the root opened as serve, plus one
	// (0: none; open opens Root by its path).
	rootFD int
}

// User is a uid and gid the file tools act as (FS.As).
type User struct{ UID, GID int }

var _ executor.FileSystem = (*FS)(nil)

// rel is p as a slash path from the workspace root ("." for the root), or a refusal: a path
// that leaves the workspace, absolute or by "..", names nothing of it.
func (f *FS) rel(p string, empty bool) (string, error) {
	if p == "" && empty {
		return ".", nil
	}
	if path.IsAbs(p) {
		root := path.Clean(f.SandboxPath)
		c := path.Clean(p)
		if f.SandboxPath == "" || c != root && !strings.HasPrefix(c, strings.TrimSuffix(root, "/")+"/") {
			return "", executor.Refuse(f.Rule, "%q is outside the workspace (%s): give a path relative to the workspace, or under %s", p, f.SandboxPath, f.SandboxPath)
		}
		p = strings.TrimPrefix(strings.TrimPrefix(c, root), "/")
		if p == "" {
			return ".", nil
		}
	}
	c := path.Clean(p)
	if (c == ".." || strings.HasPrefix(c, "../")) && !mutated("files-path-containment") {
		return "", executor.Refuse(f.Rule, "%q leads out of the workspace: paths are relative to the workspace and stay inside it", p)
	}
	return c, nil
}

// WriteFile implements executor.FileSystem.
func (f *FS) WriteFile(ctx context.Context, c executor.Call, p string, data []byte) (*executor.Result, error) {
	if f.ReadOnly != "" {
		return nil, executor.Refuse(f.ReadOnly, "the workspace is read-only for this sandbox: write_file cannot change it")
	}
	rel, err := f.rel(p, false)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return nil, executor.Refuse(executor.RuleFilePath, "%q is the workspace itself: name a file in it", p)
	}
	return f.write(ctx, p, rel, data)
}

// ReadFile implements executor.FileSystem.
func (f *FS) ReadFile(ctx context.Context, c executor.Call, p string, max int64) ([]byte, int64, error) {
	rel, err := f.rel(p, false)
	if err != nil {
		return nil, 0, err
	}
	var data []byte
	var size int64
	err = f.asUser(func(f *FS) error {
		data, size, err = f.read(p, rel, max)
		return err
	})
	return data, size, err
}

// ListFiles implements executor.FileSystem.
func (f *FS) ListFiles(ctx context.Context, c executor.Call, p string) ([]executor.FileEntry, int, error) {
	rel, err := f.rel(p, true)
	if err != nil {
		return nil, 0, err
	}
	var ents []executor.FileEntry
	var more int
	err = f.asUser(func(f *FS) error {
		ents, more, err = f.list(p, rel)
		return err
	})
	return ents, more, err
}

// fix is Fix as the tail of a refusal ("" when none).
func (f *FS) fix() string {
	if f.Fix == "" || mutated("files-unwritable-no-fix") {
		return ""
	}
	return "; to let them: " + f.Fix
}
