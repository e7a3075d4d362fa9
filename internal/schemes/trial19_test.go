package schemes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A policy init wrote for one scheme, its scheme then changed by hand (scheme = "docker" over an
// allowlist policy): serve, explain and verify took it without a word, and ran containers with
// the default image, the [allowlist] section's workspace and commands silently ignored. verify's
// audit now names the section no scheme of the file uses (MS408). Red with mutant
// verify-unused-section.
func TestAuditNamesAnotherSchemesSection(t *testing.T) {
	const text = `version = 1
scheme = "docker"
name = "sandbox"

[allowlist]
workspace = "/srv/ws"

[[allowlist.commands]]
name = "wc"
path = "/usr/bin/wc"
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
`
	path := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Lookup(p.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	var got *verify.Finding
	fs := verify.Audit(p, path, sc.Audit)
	for i := range fs {
		if fs[i].Rule == "MS408" {
			got = &fs[i]
		}
	}
	if got == nil || got.Key != "allowlist" || got.Severity != verify.Medium || !strings.Contains(got.Message, "commands, workspace") ||
		!strings.Contains(got.Fix, `scheme = "allowlist"`) {
		t.Fatalf("no MS408 naming the [allowlist] section: %+v", fs)
	}
	// the file's own scheme's section is no finding
	own := strings.Replace(text, `scheme = "docker"`, `scheme = "allowlist"`, 1)
	os.WriteFile(path, []byte(own), 0o600)
	if p, err = policy.Load(path); err != nil {
		t.Fatal(err)
	}
	sc, _ = Lookup(p.Scheme)
	for _, f := range verify.Audit(p, path, sc.Audit) {
		if f.Rule == "MS408" {
			t.Errorf("MS408 on the policy's own section: %+v", f)
		}
	}
}
