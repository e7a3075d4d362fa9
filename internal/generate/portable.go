package generate

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// What init --portable vouches for is the one entry it wrote, or found exactly as it writes it
// (atk39b F1): a committed file may hold more that starts programs on the host when the client
// opens the checkout (another server entry, Gemini CLI's tools.discoveryCommand and
// tools.callCommand, hooks), which init neither wrote nor checked, and its report names them.

// startWords are the parts of a key's name that say its value starts something (a command, a
// hook, a helper or script). A guess by name: the report says besides that init speaks only
// for its own entry.
var startWords = []string{"command", "cmd", "hook", "helper", "script", "exec", "program", "shell", "sandbox"}

// PortableEntry is the entry init --portable wrote or found exactly as it writes it in the
// file of t (SameAs, or the name init gives it).
func (pl *Plan) PortableEntry(t Target) string {
	if c := pl.Clients.Change(t); c != nil && c.SameAs != "" {
		return c.SameAs
	}
	return pl.name
}

// Unchecked names what the file of t, as init leaves it, holds beside init's entry that may
// start a program: every other server entry (with what it runs) and each key elsewhere whose
// name says it starts something, with its value.
func (pl *Plan) Unchecked(t Target) []string {
	if mutated("init-portable-report-scope") {
		return nil
	}
	var src []byte
	if c := pl.Clients.Change(t); c != nil && c.New != nil {
		src = c.New
	} else if b, err := ReadConfigFile(t.Path); err == nil {
		src = b
	}
	return unchecked(t, src, pl.PortableEntry(t))
}

func unchecked(t Target, src []byte, name string) []string {
	var out []string
	if list, err := listEntries(t, src); err == nil {
		for _, w := range list {
			if w.Name == name {
				continue
			}
			what := w.String()
			if w.Skip != "" && what == "" {
				what = w.Skip
			}
			out = append(out, fmt.Sprintf("%s.%s (runs %s)", strings.Join(t.Client.keyPath(), "."), w.Name, clip(what, 100)))
		}
	}
	var doc map[string]any
	if t.Client.Format == "toml" {
		if _, err := decodeTOML(src, &doc); err != nil {
			return append(out, "the file does not decode: review it whole")
		}
	} else if len(strings.TrimSpace(string(src))) > 0 && decodeJSONC([]byte(strings.TrimPrefix(string(src), "\uFEFF")), &doc) != nil {
		return append(out, "the file does not decode: review it whole")
	}
	servers := strings.Join(t.Client.keyPath(), ".")
	var walk func(path string, v any)
	walk = func(path string, v any) {
		if path == servers {
			return // the entries, named above
		}
		if a, ok := v.([]any); ok && !mutated("portable-report-arrays-unread") {
			// a list of servers or hooks: each element's keys, named by their index
			for i, e := range a {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			low := strings.ToLower(k)
			if slices.ContainsFunc(startWords, func(w string) bool { return strings.Contains(low, w) }) {
				b, _ := json.Marshal(m[k])
				out = append(out, fmt.Sprintf("%s (%s)", p, clip(string(b), 100)))
				continue
			}
			walk(p, m[k])
		}
	}
	walk("", doc)
	return out
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
