//go:build !testhooks

package e2b

import "errors"

// offlineBuilt says whether this build links the local E2B server (internal/harness/e2bfake): a
// test build's only (offline_testhooks.go). Without it the harness attacks e2b only live, when
// the user opts in (ready).
const offlineBuilt = false

func offlineServer() (url, domain string, err error) {
	return "", "", errors.New("the local E2B server is in test builds only (go build -tags testhooks ./cmd/mcpsandbox)")
}
