package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// atk33 F5: serve's own files reached through a bind mount of the workspace (or of a directory
// sandboxed code reads) are inside it: paths compared as strings after resolving links miss a
// bind, and a call replaced the audit log through one. Catches the policy-within-identity mutant.
func TestCheckOwnFilesThroughABindMount(t *testing.T) {
	ws := t.TempDir()
	alias := testenv.BindMount(t, ws)
	audit := filepath.Join(alias, "audit.jsonl")
	err := CheckOwnFiles(ws, "", audit)
	if err == nil || !strings.Contains(err.Error(), "the audit log "+audit+" lies inside the workspace "+ws+" ("+alias+" is the same directory as "+ws+")") {
		t.Errorf("the audit log through a bind of the workspace: %v", err)
	}
	if err := CheckOwnFiles(ws, filepath.Join(alias, "sub", "p.toml"), ""); err == nil || !strings.Contains(err.Error(), "the policy file ") {
		t.Errorf("the policy file through a bind of the workspace: %v", err)
	}
	if err := CheckOwnFiles(t.TempDir(), "", audit); err != nil {
		t.Errorf("another workspace: %v", err)
	}
	if err := CheckAuditNotReadIn([]string{alias}, "allowlist.read_paths", filepath.Join(ws, "audit.jsonl")); err == nil {
		t.Error("an audit log in a directory read through its bind mount: accepted")
	}
}

// atk33 F5: a home, or an XDG directory, reached through a bind mount is still that directory:
// the workspace rule judges the workspace by identity (device and inode) as well as by name, so
// bindhome/.ssh is refused as home/.ssh is. Catches the workspace-home-identity mutant.
func TestWorkspaceReachingAHomeThroughABindMount(t *testing.T) {
	parent := t.TempDir()
	home := filepath.Join(parent, "bob")
	xdg := t.TempDir()
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, "bin"), filepath.Join(xdg, "app")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	homes := Homes{Homes: []string{home}, XDG: []string{"XDG_CONFIG_HOME=" + xdg}}
	alias, up, xalias := testenv.BindMount(t, home), testenv.BindMount(t, parent), testenv.BindMount(t, xdg)
	u := WorkspaceUse{Key: "allowlist.workspace", Harm: "x"}
	for ws, want := range map[string]string{
		filepath.Join(alias, ".ssh"): "(the same directory as " + filepath.Join(home, ".ssh") + ": a bind mount or another name) is a dot directory of the home " + home,
		filepath.Join(alias, "bin"):  "lies in " + filepath.Join(home, "bin"),
		alias:                        "is the home directory " + home,
		up:                           "contains the home directory " + home,
		filepath.Join(xalias, "app"): "lies in XDG_CONFIG_HOME (" + xdg + ")",
		t.TempDir():                  "",
	} {
		err := checkWorkspacePath(ws, ws, u, "linux", homes)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("workspace %s: %v\nwant it to say %q", ws, err, want)
		}
	}
}
