package generate

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// HTTP entries, as data: each client's golden file (merged into an existing config, the way
// TestMergeGolden does stdio), then the entry read back as the client reads it: the URL under
// the client's own key, the type where the client wants one, and the token only as a reference
// to the variable, in the client's own substitution syntax.
func TestMergeHTTPGolden(t *testing.T) {
	const url, tokenVar = "http://127.0.0.1:8765/mcp", "MCPSANDBOX_TOKEN"
	e := NewHTTPEntry(url, tokenVar)
	cases := []struct {
		name, client, in  string // in: a stdio case's input from testdata/merge
		urlKey, typ, auth string // what the client must read back ("" = absent)
		tokenVarKey       string
	}{
		{"http-claude-code", "claude-code", "claude-code-new", "url", "http", "Bearer ${MCPSANDBOX_TOKEN}", ""},
		{"http-cursor", "cursor", "cursor-others", "url", "", "Bearer ${env:MCPSANDBOX_TOKEN}", ""},
		{"http-vscode", "vscode", "vscode-jsonc", "url", "http", "Bearer ${env:MCPSANDBOX_TOKEN}", ""},
		{"http-windsurf", "windsurf", "windsurf-minimal", "serverUrl", "", "Bearer ${env:MCPSANDBOX_TOKEN}", ""},
		{"http-gemini", "gemini", "gemini-crlf", "httpUrl", "", "Bearer ${MCPSANDBOX_TOKEN}", ""},
		{"http-codex", "codex", "codex-others", "url", "", "", "bearer_token_env_var"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := client(t, c.client)
			in, out := goldenMerge(t, cl, c.name, c.in, e, false)
			if strings.Contains(string(out), `"command"`) && strings.Count(string(out), `"command"`) != strings.Count(string(in), `"command"`) {
				t.Errorf("the HTTP entry has a command:\n%s", out)
			}
			var got map[string]any
			if cl.Format == "toml" {
				var doc map[string]map[string]map[string]any
				if _, err := toml.Decode(string(out), &doc); err != nil {
					t.Fatalf("merged TOML does not parse: %v", err)
				}
				got = doc[cl.Key]["sandbox"]
			} else {
				root, err := parseJSONC(out)
				if err != nil {
					t.Fatalf("merged JSON does not parse: %v", err)
				}
				m := root.member(cl.Key).val.member("sandbox")
				if m == nil {
					t.Fatal("entry missing")
				}
				if err := jsonUnmarshalStrict(out[m.val.start:m.val.end], &got); err != nil {
					t.Fatal(err)
				}
			}
			want2 := map[string]any{c.urlKey: url}
			if c.typ != "" {
				want2["type"] = c.typ
			}
			if c.auth != "" {
				want2["headers"] = map[string]any{"Authorization": c.auth}
			}
			if c.tokenVarKey != "" {
				want2[c.tokenVarKey] = tokenVar
			}
			if len(got) != len(want2) {
				t.Errorf("entry %v, want %v", got, want2)
			}
			for k, v := range want2 {
				if gv, ok := got[k]; !ok || !equalJSON(gv, v) {
					t.Errorf("entry[%s] = %v, want %v (entry %v)", k, got[k], v, got)
				}
			}
		})
	}
	// Claude Desktop's file holds stdio servers only: refused, saying what to do instead.
	if _, err := Merge(client(t, "claude-desktop"), nil, "sandbox", e, false); err == nil || !strings.Contains(err.Error(), "custom connector") {
		t.Errorf("claude-desktop HTTP entry: %v", err)
	}
}

func equalJSON(a, b any) bool {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok != bok {
		return false
	}
	if !aok {
		return a == b
	}
	if len(am) != len(bm) {
		return false
	}
	for k := range am {
		if !equalJSON(am[k], bm[k]) {
			return false
		}
	}
	return true
}

// The URL and the token's variable are checked before anything is written.
func TestHTTPEntryChecks(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:8765":      "http://127.0.0.1:8765/mcp",
		"http://127.0.0.1:8765/":     "http://127.0.0.1:8765/mcp",
		"http://localhost:8765/mcp/": "http://localhost:8765/mcp",
		"https://sandbox.example/x":  "https://sandbox.example/x",
		"http://[::1]:8765/mcp":      "http://[::1]:8765/mcp",
		"ftp://127.0.0.1/mcp":        "ERR must start with http",
		"127.0.0.1:8765":             "ERR",
		"http://user:pw@host:1/mcp":  "ERR holds a user or password",
		"http:///mcp":                "ERR names no host",
	} {
		got, err := CheckHTTPURL(raw)
		switch {
		case strings.HasPrefix(want, "ERR"):
			if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(strings.TrimPrefix(want, "ERR"))) {
				t.Errorf("%s: %q %v, want an error saying %q", raw, got, err, want)
			}
		case err != nil || got != want:
			t.Errorf("%s: %q %v, want %q", raw, got, err, want)
		}
	}
	for _, c := range []struct {
		e    ServerEntry
		want string // "" = accepted
	}{
		{NewHTTPEntry("http://127.0.0.1:8765/mcp", ""), ""},
		{NewHTTPEntry("http://127.0.0.1:8765/mcp", "MCPSANDBOX_TOKEN"), ""},
		{NewHTTPEntry("http://sandbox.example:8765/mcp", ""), "add --token-env NAME"},
		{NewHTTPEntry("http://127.0.0.1:8765/mcp", "abcdef0123456789abcdef"), ""}, // a name, if an odd one
		{NewHTTPEntry("http://127.0.0.1:8765/mcp", "Bearer xyz"), "never the token"},
		{NewHTTPEntry("http://127.0.0.1:8765/mcp", "a-b"), "not an environment variable's name"},
	} {
		err := CheckHTTPEntry(c.e)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.e, err, c.want)
		}
	}
}
