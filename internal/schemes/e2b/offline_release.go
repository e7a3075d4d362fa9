//go:build !testhooks

package e2b

import "errors"

// errOffline is why a release build's harness cannot attack the e2b scheme offline: the local
// E2B server (internal/harness/e2bfake) is linked into test builds only (offline_testhooks.go).
var errOffline = errors.New("the offline E2B server is in test builds only: go build -tags testhooks ./cmd/mcpsandbox, or set " +
	LiveEnv + "=1 with a real key in the policy's api_key_env")

func offlineServer() (url, domain string, err error) { return "", "", errOffline }
