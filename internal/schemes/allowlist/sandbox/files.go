//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wsfiles"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fileTools are write_file, read_file and list_files over the workspace (issue 27), when
// limits.max_file_bytes allows files: reads stay beneath the workspace, and a write is
// committed with the same checks as a command's writes (commitRules).
func (e *Executor) fileTools() []executor.Tool {
	max := int64(e.pol.Limits.MaxFileBytes)
	if max <= 0 {
		return nil
	}
	fs := e.filesFS()
	where := fmt.Sprintf("Paths are relative to the workspace (%s) and stay inside it; links are followed only while they stay inside it.", e.ws)
	writes := "A write is checked as a command's writes are: protected files (.git, hooks, .envrc, editor and CI config, …) are refused, " +
		"and so is anything past limits.workspace_quota."
	destructive := true
	return executor.FileTools(fs, max, where, writes, &mcp.ToolAnnotations{DestructiveHint: &destructive, OpenWorldHint: new(bool)})
}

// filesFS is the workspace as the file tools reach it: as the commands' user.
func (e *Executor) filesFS() *wsfiles.FS {
	fs := &wsfiles.FS{Root: e.ws, SandboxPath: e.ws, Rule: "allowlist.workspace", CommitRule: "allowlist.protect",
		Commit: func(l *wslayer.Layer) (*executor.WorkspaceChanges, error) { return l.Commit(e.commitRules()) }}
	if e.al.HardLinks != alsec.HardLinksReadOnly {
		fs.HardLinks = "allowlist.hardlinks"
	}
	if e.dropUID {
		// A root serve's commands run as an unprivileged uid: the tools read and write as it
		// does (a root serve's tools otherwise reached what its commands may not).
		fs.As = &wsfiles.User{UID: e.uid, GID: e.gid}
	}
	_, fs.Fix = e.unwritableWords()
	return fs
}

// WorkspaceUnwritable measures whether the commands' user may create files in the workspace,
// as a write_file there is judged (executor.WorkspaceChecker): why not, and the fix.
func (e *Executor) WorkspaceUnwritable() (why, fix string) {
	if mutated("serve-workspace-unwritable-unsaid") {
		return "", ""
	}
	err := e.filesFS().Writable()
	var r *executor.Refusal
	switch {
	case err == nil:
		return "", ""
	case !errors.As(err, &r):
		return fmt.Sprintf("the workspace %s could not be judged for the commands' user (uid %d): %v", e.ws, e.uid, err), ""
	}
	return e.unwritableWords()
}

// unwritableWords is what Unwritable says of this workspace for the commands' user.
func (e *Executor) unwritableWords() (why, fix string) {
	var st syscall.Stat_t
	owner, mode := -1, os.FileMode(0)
	if syscall.Stat(e.ws, &st) == nil {
		owner, mode = int(st.Uid), os.FileMode(st.Mode).Perm()
	}
	return Unwritable(e.ws, owner, mode, e.uid, e.gid, e.dropUID, e.al.User != "")
}

// commitRules are the checks a layer's commit makes on the workspace, for a call's writes and
// write_file's alike: the protect list, what the git set-up protects (core.hooksPath, included
// config files, git directories; as paths from the root too: a link the call makes must not
// move them), the workspace's owner, limits.workspace_quota and a deadline of limits.timeout.
func (e *Executor) commitRules() wslayer.Rules {
	uid, gid := -1, -1
	var st syscall.Stat_t
	if syscall.Stat(e.ws, &st) == nil {
		uid, gid = int(st.Uid), int(st.Gid)
	}
	prot := e.protection()
	protect := slices.Clip(e.protectList) // appended to below: a copy, never the shared list
	for root := range prot.roots {
		if r, err := filepath.Rel(e.ws, root); err == nil && r != "." && !strings.HasPrefix(r, "..") {
			protect = append(protect, escapeGlob(filepath.ToSlash(r)))
		}
	}
	return wslayer.Rules{Protect: protect, Quota: int64(e.pol.Limits.WorkspaceQuota), UID: uid, GID: gid, SandboxPath: e.ws,
		Extra: func(rel string) string {
			if prot.cut != "" {
				return prot.cut
			}
			return prot.match(filepath.Join(e.ws, rel))
		},
		Deadline: time.Now().Add(e.pol.Limits.Timeout.Duration), Keep: wslayer.KeepRoot()}
}
