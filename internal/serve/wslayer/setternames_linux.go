package wslayer

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
	"go.yaml.in/yaml/v3"
)

// The setter scan (noteSetters) reads a text as spelled; a config's client reads it by its
// format's parser: `"APP\u005fDIR": …`, `"APP_DIR"⏎: …` (JSON), `"APP\x5fDIR": …`, `? APP_DIR⏎: …`
// (YAML), `"APP\u005FDIR" = …` (TOML) set APP_DIR to json.loads, PyYAML, npm yaml and tomllib,
// and the spelled scan saw no name, so a started script's ${APP_DIR:-app} was taken for app
// while bash ran lib/main.py (atk45a F2). The names are also taken as the parser gives them.

// configSetters records the names the config file (text) may set for what it starts as its
// format's parser reads it: every mapping key at any nesting (a client takes env from a key of
// its own: env, environment, terminal.integrated.env.linux, …), a key's part before a `=` (an
// env entry's name up to its first `=`: node passes {"APP_DIR=lib": "x"} as APP_DIR=lib=x), and
// the setters its decoded strings spell (a hook's "APP\u005fDIR=lib bash run.sh"). A config its
// parser refuses may set any name: which ones the reader cannot say.
func (f *follower) configSetters(file, text string) {
	if mutated("workspace-setters-config-parsed") {
		return
	}
	keys, vals, ok := configNames(file, text)
	if !ok {
		if !mutated("workspace-setters-config-refused") {
			f.settersFull = true
		}
		return
	}
	for _, k := range keys {
		if n, _, _ := strings.Cut(k, "="); n != "" {
			f.setter(n, file)
		}
	}
	if mutated("workspace-setters-config-once") {
		for _, v := range vals {
			f.noteSetters(file, v)
		}
	} else {
		// one scan of the strings, each on a line of its own: the setter and allexport scans
		// cost per byte, not per string (2 M strings of an 8 MiB config: atk46a F7)
		f.noteSetters(file, strings.Join(vals, "\n"))
	}
	f.allexportStarts(strings.Join(vals, " ")) // "command": "bash", "args": ["-a", "x.sh"]
}

// configNames are the config's mapping keys and string values by its format's parser
// (configFormat); ok false when the parser refuses it or it is longer than maxParsedConfig
// (YAML, TOML). A shell text (a husky hook, an .envrc) is no config of a format: its text is the
// spelled scan's.
func configNames(file, text string) (keys, vals []string, ok bool) {
	if t, isYAML := configYAML(file, text); isYAML {
		return yamlNames(t)
	}
	switch configFormat(file) {
	case "toml":
		return tomlNames(text)
	case "json":
		return jsonNames(text)
	case "text":
		return nil, nil, true
	}
	if mutated("workspace-setters-format") {
		return nil, nil, true
	}
	// a runner whose format is not known here: JSON when its text is, else it may set any name
	return jsonNames(text)
}

// configFormat is the format of the runner file (not YAML: configYAML) as its client reads
// it: "toml", "json" (JSON or JSONC: a .json, .jsonc or .sublime-project, a Kiro hook, whose
// .kiro.hook is JSON, atk46a F5), "text" (what a shell or direnv reads: a husky hook, an
// .envrc; mise's .tool-versions; an agent's Markdown without frontmatter), "" for another.
func configFormat(file string) string {
	base := filepath.Base(file)
	switch {
	case strings.HasSuffix(base, ".toml"):
		return "toml"
	case strings.HasSuffix(base, ".json") || strings.HasSuffix(base, ".jsonc") || strings.HasSuffix(base, ".sublime-project") ||
		strings.HasSuffix(base, ".kiro.hook") && !mutated("workspace-setters-format"):
		return "json"
	case base == ".envrc" || base == ".tool-versions" || strings.HasSuffix(base, ".agent.md") ||
		filepath.Base(filepath.Dir(file)) == ".husky":
		return "text"
	}
	return ""
}

// jsonNames reads a JSON or JSONC text (comments, trailing commas, a byte order mark): every
// object key, every string value; ok false when it is no JSON. The text is checked whole
// (json.Valid), then its strings are sliced from it, a string followed by `:` a key: a token
// decoder's allocation per token made a large config's reading slow (atk46a F7).
func jsonNames(text string) (keys, vals []string, ok bool) {
	b := jsonc([]byte(strings.TrimPrefix(text, "\ufeff")))
	if mutated("workspace-setters-json-scan") {
		return jsonTokenNames(b)
	}
	if !json.Valid(b) {
		return nil, nil, false
	}
	t := string(b)
	vals = make([]string, 0, strings.Count(t, `"`)/2) // one allocation, not a growth per doubling
	for i := 0; i < len(t); i++ {
		if t[i] != '"' {
			continue
		}
		j := i + 1
		for ; t[j] != '"'; j++ { // valid JSON: every string is closed
			if t[j] == '\\' {
				j++
			}
		}
		s := t[i+1 : j]
		if strings.IndexByte(s, '\\') >= 0 {
			var d string // here only: a variable whose address is taken is allocated
			if json.Unmarshal(b[i:j+1], &d) != nil {
				return nil, nil, false
			}
			s = d
		}
		k := j + 1
		for k < len(t) && (t[k] == ' ' || t[k] == '\t' || t[k] == '\n' || t[k] == '\r') {
			k++
		}
		if k < len(t) && t[k] == ':' {
			keys = append(keys, s)
		} else {
			vals = append(vals, s)
		}
		i = j
	}
	return keys, vals, true
}

// jsonTokenNames is jsonNames by json.Decoder's tokens (the mutant's reading).
func jsonTokenNames(b []byte) (keys, vals []string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct{ obj, key bool } // an object expecting a key next
	var stack []frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return keys, vals, len(stack) == 0
		}
		if err != nil {
			return nil, nil, false
		}
		d, delim := tok.(json.Delim)
		switch {
		case delim && (d == '{' || d == '['):
			stack = append(stack, frame{d == '{', d == '{'})
			continue
		case delim:
			stack = stack[:len(stack)-1]
		case len(stack) > 0 && stack[len(stack)-1].key:
			keys = append(keys, tok.(string))
			stack[len(stack)-1].key = false
			continue
		default:
			if s, isStr := tok.(string); isStr {
				vals = append(vals, s)
			}
		}
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].key = true // a value ended: a key comes next
		}
	}
}

// yamlNames reads a YAML text's documents as nodes: every mapping's scalar keys (an alias as
// the scalar it names) and every scalar. Aliases are not expanded: what an anchor holds is
// read where it is written, once.
func yamlNames(text string) (keys, vals []string, ok bool) {
	if len(text) > maxParsedConfig && !mutated("workspace-config-parsed-size") {
		return nil, nil, false
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return keys, vals, true
		}
		if err != nil {
			return nil, nil, false
		}
		yamlKeys(&doc, &keys, &vals)
	}
}

func yamlKeys(n *yaml.Node, keys, vals *[]string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if k.Kind == yaml.ScalarNode {
				*keys = append(*keys, k.Value)
			}
		}
	case yaml.ScalarNode:
		*vals = append(*vals, n.Value)
	}
	for _, c := range n.Content {
		yamlKeys(c, keys, vals)
	}
}

// tomlNames reads a TOML text by its parser: every table's keys (dotted and quoted keys as
// decoded), every string.
func tomlNames(text string) (keys, vals []string, ok bool) {
	if len(text) > maxParsedConfig && !mutated("workspace-config-parsed-size") {
		return nil, nil, false
	}
	var doc map[string]any
	if _, err := toml.Decode(text, &doc); err != nil {
		return nil, nil, false
	}
	tomlKeys(doc, &keys, &vals)
	return keys, vals, true
}

func tomlKeys(v any, keys, vals *[]string) {
	switch v := v.(type) {
	case string:
		*vals = append(*vals, v)
	case []any:
		for _, e := range v {
			tomlKeys(e, keys, vals)
		}
	case []map[string]any:
		for _, e := range v {
			tomlKeys(e, keys, vals)
		}
	case map[string]any:
		for k, e := range v {
			*keys = append(*keys, k)
			tomlKeys(e, keys, vals)
		}
	}
}

// Under allexport (`set -a`, `set -o allexport`, `#!/bin/bash -a`, `bash -a x.sh`,
// SHELLOPTS=allexport) bash exports every name a script assigns, by any form: read, printf -v,
// for, getopts, ${N:=v}, arithmetic, a nameref. The spelled scan sees an assignment's `=` or an
// export word only, so `set -a; read -r APP_DIR < .app_dir; exec bash inner.sh` left inner.sh's
// ${APP_DIR:-app} taken for app while bash ran lib/main.py (atk45a F7). Such a script's every
// spelled name may be set for what it starts.

// allexportOn finds a text turning allexport on for itself: a set's option cluster holding a
// (before its operands), allexport anywhere (set -o, shopt -so, SHELLOPTS), a shebang's -a.
var allexportOn = lazy.Regexp(`(?m)(?:^|[\s;&|({])set[ \t]+(?:[-+][A-Za-z]+[ \t]+|[-+]o[ \t]+[a-z]+[ \t]+)*-[A-Za-z]*a[A-Za-z]*(?:$|[\s;&|)])` +
	`|allexport|\A#![^\n]*[ \t]-[A-Za-z]*a[A-Za-z]*(?:$|[ \t])`)

// shellAllexport finds a text starting a shell with allexport on (`bash -a x.sh`, `"sh", "-ea"`,
// `bash -o allexport`, SHELLOPTS=allexport in its environment): the script it starts is not
// known here.
var shellAllexport = lazy.Regexp(`(?:^|[^A-Za-z0-9_.-])(?:ba|da|k|z|mk|po)?sh["']?[ \t,]+` +
	`(?:["']?[-+][A-Za-z]+["']?[ \t,]+|["']?[-+][oO]["']?[ \t,]+["']?\w+["']?[ \t,]+)*` +
	`["']?(?:-[A-Za-z]*a[A-Za-z]*|-o["']?[ \t,]+["']?allexport)(?:$|[\s"',\]])|SHELLOPTS[^\n]{0,64}allexport`)

// allexport records the names the text of the file path spells as set by it for what it starts
// when allexport is on in it (or a shell was started with it on anywhere: exportAll).
func (f *follower) allexport(path, text string) {
	if mutated("workspace-setters-allexport") {
		return
	}
	if f.exportAll || mayAllexport(text) && allexportOn().MatchString(text) {
		f.spelledSetters(path, text)
	}
	f.allexportStarts(text)
}

// allexportStarts notes a shell started with allexport on: every shell text read from then on
// may export what it assigns.
func (f *follower) allexportStarts(text string) {
	if !mutated("workspace-setters-allexport-starts") && mayStartAllexport(text) && shellAllexport().MatchString(text) {
		f.exportAll = true
	}
}

// mayAllexport and mayStartAllexport hold when text has the words allexportOn and
// shellAllexport need: the regexes, the setter scan's largest cost per byte, are not run over
// a large config's strings that cannot match (atk46a F7).
func mayAllexport(text string) bool {
	return mutated("workspace-setters-config-once") || strings.Contains(text, "set") ||
		strings.Contains(text, "allexport") || strings.HasPrefix(text, "#!")
}

func mayStartAllexport(text string) bool {
	return mutated("workspace-setters-config-once") || strings.Contains(text, "sh") || strings.Contains(text, "SHELLOPTS")
}

// spelledSetters records every name the text spells as set by path.
func (f *follower) spelledSetters(path, text string) {
	for i := 0; i < len(text) && !f.settersFull; {
		if !isNameByte(text[i], 0) || i > 0 && isNameByte(text[i-1], 1) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && isNameByte(text[j], 1) {
			j++
		}
		f.setter(text[i:j], path)
		i = j
	}
}
