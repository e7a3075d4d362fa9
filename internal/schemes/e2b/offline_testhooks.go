//go:build testhooks

package e2b

import (
	"fmt"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
)

// The local E2B server (internal/harness/e2bfake) the harness attacks offline is a test build's only: a
// release binary links no fake server (offline_release.go).

// offlineBuilt: this build links the local E2B server.
const offlineBuilt = true

var offline struct {
	once sync.Once
	fake *e2bfake.Server
	err  error
}

// offlineServer starts the local E2B server once per process, and gives its address and
// sandbox domain.
func offlineServer() (url, domain string, err error) {
	offline.once.Do(func() {
		offline.fake, offline.err = e2bfake.New(e2bfake.Options{APIKey: offlineKey})
	})
	if offline.err != nil {
		return "", "", fmt.Errorf("start the local E2B server: %w", offline.err)
	}
	return offline.fake.URL(), offline.fake.Domain(), nil
}
