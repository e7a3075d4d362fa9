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

// CutRecord is what a "cut" marker names: the line serve last wrote (its hash and the log's
// length after it, from the anchor) and the file as serve found it (its length and the hash
// its last line chains on with), which no longer held that line there (atk38b F1).
type CutRecord struct {
	Anchored ChainLink `json:"anchored"`
	Found    ChainLink `json:"found"`
}

// reason words c for the marker's reason field.
func (c *CutRecord) reason(path string) string {
	what := fmt.Sprintf("the file was %d bytes, shorter", c.Found.Bytes)
	if c.Found.Bytes >= c.Anchored.Bytes {
		what = fmt.Sprintf("the file was %d bytes, and the line ending at byte %d is not that one", c.Found.Bytes, c.Anchored.Bytes)
	}
	return fmt.Sprintf("the log was cut: serve's anchor %s says the last line serve wrote here (sha256 %s) ended at byte %d; %s: "+
		"lines serve wrote were removed from its end, or the file was replaced, and what was there is not in this file "+
		"(look for a copy ending with that hash). This marker chains on from the file's last line (%s); run `mcpsandbox audit verify` on %s",
		AnchorPath(path), c.Anchored.Head, c.Anchored.Bytes, what, c.Found.Head, path)
}

// checkAnchor is nil when the log f, found found bytes long with foundHead the hash its next
// line chains on, still holds the line anchor a names where a says (a crash between a line and
// its anchor, or lines appended after it, leave that so); else what the cut marker names. Nothing
// is compared without an anchor or in an empty file: a rotation empties the log as a cut does,
// and the new chain's first line names the anchored head (continues), which verify reports when
// the history it continues is not given.
func checkAnchor(f *os.File, a *Anchor, found int64, foundHead string) (*CutRecord, error) {
	if a == nil || a.Bytes == 0 || found == 0 || (found == a.Bytes && foundHead == a.Head) {
		return nil, nil
	}
	cut := &CutRecord{Anchored: ChainLink{Head: a.Head, Bytes: a.Bytes}, Found: ChainLink{Head: foundHead, Bytes: found}}
	if found < a.Bytes {
		return cut, nil
	}
	var nl [1]byte
	if _, err := f.ReadAt(nl[:], a.Bytes-1); err != nil {
		return nil, fmt.Errorf("read audit log at its anchor: %w", err)
	}
	if nl[0] != '\n' {
		return cut, nil
	}
	start, err := lineStart(f, a.Bytes-1)
	if err != nil {
		return nil, err
	}
	n := a.Bytes - 1 - start
	if n > maxParse {
		return cut, nil
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, start); err != nil {
		return nil, fmt.Errorf("read audit log at its anchor: %w", err)
	}
	if h, _ := checkEntry(b); h != a.Head {
		return cut, nil
	}
	return nil, nil
}
