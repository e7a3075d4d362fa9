// Package tomlbound checks TOML text against fixed bounds before a parser sees it.
// BurntSushi/toml takes memory quadratic in the nesting depth of inline tables and arrays (a
// 40 KB file of 10 000 nested inline tables ran out of 3 GB), so the depth is measured first by
// a cheap byte scan, and a file is read only up to a size bound (ReadRegular).
package tomlbound

import (
	"errors"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/fsmode"
	"io"
	"os"
	"syscall"
)

// MaxDepth bounds how deeply inline tables and arrays may nest in a TOML file mcpsandbox reads
// (a table header [a] or [[a]] counts as one or two levels while it is read). No policy or
// client config needs more than a handful.
const MaxDepth = 64

// DepthError is TOML text nested past a bound, at the line where it went past.
type DepthError struct {
	Line, Max int
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("inline tables and arrays nest more than %d deep (the most mcpsandbox reads): write fewer levels, e.g. use [table] headers instead of nested { }", e.Max)
}

// CheckDepth returns a *DepthError when the inline tables and arrays of data nest more than max
// deep. Brackets inside strings (basic, literal and their multi-line forms) and comments do not
// count. It does not validate the TOML: a file it passes may still not parse.
func CheckDepth(data []byte, max int) error {
	depth, line := 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
		case '#':
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			i, line = skipString(data, i, line)
		case '[', '{':
			depth++
			if depth > max {
				return &DepthError{Line: line, Max: max}
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// skipString returns the index of the last byte of the string that opens at data[i] and the
// line it ends on. A single-line string ends at its quote or at the end of the line (where it is
// a syntax error the parser will report); a multi-line one at its closing triple quote.
func skipString(data []byte, i, line int) (int, int) {
	q := data[i]
	escapes := q == '"'
	if i+2 < len(data) && data[i+1] == q && data[i+2] == q {
		for j := i + 3; j < len(data); j++ {
			switch {
			case data[j] == '\n':
				line++
			case escapes && data[j] == '\\':
				if j+1 < len(data) && data[j+1] == '\n' {
					line++
				}
				j++
			case data[j] == q && j+2 < len(data) && data[j+1] == q && data[j+2] == q:
				// up to two more quotes may close it: """a"""" is the string a"
				j += 2
				for k := 0; k < 2 && j+1 < len(data) && data[j+1] == q; k++ {
					j++
				}
				return j, line
			}
		}
		return len(data), line
	}
	for j := i + 1; j < len(data); j++ {
		switch {
		case data[j] == '\n':
			return j - 1, line // the newline is counted by the caller
		case escapes && data[j] == '\\':
			if j+1 < len(data) && data[j+1] != '\n' {
				j++
			}
		case data[j] == q:
			return j, line
		}
	}
	return len(data), line
}

// ErrNotRegular is a path that exists but is not a regular file (a FIFO, a device, a
// directory): reading it could block forever or never end.
var ErrNotRegular = errors.New("not a regular file")

// TooLargeError is a file longer than the bound it is read under.
type TooLargeError struct {
	Path string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes (the most mcpsandbox reads of it): check that it is the right file", e.Path, e.Max)
}

// ReadRegular reads path, which must be a regular file (a symbolic link to one is followed) of
// at most max bytes. A FIFO or device is refused without waiting on it: it is opened
// non-blocking and checked on the open descriptor, so it cannot be swapped in between a check
// and the open. A missing file is an error that wraps fs.ErrNotExist.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		// no path: callers name it ("read PATH: …"), as they do for the os errors above
		return nil, fmt.Errorf("%w (it is %s)", ErrNotRegular, fsmode.Describe(st.Mode()))
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Path: path, Max: max}
	}
	return b, nil
}
