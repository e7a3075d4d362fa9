//go:build !unix

package serve

import (
	"io"
	"os"
)

// stdinReader is serve's stdin for a stdio session (see stdin_unix.go).
func stdinReader() io.ReadCloser { return os.Stdin }
