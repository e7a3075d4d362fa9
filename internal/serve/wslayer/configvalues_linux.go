package wslayer

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"
)

// maxParsedConfig bounds the YAML or TOML config text parsed (a Continue config, a hook
// manager's file, an agent's frontmatter, a Codex config are a few KiB; the file is read up to
// maxProgramFile): a parsed YAML node costs some hundred bytes (1 MiB of `- a` lines: 86 MB
// allocated, 1.2 s), so a longer config fails closed rather than growing serve's memory.
var maxParsedConfig = 256 << 10 // a variable for the tests

// configValues are the config's strings as its client's parser gives them, each a word of a
// command line to the inline reader: a YAML config's (yaml) and a TOML one's (by's name ends in
// .toml) decoded by their parsers, others (JSON, JSONC) read by configStrings. why says why
// they are not all of them (longer than the parsers are given, refused by its parser, aliases
// expanding past the bound): the caller fails closed, and the lexer's strings are read too.
func configValues(by, text string, yaml bool) (strs []string, why string) {
	switch {
	case yaml && !mutated("workspace-config-yaml-parsed"):
		strs, why = yamlStrings(text)
	case strings.HasSuffix(by, ".toml") && !mutated("workspace-config-toml-parsed"):
		strs, why = tomlStrings(text)
	default:
		return configStrings(text, yaml), ""
	}
	if why != "" {
		if mutated("workspace-config-parse-refused") {
			return configStrings(text, yaml), ""
		}
		strs = append(strs, configStrings(text, yaml)...)
	}
	return strs, why
}

// yamlStrings are a YAML config's values as a YAML parser gives them to the client, in document
// order: each scalar's value (a plain scalar folded over its lines, a block scalar, a tagged
// one's text, a !!binary one decoded), an alias as the node its anchor names, a merge key's
// mappings where they are merged; mapping keys are not values. A lexer of YAML's tokens cannot
// follow folding, tags, anchors, aliases and merges as the client's parser does (atk43 F1).
func yamlStrings(text string) (strs []string, why string) {
	d := decoded(text, false)
	return d.out, d.why
}

// yamlEnv are a YAML config's name: value entries whose value is a scalar, as the parser gives
// them (a block or folded scalar, a tagged, anchored or aliased value, a merge key's entries):
// a server's env, which a pattern of the text read as `>-` or `*p` (atk43 F1's class). A config
// the parser refuses gives what it read before (the inline reader fails closed for it).
func yamlEnv(text string) [][2]string {
	return decoded(text, false).pairs
}

// configDecode is what a YAML or TOML config's parser gave: its values (out), its name: value
// entries (pairs), why they are not all of them.
type configDecode struct {
	out   []string
	pairs [][2]string
	why   string
}

// lastDecoded is the last YAML or TOML config decoded, by its text: a commit reads a config's
// values (configValues) and its env (configEnvEntries) from the same text, and decoding it
// twice was a quarter of a commit beside large configs (atk45a F10: 64 Continue configs of
// 240 KiB, 1 min 27 s a commit). One entry: concurrent commits of other workspaces evict it,
// which only costs a decode. decodes counts the decodes (the tests).
var (
	lastDecoded struct {
		sync.Mutex
		text  string
		toml  bool
		bound int // maxParsedConfig when decoded (the tests change it)
		d     *configDecode
	}
	decodes atomic.Int64
)

// decoded is the YAML (toml false) or TOML config text's decode, made once for the same text.
func decoded(text string, toml bool) configDecode {
	lastDecoded.Lock()
	d := lastDecoded.d
	hit := d != nil && lastDecoded.toml == toml && lastDecoded.bound == maxParsedConfig && lastDecoded.text == text && !mutated("workspace-config-decode-once")
	lastDecoded.Unlock()
	if hit {
		// clipped: a caller's append makes its own array, never the shared one's spare room
		return configDecode{slices.Clip(d.out), slices.Clip(d.pairs), d.why}
	}
	decodes.Add(1)
	if toml {
		d = tomlDecode(text)
	} else {
		w, why := yamlParse(text)
		d = &configDecode{w.out, w.pairs, why}
	}
	lastDecoded.Lock()
	lastDecoded.text, lastDecoded.toml, lastDecoded.bound, lastDecoded.d = text, toml, maxParsedConfig, d
	lastDecoded.Unlock()
	return configDecode{slices.Clip(d.out), slices.Clip(d.pairs), d.why}
}

func yamlParse(text string) (*yamlWalk, string) {
	if len(text) > maxParsedConfig && !mutated("workspace-config-parsed-size") {
		return &yamlWalk{}, fmt.Sprintf("a YAML config longer than %d KiB", maxParsedConfig>>10)
	}
	w := &yamlWalk{visits: 2*len(text) + 1<<16, bytes: 2*len(text) + 1<<20, open: map[*yaml.Node]bool{}}
	if mutated("workspace-config-yaml-alias-bound") {
		w.visits, w.bytes = 1<<62, 1<<62
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc) // a node tree: its aliases point at their anchors' nodes, not expanded
		if errors.Is(err, io.EOF) {
			return w, ""
		}
		if err != nil {
			return w, fmt.Sprintf("a YAML config its parser refuses (%v)", err)
		}
		if why := w.node(&doc); why != "" {
			return w, why
		}
	}
}

// yamlWalk walks a parsed YAML document with its aliases expanded, bounded by the text's size:
// aliases of aliases ("billion laughs": 9 levels of 9, 387 million strings from 300 bytes)
// expand exponentially, and yaml.v3's alias-ratio check is in its decoding into Go values only,
// not in a node tree's walk (TestYAMLStringsBounded).
type yamlWalk struct {
	out           []string
	pairs         [][2]string         // a mapping's scalar key and its value, when that is a scalar
	visits, bytes int                 // what is left of the bound
	open          map[*yaml.Node]bool // the aliases being walked: an anchor holding its own alias
}

const yamlTooMany = "a YAML config whose aliases expand past the check's bound"

func (w *yamlWalk) node(n *yaml.Node) string {
	if w.visits--; w.visits < 0 {
		return yamlTooMany
	}
	switch n.Kind {
	case yaml.ScalarNode:
		v := n.Value
		if n.Tag == "!!binary" {
			if b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v), "")); err == nil {
				v = string(b)
			}
		}
		if w.bytes -= len(v); w.bytes < 0 {
			return yamlTooMany
		}
		w.out = append(w.out, v)
	case yaml.AliasNode:
		if n.Alias == nil || w.open[n] {
			return "a YAML alias inside the node its anchor names"
		}
		w.open[n] = true
		defer delete(w.open, n)
		return w.node(n.Alias)
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if why := w.node(n.Content[i]); why != "" { // a value; a merge key's (<<) too: the mappings merged
				return why
			}
			k, v := n.Content[i-1], n.Content[i]
			for v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if k.Kind == yaml.ScalarNode && v.Kind == yaml.ScalarNode {
				w.pairs = append(w.pairs, [2]string{k.Value, w.out[len(w.out)-1]})
			}
		}
	default: // a document, a sequence
		for _, c := range n.Content {
			if why := w.node(c); why != "" {
				return why
			}
		}
	}
	return ""
}

// tomlStrings are a TOML config's strings as the TOML parser gives them (a `#` anywhere outside
// a string starts a comment: `["-c",#"print(1)",` is a lexer's value): a table's values in its
// keys' order, an array's in its own.
func tomlStrings(text string) ([]string, string) {
	d := decoded(text, true)
	return d.out, d.why
}

// tomlEnv are a TOML config's name = "value" entries as the parser gives them (a multi-line
// string, `"""` then `lib`, is lib: a pattern of the text read "" before it). None for a config
// its parser refuses (the inline reader fails closed for it).
func tomlEnv(text string) [][2]string {
	return decoded(text, true).pairs
}

func tomlDecode(text string) *configDecode {
	if len(text) > maxParsedConfig && !mutated("workspace-config-parsed-size") {
		return &configDecode{why: fmt.Sprintf("a TOML config longer than %d KiB", maxParsedConfig>>10)}
	}
	var doc map[string]any
	if _, err := toml.Decode(text, &doc); err != nil {
		return &configDecode{why: fmt.Sprintf("a TOML config its parser refuses (%v)", err)}
	}
	d := &configDecode{}
	tomlWalk(doc, &d.out, &d.pairs)
	return d
}

func tomlWalk(v any, out *[]string, pairs *[][2]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case []any:
		for _, e := range v {
			tomlWalk(e, out, pairs)
		}
	case []map[string]any:
		for _, e := range v {
			tomlWalk(e, out, pairs)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if s, ok := v[k].(string); ok && pairs != nil {
				*pairs = append(*pairs, [2]string{k, s})
			}
			tomlWalk(v[k], out, pairs)
		}
	case nil:
	default:
		*out = append(*out, fmt.Sprint(v)) // a number, a boolean, a date: a word as YAML's are
	}
}

// jsonEnv are a JSON or JSONC config's "name": "value" entries as JSON.parse gives them, escapes
// decoded: `"PYTHON\u0050ATH": "x:\u0061pp"` sets PYTHONPATH to x:app, which configEnvEntry's
// pattern read as another name and value (atk44a F10's class on the JSON side). Not JSON (a
// shell hook, a config its parser refuses): none; the pattern's entries are read anyway.
func jsonEnv(text string) [][2]string {
	if len(text) > maxParsedConfig {
		return nil
	}
	var doc any
	if json.Unmarshal(jsonc([]byte(text)), &doc) != nil {
		return nil
	}
	var pairs [][2]string
	jsonWalk(doc, &pairs)
	return pairs
}

func jsonWalk(v any, pairs *[][2]string) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			jsonWalk(e, pairs)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if s, ok := v[k].(string); ok {
				*pairs = append(*pairs, [2]string{k, s})
			}
			jsonWalk(v[k], pairs)
		}
	}
}
