//go:build !unix

package generate

import (
	"io/fs"
	"os"
)

// owner: Windows files carry ACLs, which a rename in the same directory keeps for new files
// through inheritance; there is no uid to keep.
type owner struct{}

func ownerOf(fs.FileInfo) owner              { return owner{} }
func ownerOfFile(string, fs.FileInfo) owner  { return owner{} }
func links(fs.FileInfo) uint64               { return 1 }
func newFileOwner(fs.FileInfo) owner         { return owner{} }
func (owner) apply(*os.File) (string, error) { return "", nil }
func syncDir(string)                         {}

func writable(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}
