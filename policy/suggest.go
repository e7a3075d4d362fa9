package policy

import (
	"reflect"
	"strings"
	"sync"
)

// suggestKey names the known key an unknown one was probably meant to be ("allowlist.comands" ->
// "allowlist.commands"), judged among the keys the same table takes; "" when nothing is close.
func suggestKey(unknown string) string {
	parts := strings.Split(stripIndexes(unknown), ".")
	t := shapeType()
	prefix := ""
	for _, name := range parts {
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return "" // inside a map (env): any key is valid there
		}
		known := tomlKeys(t)
		f, ok := known[name]
		if !ok {
			best, bestD := "", 3
			for k := range known {
				if d := EditDistance(name, k); d < bestD || (d == bestD && k < best) {
					best, bestD = k, d
				}
			}
			if best == "" || bestD > len(name)/2 {
				if w := byWords(name, known); w != "" {
					return prefix + w
				}
				return ""
			}
			return prefix + best
		}
		prefix += name + "."
		t = f.Type
	}
	return ""
}

// byWords names the one known key that the unknown name spells with dashes or fewer words
// ("max_output" and init's flag "max-output" for "max_output_bytes"; trial30 F9), or "".
func byWords(name string, known map[string]reflect.StructField) string {
	name = strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	if _, ok := known[name]; ok {
		return name
	}
	found := ""
	for k := range known {
		if strings.HasPrefix(k, name+"_") || strings.HasSuffix(k, "_"+name) {
			if found != "" {
				return "" // two keys: no guess
			}
			found = k
		}
	}
	return found
}

// tomlKeys maps a struct's TOML key names to their fields.
func tomlKeys(t reflect.Type) map[string]reflect.StructField {
	if m, ok := keysOf.Load(t); ok {
		return m.(map[string]reflect.StructField) // read only: every caller only looks up
	}
	m := tomlKeysOf(t)
	keysOf.Store(t, m)
	return m
}

// keysOf caches tomlKeys per struct type: the key check asks for every segment of every key of
// a file, and building the map each time was half of a policy's load.
var keysOf sync.Map

func tomlKeysOf(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// Nearest is the word of words within two edits of w, the closest ("" = none): every
// did-you-mean of a name (a flag, a client, a scheme, a network preset) uses it.
func Nearest(w string, words []string) string {
	best, bestD := "", 3
	for _, c := range words {
		if d := EditDistance(w, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance, with a swap of two neighbours counting as one edit.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
