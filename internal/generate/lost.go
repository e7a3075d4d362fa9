package generate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// LostSettings lists the settings of the policy text old whose value the text new changes or
// drops, in words ("limits.memory "4GiB" -> "256MiB"", "allowlist.read_paths removed",
// "allowlist.env: GOCACHE, GOFLAGS removed"): init with flags and --force over a hand-edited
// policy replaced memory, env and read_paths and said only "wrote" (trial37 F5). Keys the new
// text adds are not listed: nothing of the old file is lost by them. A list of tables is keyed
// by each one's name ([[allowlist.commands]]), so a command added is not every command changed.
// nil when either text is not TOML.
func LostSettings(old, new []byte) []string { return lostSettings(old, new, nil) }

// LostSettingsSpelt is LostSettings of the old policy as init renders it (a default the file
// spelt out is no change), each old value said as the file itself spelt it where it did
// (trial38 F6: "1m" for the file's "60s").
func LostSettingsSpelt(oldRendered, new, oldFile []byte) []string {
	return lostSettings(oldRendered, new, oldFile)
}

func lostSettings(old, new, spelt []byte) []string {
	var a, b map[string]any
	if _, err := toml.Decode(string(old), &a); err != nil {
		return nil
	}
	if _, err := toml.Decode(string(new), &b); err != nil {
		return nil
	}
	was, now := map[string]string{}, map[string]string{}
	flatten("", a, was)
	flatten("", b, now)
	said := map[string]string{} // an old value as the file spelt it (compared as rendered)
	var sp map[string]any
	if spelt != nil {
		if _, err := toml.Decode(string(spelt), &sp); err == nil && !mutated("init-lost-respelt") {
			flatten("", sp, said)
		}
	}
	keys := make([]string, 0, len(was))
	for k := range was {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []string
	removed := map[string][]string{} // parent -> its keys removed, said on one line
	var parents []string
	for _, k := range keys {
		v, ok := now[k]
		switch {
		case !ok:
			gone := goneFrom(k, now) // a whole command or table gone is said once
			parent, leaf := splitKey(gone)
			if _, had := removed[parent]; !had {
				parents = append(parents, parent)
			}
			if !slices.Contains(removed[parent], leaf) {
				removed[parent] = append(removed[parent], leaf)
			}
		case v != was[k]:
			old := was[k]
			if o, ok := said[k]; ok {
				old = o
			}
			out = append(out, fmt.Sprintf("%s %s -> %s", k, old, v))
		}
	}
	for _, parent := range parents {
		ls := removed[parent]
		if len(ls) == 1 || parent == "" {
			for _, l := range ls {
				out = append(out, joinKey(parent, l)+" removed")
			}
			continue
		}
		out = append(out, parent+": "+strings.Join(ls, ", ")+" removed")
	}
	return out
}

// goneFrom is the outermost key above k (or k) of which now has nothing.
func goneFrom(k string, now map[string]string) string {
	for {
		parent, _ := splitKey(k)
		if parent == "" || hasUnder(parent, now) {
			return k
		}
		k = parent
	}
}

// hasUnder: now has key k or a key below it.
func hasUnder(k string, now map[string]string) bool {
	for n := range now {
		if n == k || strings.HasPrefix(n, k+".") || strings.HasPrefix(n, k+"[") {
			return true
		}
	}
	return false
}

// flatten puts each leaf of t under its dotted key into out, with its value as TOML-ish text.
func flatten(prefix string, t map[string]any, out map[string]string) {
	for k, v := range t {
		key := joinKey(prefix, quoteKey(k))
		switch v := v.(type) {
		case map[string]any:
			if len(v) == 0 {
				out[key] = "{}"
			}
			flatten(key, v, out)
		case []map[string]any:
			for i, e := range v {
				id := fmt.Sprint(i)
				if n, ok := e["name"].(string); ok {
					id = n
				}
				flatten(key+"["+quoteKey(id)+"]", e, out)
			}
		default:
			out[key] = valueText(v)
		}
	}
}

// valueText is a leaf's value as the policy file spells it.
func valueText(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = valueText(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// quoteKey quotes a key that is not a bare TOML key, so that dotted paths stay readable.
func quoteKey(k string) string {
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Sprintf("%q", k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

func joinKey(prefix, k string) string {
	if strings.HasPrefix(k, "[") {
		return prefix + k
	}
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// splitKey splits a dotted key at its last dot outside quotes and brackets, or before its last
// [name] ("allowlist.commands[go]": "allowlist.commands", "[go]").
func splitKey(k string) (parent, leaf string) {
	depth, quoted := 0, false
	cut, open := -1, -1
	for i, r := range k {
		switch {
		case r == '"':
			quoted = !quoted
		case quoted:
		case r == '[':
			if depth == 0 {
				open = i
			}
			depth++
		case r == ']':
			depth--
		case r == '.' && depth == 0:
			cut = i
		}
	}
	if strings.HasSuffix(k, "]") && open > cut {
		return k[:open], k[open:]
	}
	if cut < 0 {
		return "", k
	}
	return k[:cut], k[cut+1:]
}
