package testenv

import (
	"strings"
	"sync"
)

// LockedBuffer collects what goroutines write at once (a process's stderr copied by exec, a
// log), for a test to read.
type LockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
