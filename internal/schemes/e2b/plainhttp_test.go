package e2b

import (
	"strings"
	"testing"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// atk35 F7: the key (and each sandbox's access token) never goes over plain http off this
// machine. api_url is judged at load, E2B_API_URL / E2B_SANDBOX_URL by verify (MS304) and by
// serve's start (the executor's test TestPlainHTTPOnlyToLoopback).
func TestPlainHTTPAPIURLOnlyToLoopback(t *testing.T) {
	for u, ok := range map[string]bool{
		"http://192.0.2.2:18790":    false,
		"http://api.e2b.app":        false,
		"http://10.0.0.1":           false,
		"http://127.0.0.1.nip.io:1": false,
		"ftp://127.0.0.1":           false,
		"http://127.0.0.1:8833":     true,
		"http://127.3.4.5":          true,
		"http://[::1]:8833":         true,
		"http://LOCALHOST:1":        true,
		"https://api.e2b.app":       true,
		"https://192.0.2.2:443":     true,
	} {
		_, err := policy.Parse("p.toml", []byte("version = 1\nscheme = \"e2b\"\n[e2b]\napi_url = \""+u+"\"\n"))
		if ok && err != nil {
			t.Errorf("api_url %q refused: %v", u, err)
		}
		if !ok && (err == nil || !strings.Contains(err.Error(), "e2b.api_url") || !strings.Contains(err.Error(), "use https://")) {
			t.Errorf("api_url %q: %v, want a refusal naming e2b.api_url and https://", u, err)
		}
	}
	p := policy.Default(e2bsec.Name)
	for _, n := range []string{"E2B_API_URL", "E2B_SANDBOX_URL"} {
		t.Run(n, func(t *testing.T) {
			t.Setenv("E2B_API_URL", "")
			t.Setenv("E2B_SANDBOX_URL", "")
			t.Setenv(n, "http://192.0.2.2:18790")
			fs := verify.Audit(p, "", Scheme.Audit)
			found := false
			for _, f := range fs {
				if f.Rule == "MS304" && f.Severity == verify.High && strings.Contains(f.Message, n) && strings.Contains(f.Fix, "https://") {
					found = true
				}
			}
			if !found {
				t.Errorf("verify must report $%s plain http to a remote host (MS304, high): %+v", n, fs)
			}
			t.Setenv(n, "http://127.0.0.1:18790")
			for _, f := range verify.Audit(p, "", Scheme.Audit) {
				if f.Rule == "MS304" {
					t.Errorf("$%s on loopback reported: %+v", n, f)
				}
			}
		})
	}
}
