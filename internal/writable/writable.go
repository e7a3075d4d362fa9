// Package writable says who other than a file's owner, root and serve's user may write it, as the
// kernel judges: from the mode bits and, where the file has one, its POSIX access ACL. With an
// ACL the mode's group bits are only the ACL's mask, the most any named user or group gets, so a
// named user's write shows as group write (atk35 F2): every ownership rule (the policy file's,
// the token file's, the binaries', the read paths') asks here, so they agree.
package writable

import "fmt"

// Kind is who a Writer is.
type Kind int

const (
	Everyone Kind = iota // the mode's (or the ACL's) other bits
	Group                // the owning group, or a named group of the ACL
	User                 // a named user of the ACL
)

// A Writer is someone other than the owner, root and serve's user who may write a file.
type Writer struct {
	Kind  Kind
	ID    uint32 // the gid or uid; 0 for Everyone
	Entry string // the ACL entry that gives the write ("user:1003:rw-"); "" for the mode bits
	Fix   string // a command that takes the write away
}

// Who names the writer for a message: "writable by group 1002", "writable by uid 1003 through
// its ACL entry user:1003:rw- (the mode's group bits show only the ACL mask)".
func (w *Writer) Who() string {
	switch {
	case w.Kind == Everyone && w.Entry == "":
		return "writable by everyone"
	case w.Kind == Everyone:
		return "writable by everyone through its ACL entry " + w.Entry
	case w.Entry == "":
		return fmt.Sprintf("writable by group %d", w.ID)
	case w.Kind == Group:
		return fmt.Sprintf("writable by group %d through its ACL entry %s (the mode's group bits show only the ACL mask)", w.ID, w.Entry)
	}
	return fmt.Sprintf("writable by uid %d through its ACL entry %s (the mode's group bits show only the ACL mask)", w.ID, w.Entry)
}

// They is who could act, for a message: "anyone", "its members", "that user".
func (w *Writer) They() string {
	switch w.Kind {
	case Everyone:
		return "anyone"
	case Group:
		return "its members"
	}
	return "that user"
}
