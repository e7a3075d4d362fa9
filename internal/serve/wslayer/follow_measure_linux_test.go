package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The follower's worst case, measured (not a check: run with MCPSANDBOX_FOLLOW_MEASURE=1): a
// protected program set that fills the reads' bound, 64 MiB, each file read whole, of the
// specifier shapes that cost the follower most (a distinct relative require each line, past
// the paths' bound; a subpath import, a self-reference, a computed require each line). Prints
// the commit's time and the bytes allocated.
func TestFollowerWorstCaseMeasure(t *testing.T) {
	if os.Getenv("MCPSANDBOX_FOLLOW_MEASURE") == "" {
		t.Skip("a measurement: MCPSANDBOX_FOLLOW_MEASURE=1")
	}
	t.Setenv("HOME", t.TempDir())
	shapes := map[string]func(i int) string{
		"relative": func(i int) string { return fmt.Sprintf("require('./r%07d.js');\n", i) },
		"same":     func(i int) string { return "require('./same.js');\n" },
		"subpath":  func(i int) string { return fmt.Sprintf("require('#i%07d');\n", i) },
		"selfref":  func(i int) string { return fmt.Sprintf("require('srv/s%07d');\n", i) },
		"computed": func(i int) string { return fmt.Sprintf("require(p%07d);\n", i) },
		"bare":     func(i int) string { return fmt.Sprintf("require('b%07d');\n", i) },
	}
	for _, name := range []string{"same", "relative", "bare", "subpath", "selfref", "computed"} {
		if only := os.Getenv("MCPSANDBOX_FOLLOW_SHAPE"); only != "" && only != name {
			continue
		}
		ws := t.TempDir()
		var args []string
		for k := range 8 {
			var b strings.Builder
			for i := 0; b.Len() < maxProgramFile-64; i++ {
				b.WriteString(shapes[name](k<<20 + i))
			}
			write(t, filepath.Join(ws, "srv", fmt.Sprintf("f%d.js", k)), b.String())
			args = append(args, fmt.Sprintf("%q", fmt.Sprintf("srv/f%d.js", k)))
		}
		write(t, filepath.Join(ws, "srv", "package.json"), `{"name": "srv", "imports": {"#i*": "./lib/*.js"}, "exports": {"./*": "./lib/*.js"}}`)
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "node", "args": [`+strings.Join(args, ", ")+`]}}}`)
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		applied, why, _ := commitOne(t, ws, "notes/todo.md", "ok\n")
		d := time.Since(start)
		runtime.ReadMemStats(&m1)
		t.Logf("%-9s commit %.2fs, allocated %d MiB, heap now %d MiB, applied %v (%.120s)", name, d.Seconds(),
			(m1.TotalAlloc-m0.TotalAlloc)>>20, m1.HeapInuse>>20, applied, why)
	}
}
