package wslayer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tsPathsProject writes a workspace whose protected TypeScript program (started by tsx) names
// n specifiers, each an alias of a tsconfig whose "paths" holds k patterns (atk39b F5's
// tsconfig form: each specifier without an exact key was compared with every key).
func tsPathsProject(t *testing.T, k, n int) string {
	t.Helper()
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "npx", "args": ["tsx", "server/index.ts"]}}}`)
	paths := map[string][]string{}
	for i := range k {
		paths[fmt.Sprintf("@p%d/*", i)] = []string{fmt.Sprintf("./x%d/*", i)}
	}
	b, err := json.Marshal(map[string]any{"compilerOptions": map[string]any{"paths": paths}})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "server", "tsconfig.json"), string(b))
	var src strings.Builder
	for i := range n {
		fmt.Fprintf(&src, "import '@p%d/m%d';\n", i%k, i)
	}
	write(t, filepath.Join(ws, "server", "index.ts"), src.String())
	return ws
}

// The follower's cost over a tsconfig's "paths", measured (not a check: run with
// MCPSANDBOX_FOLLOW_MEASURE=1; MCPSANDBOX_TS_K and MCPSANDBOX_TS_N set the patterns and the
// specifiers, 25,000 and 32,000 by default): prints one commit's time.
func TestFollowerTsPathsMeasure(t *testing.T) {
	if os.Getenv("MCPSANDBOX_FOLLOW_MEASURE") == "" {
		t.Skip("a measurement: MCPSANDBOX_FOLLOW_MEASURE=1")
	}
	t.Setenv("HOME", t.TempDir())
	k, n := 25000, 32000
	fmt.Sscan(os.Getenv("MCPSANDBOX_TS_K"), &k)
	fmt.Sscan(os.Getenv("MCPSANDBOX_TS_N"), &n)
	ws := tsPathsProject(t, k, n)
	start := time.Now()
	applied, why, _ := commitOne(t, ws, "notes/todo.md", "ok\n")
	t.Logf("k=%d n=%d: commit %.2fs, applied %v (%.160s)", k, n, time.Since(start).Seconds(), applied, why)
}
