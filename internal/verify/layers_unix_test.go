//go:build unix

package verify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// stand-in for `mcpsandbox serve --check --json`: a script printing what serve would
func fakeServe(t *testing.T, script string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpsandbox")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o700); err != nil {
		t.Fatal(err)
	}
	return bin
}

// A policy serve refuses gives serve's own final message, not its log lines before it nor the
// exit status (trial37 F6: "serve --check: exit status 1: time=… level=INFO msg=\"allowlist
// workspace\" …" then the reason). Red with mutant explain-serve-log-in-error.
func TestLayersErrorIsServesMessage(t *testing.T) {
	bin := fakeServe(t, `echo 'time=2026-12-06T08:48:39.439Z level=INFO msg="allowlist workspace" configured=/w resolved=/w' >&2
echo 'time=2026-12-06T08:48:39.440Z level=WARN msg="something else"' >&2
echo 'mcpsandbox: allowlist.commands: "py" is not the binary its sha256 names: re-pin it' >&2
exit 1
`)
	_, err := Layers(context.Background(), bin, "p.toml")
	if err == nil || err.Error() != `allowlist.commands: "py" is not the binary its sha256 names: re-pin it` {
		t.Errorf("got %v, want serve's final message alone", err)
	}
	var ce *CheckError
	if !errors.As(err, &ce) {
		t.Errorf("%T, want a *CheckError", err)
	}
}

// A policy serve will not start here only for what this environment lacks (e2b's key) still
// has its layers, with what is lacking (trial37 F6).
func TestLayersOfAPolicyNotReadyHere(t *testing.T) {
	bin := fakeServe(t, `echo '{"scheme": "e2b", "layers": [{"name": "e2b-microvm", "active": true, "detail": "d"}], "not_ready": {"until": "$E2B_API_KEY is set", "why": "no key: export it"}}'
echo 'mcpsandbox: no key: export it' >&2
exit 1
`)
	ls, err := Layers(context.Background(), bin, "p.toml")
	var nr *NotReadyError
	if !errors.As(err, &nr) || nr.Until != "$E2B_API_KEY is set" || nr.Why != "no key: export it" || len(ls) != 1 || ls[0].Name != "e2b-microvm" {
		t.Errorf("got %v %v, want the layers and a *NotReadyError", ls, err)
	}
}
