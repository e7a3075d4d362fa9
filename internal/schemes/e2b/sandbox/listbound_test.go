package sandbox

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
)

// TestHostileListAtStart: the start-up sweep lists sandboxes; an API that answers every page
// with 8 MiB of sandboxes (none of them serve's) and a next-page token made serve hold all
// (up to 50) pages at once, decoded: 640 MiB of heap at start. The pages are now dropped as they are read.
func TestHostileListAtStart(t *testing.T) {
	f := newFake(t)
	// One page: sandboxes with large metadata, none labelled by this host's serves.
	val := strings.Repeat("v", 4000)
	var b strings.Builder
	b.WriteString("[")
	for i := 0; b.Len() < 8<<20-16<<10; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"sandboxID":"x%d","templateID":"t","state":"running","metadata":{"a":"%s","b":"%s"}}`, i, val, val)
	}
	b.WriteString("]")
	page := b.String()
	var pages atomic.Int32
	f.SetFault(&e2bfake.Fault{Scope: "api", Handler: func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/sandboxes" {
			http.Error(w, "not here", http.StatusNotFound)
			return
		}
		n := pages.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if n < 16 { // 16 pages of 8 MiB: past heapBound if held, and quick enough under -race
			w.Header().Set("X-Next-Token", fmt.Sprint("p", n))
		}
		w.Write([]byte(page))
	}})
	// Every page read whatever the machine's load (CI read 7 of 16 in the 30 s sweep under
	// -race beside other packages' tests): the bound is what is measured here, not the time.
	defer func(d time.Duration) { reapTimeout = d }(reapTimeout)
	reapTimeout = 5 * time.Minute
	runtime.GC()
	peak := heapWatch(1<<40, func() {}, func() {
		sweep(t, f, map[string]string{keyEnv: testKey, "E2B_API_URL": f.URL(), "E2B_SANDBOX_URL": f.URL()}, nil)
	})
	t.Logf("%d pages of %d MiB listed at start; heap in use peaked at %d MiB (bound %d MiB)", pages.Load(), len(page)>>20, peak>>20, heapBound>>20)
	if pages.Load() != 16 {
		t.Fatalf("the sweep read %d pages, not 16: the test did not test the bound", pages.Load())
	}
	if peak > heapBound {
		t.Fatalf("heap in use reached %d MiB: the list's pages were held, not dropped as they were read", peak>>20)
	}
}
