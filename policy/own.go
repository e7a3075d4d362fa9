package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/xdg"
)

// CheckOwnFiles refuses a workspace (ws, a policy's WorkspaceDir) that holds serve's own files:
// the policy file (policyFile) and the audit log (auditPath), given as serve will use them. Calls write in the workspace
// (their commands through the layer's commit, the file tools directly), so a policy there could
// be rewritten to allow more at the next start, and an audit log there erased or forged, with
// `audit verify` calling the rest intact. Links are followed on both sides; a file not made yet
// (the audit log before the first start) is judged by where it will be.
func CheckOwnFiles(ws, policyFile, auditPath string) error {
	return CheckOwnFilesIn(ws, "the workspace", "calls write", policyFile, auditPath)
}

// CheckOwnFilesIn is CheckOwnFiles for any directory sandboxed code may write in (dir, named by
// place, e.g. "the wrap.write directory"; writer says who writes there, e.g. "calls write").
func CheckOwnFilesIn(dir, place, writer, policyFile, auditPath string) error {
	if dir == "" || mutated("serve-own-files-in-workspace") {
		return nil
	}
	dirReal := RealPath(dir)
	for _, f := range []struct{ what, path, fix string }{
		{"the policy file", policyFile, "move the policy outside " + place + " (mcpsandbox init --policy-out FILE writes it elsewhere)"},
		{"the audit log", auditPath, auditFix(auditPath, place)},
	} {
		if f.path == "" {
			continue
		}
		r := RealPath(f.path)
		same, in := withinSame(dir, r) // a bind mount of dir is dir too
		if in || within(dirReal, r) {
			if same != "" && !within(dirReal, r) {
				same = " (" + same + " is the same directory as " + dir + ")"
			} else {
				same = ""
			}
			return refusedWithFix(fmt.Sprintf("%s %s lies inside %s %s%s, where %s: it could be rewritten (%s)",
				f.what, f.path, place, dir, same, writer, map[bool]string{true: "and so what the next start allows", false: "and so the record of every call"}[f.what == "the policy file"]), f.fix)
		}
	}
	return nil
}

// auditFix is how to move the audit log out of place: "" (the default) is offered only when the
// log is not already there (trial33 F5: the fix offered the default it was refused in).
func auditFix(auditPath, place string) string {
	home, _ := os.UserHomeDir()
	if home != "" && RealPath(auditPath) == RealPath(DefaultAuditPath(home)) {
		return "set audit.path to a file outside " + place + " (it is the default path, which lies there, whether written out or not), or give a directory that does not hold it"
	}
	return `set audit.path to a file outside ` + place + ` (or "" for the default under $XDG_STATE_HOME), or give a directory that does not hold it`
}

// CheckAuditNotReadIn refuses an audit log inside a directory sandboxed code may read (dirs,
// the policy's ReadDirs; key names them, e.g. "allowlist.read_paths"): the log holds every
// call's arguments and output, other sessions' included. Serve's own uid is the commands' uid
// when serve is not root, so file modes do not keep them out.
func CheckAuditNotReadIn(dirs []string, key, auditPath string) error {
	if auditPath == "" || mutated("serve-audit-readable") {
		return nil
	}
	r := RealPath(auditPath)
	for i, d := range dirs {
		if _, in := withinSame(d, r); d != "" && (within(RealPath(d), r) || in) {
			return refusedWithFix(fmt.Sprintf("the audit log %s lies inside %s[%d] = %s, which sandboxed code reads: every call's record, other sessions' arguments and outputs included, would be readable",
				auditPath, key, i, d), strings.Replace(auditFix(auditPath, "it"), "give a directory that does not hold it", "narrow "+key+" to the directories commands need", 1))
		}
	}
	return nil
}

// RealPath is p with every link on its way followed, as far as it exists: a file not made yet
// is its directory's real path joined with its name.
func RealPath(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if d := filepath.Dir(p); d != p {
		return filepath.Join(RealPath(d), filepath.Base(p))
	}
	return p
}

// within says whether p is dir or below it.
func within(dir, p string) bool {
	if dir == p {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// DefaultAuditPath is where audit.path "" puts the log: $XDG_STATE_HOME/mcpsandbox/audit.jsonl,
// or, with that unset (or not absolute), under home's .local/state.
func DefaultAuditPath(home string) string {
	dir := xdg.Dir("XDG_STATE_HOME")
	if dir == "" {
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "mcpsandbox", "audit.jsonl")
}
