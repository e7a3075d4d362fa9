package generate

import "golang.org/x/sys/unix"

// swap exchanges the files at a and b in one step (renamex_np RENAME_SWAP); see swap_linux.go.
func swap(a, b string) (ok bool, err error) {
	err = unix.RenamexNp(a, b, unix.RENAME_SWAP)
	if err == unix.EINVAL || err == unix.ENOTSUP {
		return false, nil
	}
	return err == nil, err
}

// renameNew renames a to b only if b does not exist (RENAME_EXCL); see swap_linux.go.
func renameNew(a, b string) (ok bool, err error) {
	err = unix.RenamexNp(a, b, unix.RENAME_EXCL)
	if err == unix.EINVAL || err == unix.ENOTSUP {
		return false, nil
	}
	return err == nil, err
}
