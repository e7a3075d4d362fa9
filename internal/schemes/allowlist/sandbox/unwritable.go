package sandbox

import (
	"fmt"
	"io/fs"
	"strconv"

	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
)

// Unwritable is what verify (MS113) and serve (its start log, --check, a refused write) say of a
// workspace ws (owner uid owner, mode mode) that the user the calls run as (uid, gid) may not
// create files in: why every write fails, and what lets them. root: serve is root (the calls then
// run as another user); user: allowlist.user chose that one.
func Unwritable(ws string, owner int, mode fs.FileMode, uid, gid int, root, user bool) (why, fix string) {
	q := shellword.Quote(ws)
	switch {
	case !root:
		return fmt.Sprintf("commands and the file tools run as you (uid %d) when serve is not root: the workspace %s (owner uid %d, mode %v) is not yours to write, and every write there fails",
				uid, ws, owner, mode),
			"use a directory of yours (mkdir -p ~/ai-workspace), or have its owner let you write it"
	case uid == 65534 && !user:
		return fmt.Sprintf("under root, commands run as nobody (65534), and so do the file tools: the workspace %s (owner uid %d, mode %v) is not theirs to write, and every write there fails",
				ws, owner, mode),
			"chown -R 65534:65534 " + q + ", or set allowlist.user"
	}
	who := "the workspace's owner"
	if user {
		who = "allowlist.user"
	}
	fix = "chown -R " + strconv.Itoa(uid) + ":" + strconv.Itoa(gid) + " " + q
	if owner == uid {
		fix = "chmod u+rwx " + q
	}
	return fmt.Sprintf("under root, commands run as uid %d (%s), and so do the file tools: the workspace %s (owner uid %d, mode %v) is not theirs to write, and every write there fails",
		uid, who, ws, owner, mode), fix + ", or set allowlist.user"
}
