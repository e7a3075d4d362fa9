package generate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// WriteResult says what WriteFileSafely did.
type WriteResult struct {
	Path   string
	Backup string // "" when there was no file before
	Mode   fs.FileMode
}

// WriteFileSafely replaces path with data without ever leaving it half-written: it backs the old
// file up beside it (path.bak-TIMESTAMP), writes a temporary file in the same directory with the
// old file's permissions (mode for a new file), syncs it and renames it over path. A file that is
// read-only to us is refused rather than replaced: the rename would succeed, but the owner's
// intent was that nobody writes it.
func WriteFileSafely(path string, data []byte, mode fs.FileMode) (WriteResult, error) {
	res := WriteResult{Path: path, Mode: mode}
	old, err := os.Stat(path)
	switch {
	case err == nil:
		if !old.Mode().IsRegular() {
			return res, fmt.Errorf("%s is not a regular file: move it aside, then run init again", path)
		}
		// No owner write bit means "do not write" even to root, whom access(2) would let through.
		if old.Mode().Perm()&0o200 == 0 || unix.Access(path, unix.W_OK) != nil {
			return res, fmt.Errorf("%s is read-only: make it writable (chmod u+w %s) or use --print and add the entry by hand", path, path)
		}
		res.Mode = old.Mode().Perm()
		prev, err := os.ReadFile(path)
		if err != nil {
			return res, fmt.Errorf("read %s for its backup: %w", path, err)
		}
		res.Backup = path + ".bak-" + time.Now().Format("20060102-150405")
		if err := os.WriteFile(res.Backup, prev, res.Mode); err != nil {
			return res, fmt.Errorf("back up %s: %w (nothing was changed)", path, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return res, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
		}
	default:
		return res, fmt.Errorf("check %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return res, fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(res.Mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return res, fmt.Errorf("write %s: %w (the old file is unchanged)", path, err)
	}
	return res, nil
}
