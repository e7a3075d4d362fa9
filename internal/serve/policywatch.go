package serve

import (
	"log/slog"
	"os"
	"sync"
	"time"
)

// policyWatch notices a policy file edited, replaced or removed after serve read it: serve
// keeps the policy it started with (a client's server is restarted by the client), and an
// edit that changed nothing in effect left the user retrying under the old one with no word
// (trial39 F3). It says so once in serve's log, looking at most once a second, off no path a
// call waits on.
type policyWatch struct {
	path string
	log  *slog.Logger
	mu   sync.Mutex
	seen os.FileInfo // at start; nil: not there then (nothing to compare)
	last time.Time   // the last look
	told bool
}

// policyLookEvery is how often at most the policy file is looked at (a test shortens it).
var policyLookEvery = time.Second

func newPolicyWatch(path string, log *slog.Logger) *policyWatch {
	if path == "" {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return &policyWatch{path: path, log: log, seen: st, last: time.Now()}
}

// look compares the file with what serve read, at most once a second, and logs its change once.
func (w *policyWatch) look() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.told || time.Since(w.last) < policyLookEvery {
		return
	}
	w.last = time.Now()
	st, err := os.Stat(w.path)
	switch {
	case err != nil:
		w.told = !mutated("policy-change-unsaid")
		if w.told {
			w.log.Warn("policy file gone since serve started: this serve keeps the policy it started with; restart the server in your client once the file is back",
				"policy", w.path, "err", err)
		}
	case st.Size() != w.seen.Size() || !st.ModTime().Equal(w.seen.ModTime()) || !os.SameFile(st, w.seen):
		w.told = !mutated("policy-change-unsaid")
		if w.told {
			w.log.Warn("policy file changed since serve started: this serve keeps the policy it started with; restart the server in your client to use the new one (and `mcpsandbox verify --policy FILE` first)",
				"policy", w.path)
		}
	}
}
