package serve

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/bounds"
)

// LimitLog passes at most bounds.MaxLogLines records to h in any bounds.LogWindow (a window
// opens with the first record after the last one closed); the rest are dropped and counted,
// and the first record of the next window is preceded by a warning saying how many were
// dropped. Every logger made from the result (With, WithGroup) shares the one count.
func LimitLog(h slog.Handler) slog.Handler {
	return &limitHandler{h: h, st: &logCount{now: time.Now}}
}

type logCount struct {
	mu         sync.Mutex
	now        func() time.Time
	start      time.Time
	n, dropped int
}

type limitHandler struct {
	h  slog.Handler
	st *logCount
}

func (l *limitHandler) Enabled(ctx context.Context, lv slog.Level) bool { return l.h.Enabled(ctx, lv) }

func (l *limitHandler) Handle(ctx context.Context, r slog.Record) error {
	if mutated("log-line-rate") {
		return l.h.Handle(ctx, r)
	}
	st := l.st
	st.mu.Lock()
	now := st.now()
	dropped := 0
	if now.Sub(st.start) >= bounds.LogWindow {
		dropped, st.start, st.n, st.dropped = st.dropped, now, 0, 0
	}
	if st.n >= bounds.MaxLogLines {
		st.dropped++
		st.mu.Unlock()
		return nil
	}
	st.n++
	st.mu.Unlock()
	if dropped > 0 {
		note := slog.NewRecord(now, slog.LevelWarn, fmt.Sprintf("%d log lines dropped: more than %d in %s", dropped, bounds.MaxLogLines, bounds.LogWindow), 0)
		_ = l.h.Handle(ctx, note)
	}
	return l.h.Handle(ctx, r)
}

func (l *limitHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &limitHandler{h: l.h.WithAttrs(as), st: l.st}
}

func (l *limitHandler) WithGroup(name string) slog.Handler {
	return &limitHandler{h: l.h.WithGroup(name), st: l.st}
}
