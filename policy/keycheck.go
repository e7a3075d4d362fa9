package policy

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// keyProblems reports what the TOML decoder lets through although the file is wrong:
//   - a key that matches a known one only when case is ignored: the decoder takes [DOCKER] for
//     [docker], and with both in one file which one wins is chance (the effective policy and
//     its hash would change from run to run);
//   - a table-valued key (a map, such as allowlist.env) given another type: the decoder leaves
//     the map empty instead of failing, which would silently mean "no variables".
func keyProblems(name string, data []byte, md toml.MetaData) []Problem {
	idx := indexLines(string(data))
	root := shapeType()
	var probs []Problem
	seen := map[string]bool{}
	report := func(key, msg, fix string) {
		if seen[key] {
			return
		}
		seen[key] = true
		pr := Problem{File: name, Line: idx.line(key), Key: key, Msg: msg, Fix: fix}
		if lines := headerLines(data, key); len(lines) > 0 {
			pr.Line = lines[0]
		}
		probs = append(probs, pr)
	}
	for _, k := range md.Keys() {
		t := root
		for i, seg := range k {
			for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t.Kind() != reflect.Struct {
				break // inside a map: any key is valid there
			}
			key := toml.Key(k[:i+1]).String()
			known := tomlKeys(t)
			f, ok := known[seg]
			if !ok {
				for tag := range known {
					if strings.EqualFold(tag, seg) {
						report(key, fmt.Sprintf("%q is not a key: keys are case-sensitive", seg), fmt.Sprintf("write it as %s", toml.Key(append(append([]string(nil), k[:i]...), tag)).String()))
					}
				}
				break // unknown: unknownKeys reports it
			}
			if f.Type.Kind() == reflect.Map && md.Type(k[:i+1]...) != "Hash" {
				report(key, fmt.Sprintf("must be a table, not %s", strings.ToLower(md.Type(k[:i+1]...))), fmt.Sprintf(`write a table: %s = { NAME = "value" }, or remove it`, seg))
				break
			}
			t = f.Type
		}
	}
	return probs
}
