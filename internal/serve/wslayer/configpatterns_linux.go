package wslayer

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A config string with shell syntax is read as a command line (configLines), but some are file
// patterns by their config's schema, never run: Kiro's when.patterns, lefthook's glob and
// exclude, lint-staged's keys (JSON: its lexer gives keys too), pre-commit's files and exclude.
// Read as commands their first match was protected (atk47a F2: Kiro's "**/*.py" made app/main.py
// read-only, lefthook's "**/*.md" docs/a.md). shellValues leaves them out, one occurrence per
// pattern: the same text where the schema runs it is still read.

// patternKeys are the keys whose values (a string or a list of them) the tool of a config
// file reads as file patterns, by the file's kind (patternKind).
var patternKeys = map[string]map[string]bool{
	"kiro":       {"patterns": true},
	"lefthook":   {"glob": true, "exclude": true},
	"pre-commit": {"files": true, "exclude": true},
}

// patternKind is the tool whose schema the config file names: "" for none known.
func patternKind(file string) string {
	name := filepath.Base(file)
	switch {
	case strings.HasSuffix(name, ".kiro.hook"):
		return "kiro"
	case strings.HasPrefix(strings.TrimPrefix(name, "."), "lefthook") &&
		(strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".json")):
		return "lefthook"
	case name == ".pre-commit-config.yaml" || name == ".pre-commit-config.yml":
		return "pre-commit"
	case name == ".lintstagedrc.json":
		return "lint-staged"
	}
	return ""
}

// shellValues are vals (the config's decoded strings) but the file patterns its schema names.
func shellValues(file, text string, vals []string) []string {
	kind := patternKind(file)
	if kind == "" || mutated("workspace-config-pattern-fields") {
		return vals
	}
	var doc any
	var err error
	if strings.HasSuffix(file, ".json") || kind == "kiro" {
		err = json.Unmarshal([]byte(text), &doc)
	} else if len(text) <= maxParsedConfig {
		err = yaml.Unmarshal([]byte(text), &doc)
	}
	if err != nil || doc == nil {
		return vals // read whole, as before
	}
	pats := map[string]int{}
	if m, ok := doc.(map[string]any); ok && kind == "lint-staged" {
		for k := range m {
			pats[k]++ // lint-staged's keys are globs, its values the commands
		}
	}
	patternValues(doc, patternKeys[kind], pats, 0)
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if pats[v] > 0 {
			pats[v]--
			continue
		}
		out = append(out, v)
	}
	return out
}

// patternValues counts into pats the strings under keys of v (a decoded document).
func patternValues(v any, keys map[string]bool, pats map[string]int, depth int) {
	if depth > 64 {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if keys[k] {
				patternStrings(x, pats)
				continue
			}
			patternValues(x, keys, pats, depth+1)
		}
	case []any:
		for _, x := range v {
			patternValues(x, keys, pats, depth+1)
		}
	}
}

// patternStrings counts into pats the string v, or the strings of the list v.
func patternStrings(v any, pats map[string]int) {
	switch v := v.(type) {
	case string:
		pats[v]++
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				pats[s]++
			}
		}
	}
}
