package homelinks

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Find names a home's dot-files, ~/bin and the configs in its dot-directories and ~/.config
// that are links into the workspace, and nothing else: a shortcut (~/src), a link to the
// workspace whole, a link outside it.
func TestFindHomeLinksIntoTheWorkspace(t *testing.T) {
	home, ws, other := t.TempDir(), t.TempDir(), t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	for _, d := range []string{"cursor", "nvim", "src", "bin", "x"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	os.WriteFile(filepath.Join(ws, "cursor", "mcp.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(ws, "bashrc"), []byte(""), 0o644)
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o755)
	os.MkdirAll(filepath.Join(home, ".config"), 0o755)
	links := map[string]string{
		".cursor/mcp.json": filepath.Join(ws, "cursor", "mcp.json"),
		".bashrc":          filepath.Join(ws, "bashrc"),
		".config/nvim":     filepath.Join(ws, "nvim"),
		"bin":              filepath.Join(ws, "bin"),
		"src":              filepath.Join(ws, "src"),
		".project":         ws,
		".elsewhere":       other,
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(home, l)); err != nil {
			t.Fatal(err)
		}
	}
	f := Find([]string{home}, ws)
	want := map[string]string{
		filepath.Join(ws, "cursor", "mcp.json"): "~/.cursor/mcp.json",
		filepath.Join(ws, "bashrc"):             "~/.bashrc",
		filepath.Join(ws, "nvim"):               "~/.config/nvim",
		filepath.Join(ws, "bin"):                "~/bin",
	}
	if len(f.Targets) != len(want) {
		t.Errorf("found %v, want %v", f.Targets, want)
	}
	for target, link := range want {
		if f.Targets[target] != link {
			t.Errorf("%s: found %q, want %q (all: %v)", target, f.Targets[target], link, f.Targets)
		}
	}
	pats := f.Patterns(ws)
	if len(pats) != 4 || pats[0] != "bashrc" || pats[2] != "cursor/mcp.json" {
		t.Errorf("patterns %q", pats)
	}
}

// A home of more entries than MaxEntries is looked at up to the bound, and says so.
func TestFindIsBounded(t *testing.T) {
	home := t.TempDir()
	for i := 0; i <= MaxEntries; i++ {
		os.WriteFile(filepath.Join(home, ".f"+string(rune('a'+i%26))+itoa(i)), nil, 0o644)
	}
	if f := Find([]string{home}, t.TempDir()); !f.Short || f.Cut {
		t.Errorf("a home of %d entries: short %v, cut %v; want short (past the known places), not cut", MaxEntries+1, f.Short, f.Cut)
	}
}

func itoa(i int) string {
	return string([]byte{byte('0' + i/1000%10), byte('0' + i/100%10), byte('0' + i/10%10), byte('0' + i%10)})
}

// mk makes the files and links of a tree: a value starting with "->" is a link to what
// follows, "/" a directory, else a file's content.
func mk(t *testing.T, root string, tree map[string]string) {
	t.Helper()
	for p, v := range tree {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case v == "/":
			err = os.MkdirAll(full, 0o755)
		case len(v) > 2 && v[:2] == "->":
			err = os.Symlink(v[2:], full)
		default:
			err = os.WriteFile(full, []byte(v), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The configs clients and tools keep deeper than two levels are found (atk40b F2): VS Code's
// and Cursor's user mcp.json/tasks.json, Windsurf's mcp_config.json, ~/.local/bin's programs,
// a systemd user unit, a config below ~/.config/x/y/z; a link in an editor's extensions
// directory; not what lies in a skipped cache. Red with the old reach (mutant
// homelinks-deep-configs).
func TestFindDeepConfigs(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	deep := map[string]string{
		".config/Code/User/mcp.json":          "vscode/mcp.json",
		".config/Code/User/tasks.json":        "vscode/tasks.json",
		".config/Cursor/User/settings.json":   "cursor/settings.json",
		".codeium/windsurf/mcp_config.json":   "windsurf/mcp_config.json",
		".local/bin/git-sync":                 "bin/git-sync",
		".config/systemd/user/sync.service":   "systemd/sync.service",
		".config/a/b/c/d/tool.toml":           "deep/tool.toml",
		".vscode/extensions/mine":             "ext",
		".local/share/applications/x.desktop": "desktop/x.desktop",
	}
	tree := map[string]string{".cache/x/y/link": "->" + filepath.Join(ws, "cached"), ".vscode/extensions/big/sub/l": "->" + filepath.Join(ws, "inext")}
	for l, target := range deep {
		tree[l] = "->" + filepath.Join(ws, target)
		mk(t, ws, map[string]string{target: "x"})
	}
	mk(t, home, tree)
	f := Find([]string{home}, ws)
	for l, target := range deep {
		if got := f.Targets[filepath.Join(ws, target)]; got != "~/"+l {
			t.Errorf("%s (~/%s's target): found %q, want ~/%s", target, l, got, l)
		}
	}
	for _, not := range []string{"cached", "inext"} {
		if _, ok := f.Targets[filepath.Join(ws, not)]; ok {
			t.Errorf("%s found: a skipped tree was walked", not)
		}
	}
	if f.Cut || f.Unjudged() != "" {
		t.Errorf("a small home was cut: %+v", f)
	}
}

// Every link of a chain that lies inside the workspace is a target, not only its end (atk40b
// F2): ~/.bashrc -> ws/bashrc -> ws/shell/bashrc protects ws/bashrc too; ~/.profile ->
// ws/profile -> a file outside protects ws/profile; a link on the way as a directory
// (ws/dots -> ws/real) is protected; a dangling link protects the first missing name.
// Red when only the end counts (mutant homelinks-chain-middle).
func TestFindChainMiddle(t *testing.T) {
	home, ws, out := t.TempDir(), t.TempDir(), t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	mk(t, out, map[string]string{"profile": "x"})
	mk(t, ws, map[string]string{
		"shell/bashrc": "x",
		"bashrc":       "->shell/bashrc",
		"profile":      "->" + filepath.Join(out, "profile"),
		"real/vimrc":   "x",
		"dots":         "->real",
		"real/zshrc":   "x",
		"rel/zshrc":    "->../real/zshrc",
	})
	mk(t, home, map[string]string{
		".bashrc":   "->" + filepath.Join(ws, "bashrc"),
		".profile":  "->" + filepath.Join(ws, "profile"),
		".vimrc":    "->" + filepath.Join(ws, "dots", "vimrc"),
		".zshrc":    "->" + filepath.Join(ws, "rel", "zshrc"),
		".inputrc":  "->" + filepath.Join(ws, "gone", "inputrc"),
		".myconfig": "->" + filepath.Join(out, "profile"),
	})
	f := Find([]string{home}, ws)
	want := map[string]string{
		"bashrc": "~/.bashrc", "shell/bashrc": "~/.bashrc",
		"profile": "~/.profile",
		"dots":    "~/.vimrc", "real/vimrc": "~/.vimrc",
		"rel/zshrc": "~/.zshrc", "real/zshrc": "~/.zshrc",
		"gone": "~/.inputrc",
	}
	for target, link := range want {
		if got := f.Targets[filepath.Join(ws, target)]; got != link {
			t.Errorf("%s: found %q, want %q (all: %v)", target, got, link, f.Targets)
		}
	}
	if len(f.Targets) != len(want) {
		t.Errorf("found %v, want %v", f.Targets, want)
	}
}

// The known places are walked before the rest: a home whose big dot-directory (sorted first)
// passes the bound still has ~/.cursor/mcp.json's link found, and the cut is said, with the
// home and where it stopped, for the schemes to refuse on (atk40b F7).
func TestFindKnownPlacesFirst(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	mk(t, ws, map[string]string{"cursor/mcp.json": "{}", "late": "x"})
	mk(t, home, map[string]string{
		".cursor/mcp.json": "->" + filepath.Join(ws, "cursor", "mcp.json"),
		".zz/late":         "->" + filepath.Join(ws, "late"),
	})
	big := filepath.Join(home, ".aaa")
	os.Mkdir(big, 0o755)
	for i := 0; i <= MaxEntries; i++ {
		if err := os.WriteFile(filepath.Join(big, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := Find([]string{home}, ws)
	if f.Targets[filepath.Join(ws, "cursor", "mcp.json")] != "~/.cursor/mcp.json" {
		t.Errorf("~/.cursor/mcp.json's link was not found first: %v", f.Targets)
	}
	if f.Cut || !f.Short || f.CutHome != home || f.CutAt != "~/.aaa" {
		t.Errorf("cut %v, short %v in %q at %q, want short (not cut) in %s at ~/.aaa", f.Cut, f.Short, f.CutHome, f.CutAt, home)
	}
	if why := f.Unjudged(); why != "" {
		t.Errorf("Unjudged: %q past the known places, want nothing refused", why)
	}
}

// The bound reached in the known places (a ~/.local/bin of more entries) is a Cut: links where
// clients keep their configs were not all looked at, and every change is refused (Unjudged
// names the home and the bound; mutant homelinks-cut-fails-open). Reached past them (a real
// home's browser profiles and toolchains) it is Short: said, nothing refused (mutant
// homelinks-short-refuses made every change of such a home refused).
func TestFindShortPastKnownPlaces(t *testing.T) {
	fill := func(dir string) {
		os.MkdirAll(dir, 0o755)
		for i := 0; i <= MaxEntries; i++ {
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	home, ws := t.TempDir(), t.TempDir()
	fill(filepath.Join(home, ".local", "bin"))
	f := Find([]string{home}, ws)
	if !f.Cut || f.CutAt != "~/.local/bin" {
		t.Errorf("known places past the bound: cut %v at %q, want cut at ~/.local/bin", f.Cut, f.CutAt)
	}
	if why := f.Unjudged(); !strings.Contains(why, home) || !strings.Contains(why, strconv.Itoa(MaxEntries)) {
		t.Errorf("Unjudged: %q, want the home and the bound named", why)
	}
	home = t.TempDir()
	fill(filepath.Join(home, ".mozilla"))
	f = Find([]string{home}, ws)
	if f.Cut || !f.Short || f.Unjudged() != "" {
		t.Errorf("past the known places: cut %v short %v unjudged %q, want short, nothing refused", f.Cut, f.Short, f.Unjudged())
	}
}

// A client's own records (a file per session: ~/.claude/projects, ~/.claude/todos) grow past
// the bound in a known place with years of use; they are transcripts, not configs, and are not
// walked: such a home is neither cut nor short, and its config links are found (atk41 F4).
func TestFindSkipsClientRecords(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	mk(t, ws, map[string]string{"claude/settings.json": "{}"})
	mk(t, home, map[string]string{".claude/settings.json": "->" + filepath.Join(ws, "claude", "settings.json")})
	for _, d := range []string{".claude/projects/-home-me-src", ".claude/todos", ".config/Code/User/workspaceStorage/5f1c",
		".config/Code/User/History/-3ab1"} {
		dir := filepath.Join(home, d)
		os.MkdirAll(dir, 0o755)
		for i := 0; i <= MaxEntries/4; i++ {
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".jsonl"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	f := Find([]string{home}, ws)
	if f.Cut || f.Short {
		t.Errorf("a home whose ~/.claude and VS Code's User hold %d session records: cut %v, short %v at %q; want neither", 4*(MaxEntries/4+1), f.Cut, f.Short, f.CutAt)
	}
	if f.Targets[filepath.Join(ws, "claude", "settings.json")] != "~/.claude/settings.json" {
		t.Errorf("~/.claude/settings.json's link not found: %v", f.Targets)
	}
}

// A workspace that is itself a directory of the home (a dotfiles repository at ~/.dotfiles, or
// ~/.config/nvim edited with an agent) is not walked: a call's own files there, past the bound,
// neither switch the walk off for the links elsewhere (~/.gradle/init.d/init.gradle -> the
// workspace's file, still found) nor, in a known place, refuse every change (atk41 F13). Red
// when the workspace is walked (mutant homelinks-skip-workspace).
func TestFindSkipsTheWorkspace(t *testing.T) {
	fill := func(dir string) {
		os.MkdirAll(dir, 0o755)
		for i := 0; i <= MaxEntries; i++ {
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	home, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(home, ".dotfiles")
	mk(t, ws, map[string]string{"gradle/init.gradle": "x", "bashrc": "x"})
	mk(t, home, map[string]string{".bashrc": "->" + filepath.Join(ws, "bashrc"),
		".zz-tool/init.d/init.gradle": "->" + filepath.Join(ws, "gradle/init.gradle")})
	fill(filepath.Join(ws, "calls")) // what one call writes: 32,769 empty files
	f := Find([]string{home}, ws)
	if f.Cut || f.Short {
		t.Errorf("~/.dotfiles as the workspace with %d files a call wrote: cut %v short %v at %q, want neither", MaxEntries+1, f.Cut, f.Short, f.CutAt)
	}
	if f.Targets[filepath.Join(ws, "gradle/init.gradle")] != "~/.zz-tool/init.d/init.gradle" {
		t.Errorf("the link past the workspace's files was not found: %v", f.Targets)
	}

	home, _ = filepath.EvalSymlinks(t.TempDir())
	ws = filepath.Join(home, ".config", "nvim")
	fill(filepath.Join(ws, "x"))
	if f := Find([]string{home}, ws); f.Cut || f.Unjudged() != "" {
		t.Errorf("~/.config/nvim as the workspace with %d files a call wrote: every change refused: %q", MaxEntries+1, f.Unjudged())
	}
}

// Links from the places the host's tools read as code (gradle's init scripts, IPython's
// startup files, VSCodium's MCP servers, kubectl's and the AWS CLI's configs, …) are found in a
// home whose other dot-directories pass the bound before them (atk41 F5). Red without those
// places among the known (mutant homelinks-known-code-places).
func TestFindKnownCodePlaces(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	big := filepath.Join(home, ".android", "avd") // breadth first and by name, before them all
	os.MkdirAll(big, 0o755)
	for i := 0; i <= MaxEntries; i++ {
		if err := os.WriteFile(filepath.Join(big, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := []string{".gradle/init.d/init.gradle", ".gradle/gradle.properties", ".ipython/profile_default/startup/00.py",
		".config/VSCodium/User/mcp.json", ".config/Code - Insiders/User/mcp.json", ".vscode-oss/argv.json",
		".kube/config", ".aws/config", ".docker/config.json", ".docker/cli-plugins/docker-x", ".cargo/config.toml",
		".cargo/bin/tool", ".m2/settings.xml", ".pythonrc.py", ".Rprofile", ".irbrc", ".tmux.conf", ".config/tmux/tmux.conf"}
	for i, l := range links {
		target := filepath.Join(ws, strconv.Itoa(i))
		mk(t, ws, map[string]string{strconv.Itoa(i): "x"})
		mk(t, home, map[string]string{l: "->" + target})
	}
	f := Find([]string{home}, ws)
	if !f.Short {
		t.Errorf("the home's ~/.android/avd of %d entries: short %v, want the bound reached", MaxEntries+1, f.Short)
	}
	for i, l := range links {
		if got := f.Targets[filepath.Join(ws, strconv.Itoa(i))]; got != "~/"+l {
			t.Errorf("~/%s -> the workspace: found as %q", l, got)
		}
	}
}
