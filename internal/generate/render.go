package generate

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
	"text/template"

	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"github.com/mcpsandbox/mcpsandbox/internal/templates"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// policyTemplates are each scheme's commented policy template, by scheme name: the scheme's
// registry entry carries it (scheme.Scheme.PolicyTemplate) and the schemes package hands it
// over (RegisterPolicyTemplate); generate names no scheme.
var policyTemplates = struct {
	sync.Mutex
	text   map[string]string
	parsed map[string]*template.Template // by text: parsed on first use (see policyTemplate)
}{text: map[string]string{}, parsed: map[string]*template.Template{}}

// RegisterPolicyTemplate gives generate the named scheme's policy template: text/template
// source executed with .P (the *policy.Policy, for the common keys), .S (the scheme's own
// section, p.Section()) and .Path (where the file goes); {{template "header" .}} writes the
// common part (internal/templates/policy-common.toml.tmpl). Registering a scheme twice with different
// templates is a bug and panics.
func RegisterPolicyTemplate(scheme, text string) {
	policyTemplates.Lock()
	defer policyTemplates.Unlock()
	if old, ok := policyTemplates.text[scheme]; ok && old != text {
		panic("generate: two policy templates for the scheme " + scheme)
	}
	policyTemplates.text[scheme] = text
}

// policyTemplate is the scheme's template with the common part, parsed on first use: this
// package is linked into the exec helper, which starts once per call and must not pay for
// templates it never renders.
func policyTemplate(scheme string) (*template.Template, error) {
	policyTemplates.Lock()
	defer policyTemplates.Unlock()
	text, ok := policyTemplates.text[scheme]
	if !ok {
		return nil, fmt.Errorf("no policy template for the scheme %q (a bug in mcpsandbox: its registry entry carries none, or nothing handed it to RegisterPolicyTemplate: the schemes package does, a scheme's own tests do it themselves)", scheme)
	}
	if t := policyTemplates.parsed[text]; t != nil {
		return t, nil
	}
	t, err := template.New(scheme).Funcs(template.FuncMap{
		"q":      tomlString,
		"list":   tomlList,
		"inline": tomlInline,
		"hosts":  netHosts,
		"net":    tomlNet,
		"venv":   policy.VenvOf,
		// a path in a command the header says to run: one word when pasted, spaces and all
		// (macOS's default ~/Library/Application Support/mcpsandbox/policy.toml has one)
		"sh": func(s string) string {
			if mutated("policy-header-path-quoted") {
				return s
			}
			return shellword.Quote(s)
		},
		// the values `scheme` takes: every registered scheme, so a new one is named with no edit
		"schemes": func() string {
			q := make([]string, len(policy.Schemes))
			for i, n := range policy.Schemes {
				q[i] = tomlString(n)
			}
			return strings.Join(q, " | ")
		},
	}).ParseFS(templates.FS, "policy-common.toml.tmpl")
	if err == nil {
		_, err = t.Parse(text)
	}
	if err != nil {
		return nil, fmt.Errorf("parse the %s policy template (a bug in mcpsandbox): %w", scheme, err)
	}
	policyTemplates.parsed[text] = t
	return t, nil
}

// RenderPolicy writes p as a commented policy file (what each key does, its safe range).
// It loads back to exactly p: init checks that before it writes anything.
func RenderPolicy(p *policy.Policy, path string) ([]byte, error) {
	t, err := policyTemplate(p.Scheme)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, struct {
		P    *policy.Policy
		S    policy.Section
		Path string
	}{p, p.Section(), path}); err != nil {
		return nil, fmt.Errorf("render the %s policy template: %w", p.Scheme, err)
	}
	back, err := policy.Parse(path, b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("the rendered policy does not load back (a bug in mcpsandbox): %w", err)
	}
	if back.Hash() != p.Hash() {
		return nil, fmt.Errorf("the rendered policy loads back as a different policy (a bug in mcpsandbox)")
	}
	return b.Bytes(), nil
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = tomlString(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func tomlInline(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		key := k
		if !bareKey(k) {
			key = tomlString(k)
		}
		parts[i] = key + " = " + tomlString(m[k])
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

func bareKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// netHosts is a host-list network's hosts in canonical form; nil for any other network.
func netHosts(n policy.Network) []string {
	var out []string
	for _, h := range n.Hosts() {
		out = append(out, h.String())
	}
	return out
}

// tomlNet writes a network that is not a host list: false, true, "none" or a docker network name.
func tomlNet(n policy.Network) string {
	switch {
	case n.Mode == policy.NetAll:
		return "true"
	case n.Mode == policy.NetNamed || n.Name != "":
		return tomlString(n.Name)
	}
	return "false"
}
