package generate

import "golang.org/x/sys/unix"

// swap exchanges the files at a and b in one step (renameat2 RENAME_EXCHANGE): after it, a
// holds what b held, so the file a write replaced can still be looked at, and put back. ok is
// false where the file system cannot (the caller renames instead).
func swap(a, b string) (ok bool, err error) {
	err = unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if err == unix.EINVAL || err == unix.ENOSYS || err == unix.ENOTSUP {
		return false, nil
	}
	return err == nil, err
}

// renameNew renames a to b only if b does not exist (RENAME_NOREPLACE): a file another
// program made there meanwhile is not replaced. ok is false where the file system cannot.
func renameNew(a, b string) (ok bool, err error) {
	err = unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_NOREPLACE)
	if err == unix.EINVAL || err == unix.ENOSYS || err == unix.ENOTSUP {
		return false, nil
	}
	return err == nil, err
}
