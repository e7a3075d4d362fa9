package serve

import "testing"

// headHasToken reads a request head as the guard reads its Authorization header: whole lines
// only, the header's name and the scheme in any case, the token exact.
func TestHeadHasToken(t *testing.T) {
	const tok = "s3cret-token"
	for head, want := range map[string]bool{
		"POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\n": true,
		"POST /mcp HTTP/1.1\r\nauthorization:   bearer   s3cret-token\r\n":        true,
		"POST /mcp HTTP/1.1\r\nAuthorization: Bearer s3cret-token":                false, // the line is not whole yet
		"POST /mcp HTTP/1.1\r\nAuthorization: Bearer s3cret-tokenX\r\n":           false,
		"POST /mcp HTTP/1.1\r\nAuthorization: Basic s3cret-token\r\n":             false,
		"POST /mcp HTTP/1.1\r\n\r\nAuthorization: Bearer s3cret-token\r\n":        false, // past the head's end
		"POST /mcp HTTP/1.1\r\nX-Authorization: Bearer s3cret-token\r\n":          false,
		"GET /Authorization: Bearer s3cret-token HTTP/1.1\r\nHost: x\r\n":         false,
	} {
		if got := headHasToken([]byte(head), tok); got != want {
			t.Errorf("%q: %v, want %v", head, got, want)
		}
	}
}
