package policy

import (
	"bytes"
	"fmt"

	"github.com/BurntSushi/toml"
)

// Marshal renders the policy as TOML with only the active scheme's section, so a saved file holds
// nothing that does not apply. Parse(Marshal(p)) yields a policy with the same Hash.
func Marshal(p *Policy) ([]byte, error) {
	out := struct {
		Version   int        `toml:"version"`
		Scheme    string     `toml:"scheme"`
		Name      string     `toml:"name"`
		Limits    Limits     `toml:"limits"`
		Audit     Audit      `toml:"audit"`
		Allowlist *Allowlist `toml:"allowlist,omitempty"`
		Docker    *Docker    `toml:"docker,omitempty"`
		E2B       *E2B       `toml:"e2b,omitempty"`
	}{Version: p.Version, Scheme: p.Scheme, Name: p.Name, Limits: p.Limits, Audit: p.Audit}
	switch p.Scheme {
	case SchemeAllowlist:
		a := p.Allowlist
		a.SetNet(a.Net())
		out.Allowlist = &a
	case SchemeDocker:
		d := p.Docker
		d.SetNet(d.Net())
		out.Docker = &d
	case SchemeE2B:
		out.E2B = &p.E2B
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(out); err != nil {
		return nil, fmt.Errorf("encode policy: %w", err)
	}
	return b.Bytes(), nil
}
