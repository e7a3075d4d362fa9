package generate

import (
	"encoding/json"
	"strings"
	"testing"
)

// A one-line (minified) config gets the entry compact: the file stays one line, every other
// byte as it was (trial32 F7: the entry came out half-indented on lines of its own).
func TestMergeMinifiedStaysOneLine(t *testing.T) {
	e := NewServerEntry("/bin/mcpsandbox", "/p.toml")
	const entry = `"sandbox":{"command":"/bin/mcpsandbox","args":["serve","--policy","/p.toml"]}`
	cases := []struct {
		name, client, src, want string
		e                       ServerEntry
		replace                 bool
	}{
		{"others kept", "windsurf", `{"mcpServers":{"w1":{"command":"/bin/cat","disabled":true}}}` + "\n",
			`{"mcpServers":{"w1":{"command":"/bin/cat","disabled":true},` + entry + `}}` + "\n", e, false},
		{"no servers key", "cursor", `{"theme":"dark"}`, `{"theme":"dark","mcpServers":{` + entry + `}}`, e, false},
		{"empty servers, spaced", "claude-desktop", `{"a": 1, "mcpServers": {}}`, `{"a": 1, "mcpServers": {` + entry + `}}`, e, false},
		{"crlf", "gemini", `{"mcpServers":{"x":{"command":"y"}}}` + "\r\n", `{"mcpServers":{"x":{"command":"y"},` + entry + `}}` + "\r\n", e, false},
		{"replace", "cursor", `{"mcpServers":{"sandbox":{"command":"/old/x","args":[]},"z":{}}}`, `{"mcpServers":{` + entry + `,"z":{}}}`, e, true},
		{"http", "windsurf", `{"mcpServers":{"w1":{"command":"/bin/cat"}}}`,
			`{"mcpServers":{"w1":{"command":"/bin/cat"},"sandbox":{"serverUrl":"http://127.0.0.1:8080/mcp","headers":{"Authorization":"Bearer ${env:TOK}"}}}}`,
			NewHTTPEntry("http://127.0.0.1:8080/mcp", "TOK"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Merge(client(t, c.client), []byte(c.src), "sandbox", c.e, c.replace)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != c.want {
				t.Errorf("got\n%s\nwant\n%s", out, c.want)
			}
			if strings.Count(strings.TrimRight(string(out), "\r\n"), "\n") != 0 {
				t.Errorf("no longer one line:\n%s", out)
			}
			if !json.Valid(out) {
				t.Errorf("not valid JSON:\n%s", out)
			}
		})
	}
}
