package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// OtherSection is a [NAME] table of a scheme other than the policy's: decoded and ignored.
type OtherSection struct {
	Name string
	Keys []string
}

// OtherSections are the tables of text (a policy file) that belong to a scheme other than
// scheme: none of what they say applies (verify's MS408; wrap's start warns, trial49 F2).
func OtherSections(text []byte, scheme string) []OtherSection {
	var doc map[string]any
	if _, err := toml.Decode(string(text), &doc); err != nil {
		return nil
	}
	var out []OtherSection
	for _, name := range Schemes {
		tbl, ok := doc[name].(map[string]any)
		if name == scheme || !ok {
			continue
		}
		keys := make([]string, 0, len(tbl))
		for k := range tbl {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out = append(out, OtherSection{Name: name, Keys: keys})
	}
	return out
}

// Says is the sentence verify and wrap give an OtherSection of a scheme's policy, and the fix.
func (s OtherSection) Says(scheme string) (what, fix string) {
	return fmt.Sprintf("the file has the section [%s] (%s), which scheme = %q ignores: none of it applies", s.Name, strings.Join(s.Keys, ", "), scheme),
		fmt.Sprintf(`remove the section, or set scheme = %q if that is the scheme meant (a policy runs one scheme; mcpsandbox init --scheme %s writes one for it)`, s.Name, s.Name)
}
