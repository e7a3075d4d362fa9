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

// writeAnchor records a as the log's anchor. Called under the log's lock after each append; a
// failure leaves the log as it is (verify then says what the anchor cannot show).
func writeAnchor(path string, a Anchor) {
	b, _ := json.Marshal(a) // a string and a number: cannot fail
	b = append(b, '\n')
	f, err := os.OpenFile(AnchorPath(path), os.O_WRONLY|os.O_CREATE|openFlags, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return
	}
	if _, err := f.WriteAt(b, 0); err == nil {
		_ = f.Truncate(int64(len(b)))
	}
}
