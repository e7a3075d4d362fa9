package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The workspace rule refuses the host's own directories as, above or around a workspace, and
// names the scheme's key; an ordinary directory passes.
func TestCheckWorkspacePath(t *testing.T) {
	u := WorkspaceUse{Key: "x.workspace", Harm: "programs could reach the host"}
	for _, c := range []struct{ conf, ws, want string }{
		{"/", "/", "workspace is /: use a dedicated directory such as ~/ai-workspace (fix x.workspace)"},
		{"/etc", "/etc", "workspace is the system directory /etc: programs could reach the host; use a dedicated directory such as ~/ai-workspace (fix x.workspace)"},
		{"/srv/ws/../../etc", "/etc", "workspace is the system directory /etc: programs could reach the host;"},
		{"/home/me/link", "/usr", "workspace is the system directory /usr (/home/me/link resolves to /usr)"},
		{"/var", "/var", "workspace is the system directory /var"},
		{"/run", "/run", "workspace is the system directory /run"},
		{"/etc/x", "/etc/x", "workspace /etc/x is inside the system directory /etc;"},
		{"/usr/local/share/x", "/usr/local/share/x", "is inside the system directory /usr"},
	} {
		err := checkWorkspacePath(c.conf, c.ws, u, "linux", Homes{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "(fix x.workspace)") {
			t.Errorf("workspace %s (%s): %v, want %q", c.conf, c.ws, err, c.want)
		}
	}
	for _, ws := range []string{"/tmp/x", "/home/me/ai", "/root/ws", "/srv/ai", "/var/tmp/ws", "/run/user/1000/ws", "/data/ai"} {
		if err := checkWorkspacePath(ws, ws, u, "linux", Homes{}); err != nil {
			t.Errorf("workspace %s refused: %v", ws, err)
		}
	}
	// macOS: /etc, /var and /tmp resolve into /private.
	for _, c := range []struct{ ws string }{{"/private/etc"}, {"/private"}, {"/System/Library"}, {"/Users"}} {
		if err := checkWorkspacePath(c.ws, c.ws, u, "darwin", Homes{}); err == nil {
			t.Errorf("darwin: workspace %s accepted", c.ws)
		}
	}
	for _, ws := range []string{"/Users/me/ai", "/private/var/folders/ab/T/ws", "/private/tmp/ws", "/Volumes/data/ws"} {
		if err := checkWorkspacePath(ws, ws, u, "darwin", Homes{}); err != nil {
			t.Errorf("darwin: workspace %s refused: %v", ws, err)
		}
	}
}

// A workspace in a home's dot directory (keys, the configuration other programs and agents
// obey, programs on PATH) or in an XDG base directory is refused as a system directory is,
// any user's home under /home included; a project under the home is not (trial30 F13).
func TestWorkspaceReachingAHome(t *testing.T) {
	u := WorkspaceUse{Key: "x.workspace", Harm: "programs could reach the host"}
	h := Homes{Homes: []string{"/srv/me", "/root", "/data2/u/home"}, XDG: []string{"XDG_CONFIG_HOME=/data/cfg", "XDG_RUNTIME_DIR=/run/user/1000"}}
	for _, c := range []struct{ ws, want string }{
		{"/srv/me", "is the home directory /srv/me"},
		{"/data2/u", "contains the home directory /data2/u/home"},
		{"/srv/me/.ssh", "workspace /srv/me/.ssh is a dot directory of the home /srv/me"},
		{"/srv/me/.config", "is a dot directory of the home /srv/me"},
		{"/srv/me/.config/mcpsandbox", "lies in /srv/me/.config,"},
		{"/srv/me/.local/bin", "lies in /srv/me/.local,"},
		{"/srv/me/.cursor/x", "lies in /srv/me/.cursor,"},
		{"/root/.ssh", "is a dot directory of the home /root"},
		{"/home/bob/.aws/sub", "lies in /home/bob/.aws, a dot directory of the home /home/bob"},
		{"/home/bob", "is the home directory /home/bob"},
		{"/data/cfg", "is XDG_CONFIG_HOME (/data/cfg)"},
		{"/data/cfg/systemd", "lies in XDG_CONFIG_HOME (/data/cfg)"},
		{"/data", "contains XDG_CONFIG_HOME (/data/cfg)"},
		{"/run/user/1000/ws", "lies in XDG_RUNTIME_DIR (/run/user/1000)"},
	} {
		err := checkWorkspacePath(c.ws, c.ws, u, "linux", h)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "(fix x.workspace)") {
			t.Errorf("workspace %s: %v, want %q", c.ws, err, c.want)
		}
	}
	if err := checkWorkspacePath("/Users/ann/.ssh", "/Users/ann/.ssh", u, "darwin", Homes{}); err == nil || !strings.Contains(err.Error(), "a dot directory of the home /Users/ann") {
		t.Errorf("darwin: workspace /Users/ann/.ssh: %v", err)
	}
	for _, ws := range []string{"/srv/me/ai", "/srv/me/src/.hidden-is-fine-below", "/srv/me/src/proj", "/home/bob/ai", "/root/ws", "/srv/mee", "/data/cfg2", "/run/user/1001"} {
		if err := checkWorkspacePath(ws, ws, u, "linux", h); err != nil {
			t.Errorf("workspace %s refused: %v", ws, err)
		}
	}
	if err := checkWorkspacePath("/srv/link", "/srv/me/.ssh", u, "linux", h); err == nil || !strings.Contains(err.Error(), "(/srv/link resolves to /srv/me/.ssh) is a dot directory of the home /srv/me") {
		t.Errorf("a link into ~/.ssh: %v", err)
	}
	// no key: no "(fix ...)" (init's own answers)
	if err := checkWorkspacePath("/srv/me/.ssh", "/srv/me/.ssh", WorkspaceUse{}, "linux", h); err == nil || strings.Contains(err.Error(), "(fix") {
		t.Errorf("without a key: %v", err)
	}
}

// Every account's home counts, as the accounts file names it (a root serve reaches them all).
func TestPasswdHomes(t *testing.T) {
	f := t.TempDir() + "/passwd"
	os.WriteFile(f, []byte("root:x:0:0:root:/root:/bin/bash\n# a comment\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"+
		"jenkins:x:110:118:Jenkins:/var/lib/jenkins:/bin/bash\nbroken line\nslash:x:1:1::/:/bin/sh\n"), 0o644)
	got := passwdHomes(f)
	if strings.Join(got, ",") != "/root,/var/lib/jenkins" {
		t.Fatalf("passwdHomes = %q", got)
	}
	h := Homes{Homes: got}
	if err := checkWorkspacePath("/var/lib/jenkins/.ssh", "/var/lib/jenkins/.ssh", WorkspaceUse{}, "linux", h); err == nil || !strings.Contains(err.Error(), "is a dot directory of the home /var/lib/jenkins") {
		t.Errorf("a service account's .ssh: %v", err)
	}
	if err := checkWorkspacePath("/var/lib/jenkins/workspace/job", "/var/lib/jenkins/workspace/job", WorkspaceUse{}, "linux", h); err != nil {
		t.Errorf("a directory in a service account's home, not a dot one: %v", err)
	}
}

// A home or XDG directory whose path goes through a symbolic link (/home -> /data/home) is
// still a home: the workspace, resolved, is compared with it resolved too, and as configured with
// it as written (attack round atk32, F1).
func TestWorkspaceReachingAHomeThroughALink(t *testing.T) {
	root := t.TempDir()
	real, link := filepath.Join(root, "real"), filepath.Join(root, "link")
	os.MkdirAll(filepath.Join(real, ".ssh"), 0o755)
	os.MkdirAll(filepath.Join(root, "cfgreal", "cfg"), 0o755)
	os.Symlink(real, link)
	os.Symlink(filepath.Join(root, "cfgreal"), filepath.Join(root, "cfglink"))
	h := Homes{Homes: []string{link}, XDG: []string{"XDG_CONFIG_HOME=" + filepath.Join(root, "cfglink", "cfg")}}
	for _, c := range []struct{ configured, resolved, want string }{
		{filepath.Join(real, ".ssh"), filepath.Join(real, ".ssh"), "is a dot directory of the home " + real},
		{filepath.Join(link, ".ssh"), filepath.Join(real, ".ssh"), "a dot directory of the home"},
		{link, real, "is the home directory"},
		{filepath.Join(root, "cfgreal", "cfg", "x"), filepath.Join(root, "cfgreal", "cfg", "x"), "lies in XDG_CONFIG_HOME"},
	} {
		if err := checkWorkspacePath(c.configured, c.resolved, WorkspaceUse{}, "linux", h); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("workspace %s (%s): %v, want %q", c.configured, c.resolved, err, c.want)
		}
	}
	if err := checkWorkspacePath(filepath.Join(real, "ai"), filepath.Join(real, "ai"), WorkspaceUse{}, "linux", h); err != nil {
		t.Errorf("a plain directory of the home: %v", err)
	}
}

// A home's directories without a dot that are of the same kind: ~/bin (on PATH in Debian's
// default ~/.profile) and macOS's ~/Library; and on macOS, whose file systems ignore case, a
// workspace spelled in another case is the same directory (attack round atk32, F2).
func TestWorkspaceReachingHomeBinAndMacOSCase(t *testing.T) {
	h := Homes{Homes: []string{"/srv/me"}}
	for _, c := range []struct{ ws, goos, want string }{
		{"/srv/me/bin", "linux", "lies in /srv/me/bin"},
		{"/srv/me/bin/tools", "linux", "lies in /srv/me/bin"},
		{"/Users/ann/Library/LaunchAgents", "darwin", "lies in /Users/ann/library"},
		{"/Users/ann/Library/Application Support/Claude", "darwin", "lies in /Users/ann/library"},
		{"/users/ann/.ssh", "darwin", "is a dot directory of the home /users/ann"},
		{"/USERS/ANN", "darwin", "is the home directory /USERS/ANN"},
		{"/USR/LOCAL/BIN", "darwin", "inside the system directory /usr"},
		{"/PRIVATE/ETC", "darwin", "is the system directory /private/etc"},
	} {
		if err := checkWorkspacePath(c.ws, c.ws, WorkspaceUse{}, c.goos, h); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s workspace %s: %v, want %q", c.goos, c.ws, err, c.want)
		}
	}
	for _, ws := range []string{"/srv/me/binary", "/srv/me/src/bin", "/srv/me/Library"} {
		if err := checkWorkspacePath(ws, ws, WorkspaceUse{}, "linux", h); err != nil {
			t.Errorf("linux workspace %s refused: %v", ws, err)
		}
	}
}
