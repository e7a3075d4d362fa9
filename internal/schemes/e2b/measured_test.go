package e2b

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// verify's e2b host rows ask E2B's API what serve asks at its start (its list of sandboxes: no
// sandbox made), with the key: ok when it answers, FAIL (blocking the harness) when it cannot be
// reached or refuses the key (trial37 F7: PASS for an API that did not resolve, the key never
// tried). Against the local E2B server and a closed port. Red with mutant verify-e2b-api-unasked.
func TestVerifyAsksTheE2BAPI(t *testing.T) {
	const key = "e2b_measured0test0key000000000000000000000"
	fake, err := e2bfake.New(e2bfake.Options{APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	t.Setenv(LiveEnv, "1") // a failure blocks in either build
	t.Setenv("E2B_API_URL", "")
	t.Setenv("E2B_SANDBOX_URL", "")
	cases := []struct {
		name, url, key, want, advice string
		ok                           bool
	}{
		{name: "answers", url: fake.URL(), key: key, ok: true, want: fake.URL() + " answered with the key in $E2B_API_KEY (its list of sandboxes"},
		{name: "key refused", url: fake.URL(), key: "e2b_wrong0key00000000000000000000000000000", want: "key refused (401): E2B rejected the API key in $E2B_API_KEY",
			advice: "set E2B_API_KEY to a valid key"},
		{name: "unreachable", url: closed, key: key, want: "unreachable: cannot reach the E2B API at " + closed, advice: "every call would fail the same way"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("E2B_API_KEY", tc.key)
			pol := filepath.Join(t.TempDir(), "e2b.toml")
			if err := os.WriteFile(pol, []byte("version = 1\nscheme = \"e2b\"\n[e2b]\napi_url = \""+tc.url+"\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			var row *verify.Check
			cs := measured(context.Background(), "", pol)
			for i := range cs {
				if cs[i].Name == "e2b api" {
					row = &cs[i]
				}
			}
			switch {
			case row == nil:
				t.Fatalf("no e2b api row: %+v", cs)
			case row.OK != tc.ok || row.Blocks == tc.ok || !strings.HasPrefix(row.Value, tc.want) || !strings.Contains(row.Advice, tc.advice):
				t.Errorf("%+v\nwant ok %v (blocks %v), value %q…, advice with %q", *row, tc.ok, !tc.ok, tc.want, tc.advice)
			}
			if strings.Contains(row.Value+row.Advice, tc.key) {
				t.Errorf("the row shows the key: %+v", *row)
			}
		})
	}
	if n := fake.Stats().Created; n != 0 {
		t.Errorf("verify made %d sandboxes", n)
	}
}

// verify sends no secret where a policy file chose without the user's say (atk37b F3: a policy
// naming api_key_env = "AWS_SECRET_ACCESS_KEY" and its own listener as api_url got the secret
// from verify's "e2b api" row): the row says "not asked" and the listener hears nothing, unless
// MCPSANDBOX_E2B_LIVE=1; the audit reports the policy (MS305) either way. Red with mutant
// verify-e2b-api-unconsented.
func TestVerifySendsNoKeyWhereThePolicyChose(t *testing.T) {
	const secret = "wJalrXUtnFEMI-atk37b-not-an-e2b-key"
	var heard atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		heard.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("[]"))
	}))
	defer srv.Close()
	t.Setenv("E2B_API_URL", "")
	t.Setenv("E2B_SANDBOX_URL", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("E2B_API_KEY", secret)
	for _, tc := range []struct{ name, section string }{
		{"another variable", "api_key_env = \"AWS_SECRET_ACCESS_KEY\"\napi_url = \"https://api.e2b.app\"\n"},
		{"another address", "api_url = \"" + srv.URL + "\"\n"},
		// a host of E2B's domain lent to a sandbox's port: anyone's server (atk38b F3)
		{"a sandbox's public host", "api_url = \"https://8080-iattackersandbox0001.e2b.app\"\n"},
		{"both", "api_key_env = \"AWS_SECRET_ACCESS_KEY\"\napi_url = \"" + srv.URL + "\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := filepath.Join(t.TempDir(), "e2b.toml")
			if err := os.WriteFile(pol, []byte("version = 1\nscheme = \"e2b\"\n[e2b]\n"+tc.section), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := policy.Load(pol)
			if err != nil {
				t.Fatal(err)
			}
			var ms305 bool
			for _, f := range verify.Audit(p, "", Scheme.Audit) {
				ms305 = ms305 || f.Rule == "MS305"
			}
			if !ms305 {
				t.Errorf("no MS305 for a policy that chooses the key's variable or address")
			}
			t.Setenv(LiveEnv, "")
			row := apiCheck(t, pol)
			if heard.Load() != 0 || !strings.HasPrefix(row.Value, "not asked: ") || !strings.Contains(row.Advice, LiveEnv+"=1") {
				t.Errorf("without %s=1: the listener heard %d requests; row %+v", LiveEnv, heard.Load(), row)
			}
			if strings.Contains(row.Value+row.Advice, secret) {
				t.Errorf("the row shows the secret: %+v", row)
			}
		})
	}
	// with the user's say, verify asks (the listener is a stand-in: no sandbox list to judge)
	t.Setenv(LiveEnv, "1")
	pol := filepath.Join(t.TempDir(), "e2b.toml")
	if err := os.WriteFile(pol, []byte("version = 1\nscheme = \"e2b\"\n[e2b]\napi_url = \""+srv.URL+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if row := apiCheck(t, pol); heard.Load() == 0 || strings.HasPrefix(row.Value, "not asked") {
		t.Errorf("with %s=1 verify did not ask: %+v", LiveEnv, row)
	}
}

func apiCheck(t *testing.T, pol string) verify.Check {
	t.Helper()
	for _, c := range measured(context.Background(), "", pol) {
		if c.Name == "e2b api" {
			return c
		}
	}
	t.Fatalf("no e2b api row")
	return verify.Check{}
}
