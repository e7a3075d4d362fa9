package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Anchor is serve's record, kept outside the log, of the last line it wrote there: that line's
// hash and the log's byte length after it. It lives beside the log as .<name>.anchor (found
// from the log's path by verify, whoever runs it; a rotation pattern such as *.jsonl does not
// take it). With it, verify tells a log cut short (lines removed from its end, emptied in
// place, rotated) from one that ends where serve left it, and a new chain's first line names
// the head before it (ChainLink), so rotated files verify as one history (trial38 F5: an
// emptied log verified "intact"). It proves nothing against someone who rewrites it too.
type Anchor struct {
	Head  string `json:"head"`
	Bytes int64  `json:"bytes"`
}

// AnchorPath is where serve keeps the anchor of the log at path.
func AnchorPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".anchor")
}

// ReadAnchor is the anchor of the log at path: nil, nil when there is none (serve has not
// written that log since anchors were kept).
func ReadAnchor(path string) (*Anchor, error) {
	f, err := os.OpenFile(AnchorPath(path), os.O_RDONLY|openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read serve's anchor of %s: %w", path, err)
	}
	defer f.Close()
	var a Anchor
	b := make([]byte, 4096)
	n, _ := f.Read(b)
	if err := json.Unmarshal(b[:n], &a); err != nil || len(a.Head) != 64 || a.Bytes < 0 {
		return nil, fmt.Errorf("serve's anchor %s of %s is not one serve wrote (cut short by a crash, or edited)", AnchorPath(path), path)
	}
	return &a, nil
}

// writeAnchor records a as the log's anchor in af (opened by openAnchor, nil: none): one write
// of a record of fixed length at offset 0, the number padded, so no truncation is needed. Called
// under the log's lock after each append; a failure leaves the log as it is (verify then says
// what the anchor cannot show).
func writeAnchor(af *os.File, a Anchor) {
	if af == nil {
		return
	}
	b := fmt.Appendf(nil, `{"head":%q,"bytes":%-20d}`+"\n", a.Head, a.Bytes)
	_, _ = af.WriteAt(b, 0)
}

// openAnchor opens (creating 0600) the anchor of the log at path for writeAnchor; nil when it
// cannot be (not a regular file, no permission).
func openAnchor(path string) *os.File {
	f, err := os.OpenFile(AnchorPath(path), os.O_WRONLY|os.O_CREATE|openFlags, 0o600)
	if err != nil {
		return nil
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		_ = f.Close()
		return nil
	}
	holdShared(f)
	return f
}
