// Package fsmode names a file's type for a message ("a FIFO (named pipe)", "a directory"): the
// one wording every refusal of a file that is not what it should be uses.
package fsmode

import "io/fs"

// Describe names the type of a file of mode m, with its article.
func Describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file (" + m.Type().String() + ")"
}
