package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/homelinks"
)

// TestWorkspaceLayerHomeLinksDeepChainCut: the docker scheme's commit protects a home's config
// deeper than two levels (~/.config/Code/User/mcp.json) and the link in the middle of a chain
// (~/.bashrc -> ws/bashrc -> ws/shell/bashrc), and refuses every change when the walk of the
// home passed its bound, naming it (atk40b F2, F7). Red with the old reach (mutant
// homelinks-deep-configs), the chain's end only (homelinks-chain-middle), the cut unread
// (homelinks-cut-fails-open).
func TestWorkspaceLayerHomeLinksDeepChainCut(t *testing.T) {
	eng := needEngine(t)
	t.Run("deep and chained", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		ws := userWorkspace(t)
		for p, s := range map[string]string{"vscode/mcp.json": "{}\n", "shell/bashrc": "# mine\n"} {
			os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755)
			if err := os.WriteFile(filepath.Join(ws, p), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chown(filepath.Join(ws, p), 1000, 1000)
			os.Chown(filepath.Join(ws, filepath.Dir(p)), 1000, 1000)
		}
		if err := os.Symlink("shell/bashrc", filepath.Join(ws, "bashrc")); err != nil {
			t.Fatal(err)
		}
		os.Lchown(filepath.Join(ws, "bashrc"), 1000, 1000)
		os.MkdirAll(filepath.Join(home, ".config", "Code", "User"), 0o755)
		for link, target := range map[string]string{".config/Code/User/mcp.json": "vscode/mcp.json", ".bashrc": "bashrc"} {
			if err := os.Symlink(filepath.Join(ws, target), filepath.Join(home, link)); err != nil {
				t.Fatal(err)
			}
		}
		e := newExec(t, eng, testPolicy(writable(ws)))
		r := mustCall(t, e, ToolPython, map[string]any{"code": `import os
open("vscode/mcp.json", "w").write('{"mcpServers":{"x":{"command":"sh"}}}')
os.remove("bashrc")
open("bashrc", "w").write("the call's\n")
print("wrote")`})
		refused := refusedPaths(r)
		for _, p := range []string{"vscode/mcp.json", "bashrc"} {
			if _, ok := refused[p]; !ok {
				t.Errorf("%s is not refused: %v", p, refused)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "vscode", "mcp.json")); string(b) != "{}\n" {
			t.Errorf("vscode/mcp.json was rewritten by the call: %q", b)
		}
		if st, err := os.Lstat(filepath.Join(ws, "bashrc")); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("bashrc, the link in ~/.bashrc's chain, was replaced by the call (%v)", err)
		}
	})
	// A target at the workspace's root is protected there only: ~/bin -> ws/bin leaves src/bin
	// writable, as the allowlist does (review41 #11: a pattern of one name matched every bin;
	// mutant docker-home-links-root-anywhere).
	t.Run("root name anchored", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		ws := userWorkspace(t)
		for _, d := range []string{"bin", "src/bin"} {
			os.MkdirAll(filepath.Join(ws, d), 0o755)
			os.Chown(filepath.Join(ws, d), 1000, 1000)
		}
		os.Chown(filepath.Join(ws, "src"), 1000, 1000)
		if err := os.Symlink(filepath.Join(ws, "bin"), filepath.Join(home, "bin")); err != nil {
			t.Fatal(err)
		}
		e := newExec(t, eng, testPolicy(writable(ws)))
		r := mustCall(t, e, ToolPython, map[string]any{"code": `open("bin/tool", "w").write("#!/bin/sh\n")
open("src/bin/build.py", "w").write("print(1)\n")
print("wrote")`})
		refused := refusedPaths(r)
		why, ok := refused["bin/tool"]
		if !ok {
			why, ok = refused["bin"] // the layer's directory, refused whole
		}
		if !ok || !strings.Contains(why, "~/bin") {
			t.Errorf("bin/tool refused for %q (%v), want the home's link named: %v", why, ok, refused)
		}
		if _, err := os.Stat(filepath.Join(ws, "bin", "tool")); err == nil {
			t.Errorf("bin/tool reached the workspace")
		}
		if why, ok := refused["src/bin/build.py"]; ok {
			t.Errorf("src/bin/build.py refused (%s): only the workspace's root bin is what ~/bin leads to", why)
		}
		if _, err := os.Stat(filepath.Join(ws, "src", "bin", "build.py")); err != nil {
			t.Errorf("src/bin/build.py did not reach the workspace: %v", err)
		}
	})
	t.Run("cut", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		ws := userWorkspace(t)
		big := filepath.Join(home, ".local", "bin") // a known place: past the bound there, changes refused
		os.MkdirAll(big, 0o755)
		for i := 0; i <= homelinks.MaxEntries; i++ {
			if err := os.WriteFile(filepath.Join(big, strconv.Itoa(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		e := newExec(t, eng, testPolicy(writable(ws)))
		r := mustCall(t, e, ToolPython, map[string]any{"code": `open("notes.txt", "w").write("the call's\n")`})
		why := refusedPaths(r)["notes.txt"]
		if !strings.Contains(why, home) || !strings.Contains(why, strconv.Itoa(homelinks.MaxEntries)) {
			t.Errorf("notes.txt refused for %q, want the home and the bound named", why)
		}
		if _, err := os.Stat(filepath.Join(ws, "notes.txt")); err == nil {
			t.Errorf("notes.txt reached the workspace past the walk's bound")
		}
	})
}
