package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// trial36 F6: docker, writable workspace, no pool: a host edit made after serve accepted the call
// but before the program in its container started (the container's creation takes 1 to 2 s) was
// overwritten by the call's write without a word ("1 change(s) applied"), while one made after
// the program started was kept as a conflict. The conflict baseline is the call's acceptance:
// the edit is kept and the conflict listed. Red with the baseline at the program's start (mutant
// docker-conflict-from-program-start).
func TestDockerEditBeforeTheProgramStartsIsAConflict(t *testing.T) {
	eng := needDocker(t)
	ws := t.TempDir()
	os.Chmod(ws, 0o777)
	path := dockerPolicy(t, func(p *policy.Policy) {
		dksec.Of(p).Workspace, dksec.Of(p).WorkspaceWritable, dksec.Of(p).Pool = ws, true, 0
		p.Limits.Timeout = policy.Duration{Duration: 30 * time.Second}
	})
	cs, cmd := serveDocker(t, path)
	mine := fmt.Sprintf("%s=%d", sd.LabelPID, cmd.Process.Pid)
	f := filepath.Join(ws, "f.txt")
	// Each try: the edit lands as soon as the call's container exists, before the program runs
	// (its first read shows whether it did).
	for try := 1; ; try++ {
		if err := os.WriteFile(f, []byte("orig\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		os.Chmod(f, 0o666)
		before := containerSet(t, eng, mine)
		type answer struct {
			text   string
			stdout string
			err    error
		}
		done := make(chan answer, 1)
		go func() {
			res, r, err := callDocker(context.Background(), cs, sd.ToolShell, map[string]any{"script": "cat f.txt; sleep 2; echo model > f.txt"})
			done <- answer{resultText(res), r.Stdout, err}
		}()
		edited := false
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			now := containerSet(t, eng, mine)
			if len(now) > len(before) {
				if err := os.WriteFile(f, []byte("user-edit\n"), 0o666); err != nil {
					t.Fatal(err)
				}
				edited = true
				break
			}
		}
		if !edited {
			t.Fatal("the call's container never showed")
		}
		a := <-done
		if a.err != nil {
			t.Fatalf("call: %v", a.err)
		}
		if a.stdout != "user-edit\n" && try < 5 {
			t.Logf("try %d: the program read %q (the edit came after it started): again", try, a.stdout)
			continue
		}
		if a.stdout != "user-edit\n" {
			t.Skipf("the edit never landed before the program read the file in %d tries", try)
		}
		got, _ := os.ReadFile(f)
		if string(got) != "user-edit\n" || !strings.Contains(a.text, "changed in the workspace by another writer") {
			t.Fatalf("an edit made before the program started: the file holds %q; the answer:\n%s", got, a.text)
		}
		return
	}
}
