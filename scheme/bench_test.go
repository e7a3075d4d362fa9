package scheme

import (
	"regexp"
	"testing"
)

// A bench row's client names the Go MCP SDK with the version this build links (from go.mod),
// so a row never states a stale client.
func TestGoClientNamesTheLinkedSDK(t *testing.T) {
	got := GoClient("stdio")
	if !regexp.MustCompile(`^; client: Go MCP SDK v\d+\.\d+\.\d+, stdio$`).MatchString(got) {
		t.Fatalf("GoClient = %q", got)
	}
}
