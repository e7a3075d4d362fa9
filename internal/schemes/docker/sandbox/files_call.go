package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wsfiles"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
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
	where := fmt.Sprintf("Paths are relative to the workspace (%s in the container) and stay inside it; links are followed only while they stay inside it.", workspaceDir)
	writes := "A write is checked as a call's writes are: protected files (.git, hooks, .envrc, editor and CI config, …) are refused, and so is anything past limits.workspace_quota."
	if !e.spec.wsWrite {
		fs.ReadOnly = "docker.workspace_writable"
		writes = "The workspace is read-only (docker.workspace_writable = false): write_file is refused."
	}
	destructive := e.spec.wsWrite
	return executor.FileTools(fs, max, where, writes, &mcp.ToolAnnotations{DestructiveHint: &destructive, OpenWorldHint: new(bool)})
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
