package e2b

import (
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A URL typed into the template question (it follows an HTTP one in the wizard: trial33 F13), or
// a name with spaces, is refused there and in a policy file; names and team/name:tag pass.
func TestTemplateIsAName(t *testing.T) {
	var q generate.Question
	for _, c := range questions {
		if c.Flag == "e2b-template" {
			q = c
		}
	}
	for v, want := range map[string]string{
		"http://127.0.0.1:8833/mcp": "is a URL",
		"code interpreter":          "has characters",
		"code-interpreter-v1":       "",
		"rki5dems9wqfm4r03t7g":      "",
		"acme/data_tools.v2:latest": "",
	} {
		err := q.Validate(nil, v, generate.Env{})
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("wizard, %q: %v, want %q", v, err, want)
		}
		_, err = policy.Parse("p.toml", []byte("version = 1\nscheme = \"e2b\"\n[e2b]\ntemplate = \""+v+"\"\n"))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), "e2b.template")) {
			t.Errorf("policy file, %q: %v, want %q", v, err, want)
		}
	}
}
