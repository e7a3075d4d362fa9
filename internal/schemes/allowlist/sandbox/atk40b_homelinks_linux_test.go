package sandbox

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/homelinks"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// wsFiles writes files into the workspace, owned as the commands' uid.
func wsFiles(t *testing.T, ws string, files map[string]string) {
	t.Helper()
	for p, s := range files {
		full := filepath.Join(ws, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o777); err != nil {
			t.Fatal(err)
		}
		var err error
		if l, ok := strings.CutPrefix(s, "->"); ok {
			err = os.Symlink(l, full)
		} else {
			err = os.WriteFile(full, []byte(s), 0o666)
		}
		if err != nil {
			t.Fatal(err)
		}
		os.Lchown(full, 65534, 65534)
		os.Chown(filepath.Dir(full), 65534, 65534)
	}
}

// A home's config deeper than two levels (VS Code's ~/.config/Code/User/mcp.json, Windsurf's
// ~/.codeium/windsurf/mcp_config.json, a program in ~/.local/bin) that is a link into the
// workspace is protected there, and so is a link in the middle of a chain (~/.bashrc ->
// ws/bashrc -> ws/shell/bashrc; ~/.profile -> ws/profile -> a file outside): a call cannot
// replace it with its own file (atk40b F2). Red with the old reach (mutant
// homelinks-deep-configs) and with the chain's end only (homelinks-chain-middle).
func TestHomeLinksDeepAndChained(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	e := pythonExecutor(t, nil, false)
	needLayer(t, e)
	outside := filepath.Join(t.TempDir(), "profile")
	os.WriteFile(outside, []byte("# system\n"), 0o644)
	wsFiles(t, e.ws, map[string]string{
		"vscode/mcp.json": "{}\n", "windsurf/mcp_config.json": "{}\n", "bin/git-sync": "#!/bin/sh\n",
		"shell/bashrc": "# mine\n", "bashrc": "->shell/bashrc", "profile": "->" + outside, "notes.txt": "n\n",
	})
	for link, target := range map[string]string{".config/Code/User/mcp.json": "vscode/mcp.json",
		".codeium/windsurf/mcp_config.json": "windsurf/mcp_config.json", ".local/bin/git-sync": "bin/git-sync",
		".bashrc": "bashrc", ".profile": "profile"} {
		os.MkdirAll(filepath.Dir(filepath.Join(home, link)), 0o755)
		if err := os.Symlink(filepath.Join(e.ws, target), filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2100 * time.Millisecond) // past the executor's look at the home, taken again every 2s
	res := runPython(t, e, `
import os
for p in ("vscode/mcp.json", "windsurf/mcp_config.json", "bin/git-sync", "bashrc", "profile", "notes.txt"):
    try:
        if os.path.islink(p):
            os.remove(p)
        open(p, "w").write("the call's\n")
    except OSError as err:
        print(p, err)
`)
	refused := refusedPaths(res.Workspace)
	for _, p := range []string{"vscode/mcp.json", "windsurf/mcp_config.json", "bin/git-sync", "bashrc", "profile"} {
		// refused at the commit, or read-only in the call (an existing protected file is mounted so)
		if _, ok := refused[p]; !ok && !strings.Contains(res.Stdout, p+" [Errno 30]") {
			t.Errorf("%s: not refused (stdout %q, refused %v)", p, res.Stdout, refused)
		}
	}
	for p, want := range map[string]string{"vscode/mcp.json": "{}\n", "bin/git-sync": "#!/bin/sh\n", "bashrc": "# mine\n", "profile": "# system\n", "notes.txt": "the call's\n"} {
		if got, _ := os.ReadFile(filepath.Join(e.ws, p)); string(got) != want {
			t.Errorf("%s reads %q after the call, want %q", p, got, want)
		}
	}
	for _, l := range []string{"bashrc", "profile"} {
		if st, err := os.Lstat(filepath.Join(e.ws, l)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer the host's link: %v", l, err)
		}
	}
}

// A home whose known config places pass homelinks.MaxEntries (a ~/.local/bin of more) has every
// change to the workspace refused, the reason naming the home and the bound, and serve's log
// says so once, not at each call (atk40b F7). Red when the cut is not read (mutant
// homelinks-cut-fails-open). A bound reached past the known places refuses nothing (homelinks'
// TestFindShortPastKnownPlaces).
func TestHomeLinksCutRefusesChanges(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	var log testenv.LockedBuffer
	pythonExec.log = slog.New(slog.NewTextHandler(&log, nil))
	e := pythonExecutor(t, nil, false)
	pythonExec.log = nil
	needLayer(t, e)
	big := filepath.Join(home, ".local", "bin")
	os.MkdirAll(big, 0o755)
	for i := 0; i <= homelinks.MaxEntries; i++ {
		if err := os.WriteFile(filepath.Join(big, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2100 * time.Millisecond)
	for i := range 2 {
		res := runPython(t, e, `open("notes.txt", "w").write("the call's\n")`)
		why := refusedPaths(res.Workspace)["notes.txt"]
		if !strings.Contains(why, home) || !strings.Contains(why, strconv.Itoa(homelinks.MaxEntries)) {
			t.Errorf("call %d: notes.txt refused for %q, want the home and the bound named", i, why)
		}
		if _, err := os.Stat(filepath.Join(e.ws, "notes.txt")); err == nil {
			t.Errorf("call %d: notes.txt reached the workspace past the walk's bound", i)
		}
		time.Sleep(2100 * time.Millisecond)
	}
	if n := strings.Count(log.String(), "level=WARN msg=\"a home's known config places hold more entries"); n != 1 {
		t.Errorf("serve's log says the cut %d times, want once:\n%s", n, log.String())
	}
}
