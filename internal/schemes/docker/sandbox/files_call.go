package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wsfiles"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callFileTools are write_file, read_file and list_files over the workspace on serve's host
// when each call has its own container (reuse = "call"; issue 27): there is no container
// between calls to ask, and the workspace is what outlives a call. Reads stay beneath the
// workspace; a write needs docker.workspace_writable and is committed as a call's writes are
// (e.commit: the protect list, git's set-up, links out, quota, owner). A remote engine's
// workspace is not on this host: no tools.
func (e *Executor) callFileTools() []executor.Tool {
	max := int64(e.pol.Limits.MaxFileBytes)
	if max <= 0 || dksec.Of(e.pol).Sessions() || e.spec.workspace == "" || remoteEngine(e.eng.Host) {
		return nil
	}
	fs := e.callFS()
	where := fmt.Sprintf("Paths are relative to the workspace (%s in the container) and stay inside it; links are followed only while they stay inside it.", workspaceDir)
	writes := "A write is checked as a call's writes are: protected files (.git, hooks, .envrc, editor and CI config, …) are refused, and so is anything past limits.workspace_quota."
	if !e.spec.wsWrite {
		fs.ReadOnly = "docker.workspace_writable"
		writes = "The workspace is read-only (docker.workspace_writable = false): write_file is refused."
	}
	destructive := e.spec.wsWrite
	return executor.FileTools(fs, max, where, writes, &mcp.ToolAnnotations{DestructiveHint: &destructive, OpenWorldHint: new(bool)})
}

// callFS is the workspace as the file tools reach it: as the container's user (a root serve).
func (e *Executor) callFS() *wsfiles.FS {
	fs := &wsfiles.FS{Root: filepath.Clean(e.spec.workspace), SandboxPath: workspaceDir, Rule: "docker.workspace",
		CommitRule: "workspace.commit",
		Commit:     func(l *wslayer.Layer) (*executor.WorkspaceChanges, error) { return e.commit(l), nil }}
	if os.Geteuid() == 0 && !mutated("docker-files-as-serve") {
		// A root serve's tools read and write as the container's user does (a root serve's
		// tools otherwise reached root-only files its containers may not).
		// The container reaches the workspace through the engine's bind mount: the modes of
		// the host directories above it are nothing to it.
		fs.As, fs.RootAsServe = containerFileUser(e.spec.user), true
	}
	if e.spec.wsWrite {
		_, fs.Fix = e.unwritableWords(fs.As)
	}
	return fs
}

// WorkspaceUnwritable measures whether a writable workspace's files may be created by the user
// the containers and the file tools run as (executor.WorkspaceChecker): why not, and the fix. A
// remote engine's workspace is not on this host: nothing to measure.
func (e *Executor) WorkspaceUnwritable() (why, fix string) {
	if e.spec.workspace == "" || !e.spec.wsWrite || (e.eng != nil && remoteEngine(e.eng.Host)) || mutated("serve-workspace-unwritable-unsaid") {
		return "", ""
	}
	fs := e.callFS()
	err := fs.Writable()
	var r *executor.Refusal
	switch {
	case err == nil:
		return "", ""
	case !errors.As(err, &r):
		return fmt.Sprintf("the workspace %s could not be judged for the containers' user: %v", e.spec.workspace, err), ""
	}
	return e.unwritableWords(fs.As)
}

// unwritableWords says that the containers' user (as: the host user the file tools act as; nil:
// serve's own) may not create files in the workspace, and what lets them.
func (e *Executor) unwritableWords(as *wsfiles.User) (why, fix string) {
	uid, gid := os.Geteuid(), os.Getegid()
	if as != nil {
		uid, gid = as.UID, as.GID
	}
	ws := filepath.Clean(e.spec.workspace)
	wsUID, _, _ := owner(ws)
	var mode os.FileMode
	if fi, err := os.Stat(ws); err == nil {
		mode = fi.Mode().Perm()
	}
	who := "docker.user"
	switch {
	case e.spec.userWhy != "":
		who = "the workspace's owner"
	case e.spec.user == defaultUser:
		who = "nobody, as root owns the workspace"
	}
	return fmt.Sprintf("containers run as uid %d (%s), and so do the file tools: the workspace %s (owner uid %d, mode %v) is not theirs to write, and every write there fails",
			uid, who, ws, wsUID, mode),
		fmt.Sprintf("chown -R %d:%d %s, or set docker.user", uid, gid, shellword.Quote(ws))
}

// containerFileUser is the host uid and gid the file tools act as for the container user u
// ("uid[:gid]"): nil for root (the tools need no other user), and nobody (65534) for what only
// the image can resolve (a name: the image's /etc/passwd is not the host's) or a missing gid,
// so the tools never reach more than the container.
func containerFileUser(u string) *wsfiles.User {
	name, group, hasGroup := strings.Cut(u, ":")
	uid, err := strconv.ParseUint(name, 10, 31)
	if err != nil {
		return &wsfiles.User{UID: nobody, GID: nobody}
	}
	gid, err := strconv.ParseUint(group, 10, 31)
	if !hasGroup || err != nil {
		gid = nobody
	}
	if uid == 0 {
		return nil
	}
	return &wsfiles.User{UID: int(uid), GID: int(gid)}
}

// nobody is the uid and gid of no one's files.
const nobody = 65534
