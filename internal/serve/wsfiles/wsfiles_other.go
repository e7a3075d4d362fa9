//go:build !linux

package wsfiles

import (
	"context"
	"errors"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

var errUnsupported = errors.New("the workspace file tools need Linux (openat2, and the transactional workspace's overlay layers)")

func (f *FS) write(ctx context.Context, p, rel string, data []byte) (*executor.Result, error) {
	return nil, errUnsupported
}

func (f *FS) read(p, rel string, limit int64) ([]byte, int64, error) { return nil, 0, errUnsupported }

func (f *FS) list(p, rel string) ([]executor.FileEntry, int, error) { return nil, 0, errUnsupported }

func (f *FS) asUser(fn func(*FS) error) error { return fn(f) }

// Writable: the tools do not run on this OS (every write is refused, with errUnsupported).
func (f *FS) Writable() error { return nil }
