package policy

import (
	"bytes"
	"fmt"

	"github.com/BurntSushi/toml"
)

// Marshal renders the policy as TOML with only the active scheme's section, so a saved file holds
// nothing that does not apply. Parse(Marshal(p)) yields a policy with the same Hash.
func Marshal(p *Policy) ([]byte, error) {
	common := struct {
		Version int    `toml:"version"`
		Scheme  string `toml:"scheme"`
		Name    string `toml:"name"`
		Limits  Limits `toml:"limits"`
		Audit   Audit  `toml:"audit"`
	}{Version: p.Version, Scheme: p.Scheme, Name: p.Name, Limits: p.Limits, Audit: p.Audit}
	var b bytes.Buffer
	enc := toml.NewEncoder(&b)
	if err := enc.Encode(common); err != nil {
		return nil, fmt.Errorf("encode policy: %w", err)
	}
	if sec := p.Section(); sec != nil {
		if err := enc.Encode(map[string]any{p.Scheme: sec.Payload()}); err != nil {
			return nil, fmt.Errorf("encode policy: %w", err)
		}
	}
	return b.Bytes(), nil
}
