package generate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A scheme's policy template reaches generate by RegisterPolicyTemplate, under a name generate
// does not know: registering parses nothing (the exec helper links this package and registers
// every scheme's), the first render parses it with the common part and keeps it, a broken one
// is an error then, a scheme without one is an error, and a second, different template for a
// scheme is refused. (This package's other tests render the real schemes' templates: the
// external tests import the registry, which hands them over for the whole test binary.)
func TestPolicyTemplatesRegisteredAndParsedOnUse(t *testing.T) {
	RegisterPolicyTemplate("toy-broken", "{{ .P")
	if _, err := policyTemplate("toy-broken"); err == nil || !strings.Contains(err.Error(), "parse the toy-broken policy template") {
		t.Errorf("a broken template: %v", err)
	}
	toy := "{{template \"header\" .}}\n[toy]\nsize = {{.S}}\n"
	RegisterPolicyTemplate("toy", toy)
	RegisterPolicyTemplate("toy", toy) // the same again: nothing changes
	tm, err := policyTemplate("toy")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := policyTemplate("toy"); again != tm {
		t.Error("the template was parsed again")
	}
	var b bytes.Buffer
	if err := tm.Execute(&b, struct {
		P    *policy.Policy
		S    int
		Path string
	}{policy.Default(policy.Schemes[0]), 3, "/etc/toy.toml"}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "mcpsandbox verify --policy /etc/toy.toml\n") || !strings.Contains(out, "\n[audit]\n") || !strings.HasSuffix(out, "\n[toy]\nsize = 3\n") {
		t.Errorf("the toy template with the common part:\n%s", out)
	}
	if _, err := policyTemplate("toy-none"); err == nil || !strings.Contains(err.Error(), `no policy template for the scheme "toy-none"`) {
		t.Errorf("no template: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second, different template for a scheme was taken")
		}
	}()
	RegisterPolicyTemplate("toy", "other")
}
