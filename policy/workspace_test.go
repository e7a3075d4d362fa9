package policy

import (
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
		err := checkWorkspacePath(c.conf, c.ws, u, "linux")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "(fix x.workspace)") {
			t.Errorf("workspace %s (%s): %v, want %q", c.conf, c.ws, err, c.want)
		}
	}
	for _, ws := range []string{"/tmp/x", "/home/me/ai", "/root/ws", "/srv/ai", "/var/tmp/ws", "/run/user/1000/ws", "/data/ai"} {
		if err := checkWorkspacePath(ws, ws, u, "linux"); err != nil {
			t.Errorf("workspace %s refused: %v", ws, err)
		}
	}
	// macOS: /etc, /var and /tmp resolve into /private.
	for _, c := range []struct{ ws string }{{"/private/etc"}, {"/private"}, {"/System/Library"}, {"/Users"}} {
		if err := checkWorkspacePath(c.ws, c.ws, u, "darwin"); err == nil {
			t.Errorf("darwin: workspace %s accepted", c.ws)
		}
	}
	for _, ws := range []string{"/Users/me/ai", "/private/var/folders/ab/T/ws", "/private/tmp/ws", "/Volumes/data/ws"} {
		if err := checkWorkspacePath(ws, ws, u, "darwin"); err != nil {
			t.Errorf("darwin: workspace %s refused: %v", ws, err)
		}
	}
}
