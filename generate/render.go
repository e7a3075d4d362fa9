package generate

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
	"text/template"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/templates"
)

// policyTmpl is parsed on first use: this package is linked into the exec helper, which starts
// once per call and must not pay for templates it never renders.
var policyTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"q":      tomlString,
		"list":   tomlList,
		"inline": tomlInline,
		"hosts":  netHosts,
		"net":    tomlNet,
	}).ParseFS(templates.FS, "policy-*.toml.tmpl"))
})

// RenderPolicy writes p as a commented policy file (what each key does, its safe range).
// It loads back to exactly p: init checks that before it writes anything.
func RenderPolicy(p *policy.Policy, path string) ([]byte, error) {
	var b bytes.Buffer
	if err := policyTmpl().ExecuteTemplate(&b, "policy-"+p.Scheme+".toml.tmpl", struct {
		P    *policy.Policy
		Path string
	}{p, path}); err != nil {
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
