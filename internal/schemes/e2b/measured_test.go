package e2b

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
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
