package generate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// ErrExists is returned by Merge when the file already has a server of that name and replace
// was not asked for.
var ErrExists = errors.New("a server of that name exists")

// Merge puts the server entry name into a client config's text and returns the new text. Every
// other server, key, comment and the file's indentation stay as they were. An existing entry
// of the same name is replaced only when replace is set (else ErrExists). A file that does not
// parse is an error (*SyntaxError inside) and nothing is produced from it.
func Merge(c Client, src []byte, name string, s ServerEntry, replace bool) ([]byte, error) {
	if err := c.CheckHTTP(s); err != nil {
		return nil, err
	}
	// A UTF-8 byte order mark (Windows editors write one) is kept, and the rest merged as usual.
	bom := []byte("\uFEFF")
	if rest, ok := bytes.CutPrefix(src, bom); ok {
		out, err := Merge(c, rest, name, s, replace)
		if err != nil {
			return nil, err
		}
		return append(bom, out...), nil
	}
	if c.Format == "toml" {
		return mergeTOML(c, src, name, s, replace)
	}
	return mergeJSON(c, src, name, s, replace)
}

// keyPath is where the servers object sits: a client's scope may nest it (Claude Code's local
// scope: projects → the project's path → mcpServers).
func (c Client) keyPath() []string {
	if len(c.KeyPath) > 0 {
		return c.KeyPath
	}
	return []string{c.Key}
}

// nestedJSON renders "k1": {"k2": … {"name": entry}} with the member line indented ind.
func nestedJSON(keys []string, name string, c Client, s ServerEntry, ind, unit, nl string) string {
	if len(keys) == 0 {
		nm, _ := json.Marshal(name)
		return string(nm) + ": " + entryJSON(c, s, ind, unit, nl)
	}
	k, _ := json.Marshal(keys[0])
	return string(k) + ": {" + nl + ind + unit + nestedJSON(keys[1:], name, c, s, ind+unit, unit, nl) + nl + ind + "}"
}

// entryJSON renders the entry as people write them: command first, args on one line.
func entryJSON(c Client, s ServerEntry, indent, unit, nl string) string {
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	if s.URL != "" {
		return "{" + nl + indent + unit + strings.Join(httpFieldsJSON(c, s, q), ","+nl+indent+unit) + nl + indent + "}"
	}
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = q(a)
	}
	fields := []string{`"command": ` + q(s.Command), `"args": [` + strings.Join(args, ", ") + "]"}
	var vars []string
	for _, kv := range s.Set {
		n, v, _ := strings.Cut(kv, "=")
		vars = append(vars, q(n)+": "+q(v))
	}
	if c.CanName() {
		for _, n := range s.Env {
			vars = append(vars, q(n)+": "+q(c.envRef(n)))
		}
	}
	if len(vars) > 0 {
		fields = append(fields, `"env": {`+strings.Join(vars, ", ")+"}")
	}
	extra := make([]string, 0, len(c.Entry))
	for k := range c.Entry {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	for _, k := range extra {
		fields = append(fields, q(k)+": "+q(c.Entry[k]))
	}
	return "{" + nl + indent + unit + strings.Join(fields, ","+nl+indent+unit) + nl + indent + "}"
}

// httpFieldsJSON are an HTTP entry's members: its type, the URL, and the Authorization header
// in the client's own variable syntax.
func httpFieldsJSON(c Client, s ServerEntry, q func(any) string) []string {
	h := c.HTTP
	var fields []string
	if h.Type != "" {
		fields = append(fields, `"type": `+q(h.Type))
	}
	fields = append(fields, q(h.URLKey)+": "+q(s.URL))
	if s.TokenEnv != "" && h.Auth != "" {
		fields = append(fields, `"headers": {"Authorization": `+q(strings.ReplaceAll(h.Auth, "{var}", s.TokenEnv))+"}")
	}
	return fields
}

func mergeJSON(c Client, src []byte, name string, s ServerEntry, replace bool) ([]byte, error) {
	nl := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		nl = "\r\n"
	}
	path := c.keyPath()
	if len(bytes.TrimSpace(src)) == 0 {
		unit := "  "
		return []byte("{" + nl + unit + nestedJSON(path, name, c, s, unit, unit, nl) + nl + "}" + nl), nil
	}
	root, err := parseJSONC(src)
	if err != nil {
		return nil, err
	}
	if root.kind != '{' {
		return nil, &SyntaxError{Line: 1, Col: 1, Msg: "the file is not a JSON object"}
	}
	unit := indentUnit(src, root)
	compact := minified(src, root)
	obj := root
	for i, k := range path {
		if err := obj.uniqueMember(src, k); err != nil {
			return nil, err
		}
		m := obj.member(k)
		if m == nil {
			ind := unit
			if obj != root {
				ind = lineIndent(src, obj.start) + unit
				if len(obj.members) > 0 {
					ind = lineIndent(src, obj.members[0].keyStart)
				}
			}
			if compact {
				return insertCompact(src, obj, compactJSON(nestedJSON(path[i:], name, c, s, "", "", ""))), nil
			}
			return insertMember(src, obj, nestedJSON(path[i:], name, c, s, ind, unit, nl), ind, nl), nil
		}
		if m.val.kind != '{' {
			return nil, &SyntaxError{Line: lineOf(src, m.val.start), Col: 1, Msg: fmt.Sprintf("%q is not an object", k)}
		}
		obj = m.val
	}
	if err := obj.uniqueMember(src, name); err != nil {
		return nil, err
	}
	if m := obj.member(name); m != nil {
		if !replace {
			return nil, ErrExists
		}
		ind := lineIndent(src, m.keyStart)
		entry := withMembersJSON(entryJSON(c, s, ind, unit, nl), c.keptMembersJSON(src, m.val), ind, unit, nl)
		if compact {
			entry = compactJSON(entry)
		}
		return splice(src, m.val.start, m.val.end, entry), nil
	}
	ind := unit + unit
	if len(path) > 1 {
		ind = lineIndent(src, obj.start) + unit
		if len(obj.members) > 0 {
			ind = lineIndent(src, obj.members[0].keyStart)
		}
	}
	if compact {
		return insertCompact(src, obj, compactJSON(nestedJSON(nil, name, c, s, "", "", ""))), nil
	}
	return insertMember(src, obj, nestedJSON(nil, name, c, s, ind, unit, nl), ind, nl), nil
}

// minified says whether the file is written on one line (as some tools write theirs): an entry
// then goes in compact, not half-indented on lines of its own (trial32 F7). An empty {} shows
// no style; it gets the usual indented layout.
func minified(src []byte, root *jnode) bool {
	return len(root.members) > 0 && !bytes.ContainsAny(src[root.start:root.end], "\r\n")
}

// compactJSON drops the whitespace between the tokens of text: a JSON value, or a member
// ("key": value). Text it cannot read (a comment kept from the user's entry) is left as it is.
func compactJSON(text string) string {
	var member, value bytes.Buffer
	if json.Compact(&member, []byte("{"+text+"}")) == nil {
		return member.String()[1 : member.Len()-1]
	}
	if json.Compact(&value, []byte(text)) == nil {
		return value.String()
	}
	return text
}

// insertCompact adds member text as the last member of the one-line object o, with no
// whitespace around it.
func insertCompact(src []byte, o *jnode, text string) []byte {
	if len(o.members) == 0 {
		return splice(src, o.start+1, o.end-1, text)
	}
	last := o.members[len(o.members)-1].val
	pos := last.end
	for pos < len(src) && (src[pos] == ' ' || src[pos] == '\t') {
		pos++
	}
	if pos < len(src) && src[pos] == ',' { // a trailing comma (JSONC): the entry goes after it
		return splice(src, pos+1, pos+1, text)
	}
	return splice(src, last.end, last.end, ","+text)
}

// insertMember adds `text` as the last member of object o, indented ind.
func insertMember(src []byte, o *jnode, text, ind, nl string) []byte {
	if len(o.members) == 0 {
		closeInd := lineIndent(src, o.end-1)
		if !bytes.Contains(src[o.start:o.end], []byte("\n")) {
			closeInd = lineIndent(src, o.start)
		}
		return splice(src, o.start+1, o.end-1, nl+ind+text+nl+closeInd)
	}
	if len(o.members) > 0 {
		ind = lineIndent(src, o.members[0].keyStart)
	}
	last := o.members[len(o.members)-1].val
	// After the last value: an existing trailing comma, then the rest of its line (a comment).
	pos := last.end
	comma := false
	for pos < len(src) && (src[pos] == ' ' || src[pos] == '\t' || src[pos] == ',') {
		comma = comma || src[pos] == ','
		pos++
	}
	if pos+1 < len(src) && src[pos] == '/' && src[pos+1] == '/' {
		for pos < len(src) && src[pos] != '\n' && src[pos] != '\r' {
			pos++
		}
	} else if !comma {
		pos = last.end
	}
	out := splice(src, pos, pos, nl+ind+text)
	if !comma {
		out = splice(out, last.end, last.end, ",")
	}
	return out
}

func splice(src []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(src)+len(text))
	out = append(out, src[:from]...)
	out = append(out, text...)
	return append(out, src[to:]...)
}

// lineIndent is the whitespace that starts the line holding pos.
func lineIndent(src []byte, pos int) string {
	start := bytes.LastIndexByte(src[:pos], '\n') + 1
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

// indentUnit is the file's indentation step: that of the top object's first member.
func indentUnit(src []byte, root *jnode) string {
	if len(root.members) > 0 {
		if u := lineIndent(src, root.members[0].keyStart); u != "" && bytes.Contains(src[root.start:root.members[0].keyStart], []byte("\n")) {
			return u
		}
	}
	return "  "
}

func lineOf(src []byte, pos int) int { return bytes.Count(src[:pos], []byte("\n")) + 1 }

// tomlBlock is the entry's [key] table as init writes it.
func tomlBlock(c Client, key string, s ServerEntry) string {
	if s.URL != "" {
		block := "[" + key + "]\n" + c.HTTP.URLKey + " = " + tomlString(s.URL) + "\n"
		if s.TokenEnv != "" && c.HTTP.TokenVar != "" {
			block += c.HTTP.TokenVar + " = " + tomlString(s.TokenEnv) + "\n"
		}
		return block
	}
	block := "[" + key + "]\ncommand = " + tomlString(s.Command) + "\nargs = " + tomlList(s.Args) + "\n"
	if len(s.Env) > 0 && c.CanName() && c.Env.ListKey != "" {
		block += c.Env.ListKey + " = " + tomlList(s.Env) + "\n"
	}
	if len(s.Set) > 0 {
		block += "env = " + tomlEnvTable(s.Set) + "\n"
	}
	return block
}

// tomlEnvTable is NAME=value items as an inline table: { NAME = "value", … }.
func tomlEnvTable(set []string) string {
	kvs := make([]string, len(set))
	for i, kv := range set {
		n, v, _ := strings.Cut(kv, "=")
		kvs[i] = tomlKey(n) + " = " + tomlString(v)
	}
	return "{ " + strings.Join(kvs, ", ") + " }"
}

func mergeTOML(c Client, src []byte, name string, s ServerEntry, replace bool) ([]byte, error) {
	var doc map[string]any
	if _, err := decodeTOML(src, &doc); err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			return nil, se
		}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// Locate by the byte offset: the parser's own line number is one too far when the
			// problem is the end of a line (an unclosed [table).
			line, col := pe.Position.Line, pe.Position.Col
			if off := pe.Position.Start; off >= 0 && off <= len(src) {
				line = lineOf(src, off)
				col = utf8.RuneCount(src[bytes.LastIndexByte(src[:off], '\n')+1:off]) + 1
			}
			msg := strings.ReplaceAll(pe.Message, `'\n'`, "the end of the line")
			return nil, &SyntaxError{Line: line, Col: col, Msg: msg}
		}
		return nil, &SyntaxError{Line: 1, Col: 1, Msg: err.Error()}
	}
	key := c.Key + "." + tomlKey(name)
	block := tomlBlock(c, key, s)
	if inlineTable(src, c.Key) && !mutated("init-toml-inline-servers") {
		// TOML lets nothing extend an inline table: a [mcp_servers.NAME] table after it makes a
		// file Codex refuses whole (its other settings and servers with it), which init's own,
		// lenient reader would go on reading (trial32 F12).
		return nil, fmt.Errorf("%s is written as one inline table (%s = { … }), which TOML lets no [%s] table extend: init cannot add its entry to it. "+
			"Write the servers as [%s.NAME] tables, or add the entry inside the braces by hand: %s = { command = %s, args = %s }",
			c.Key, c.Key, key, c.Key, tomlKey(name), tomlString(s.Command), tomlList(s.Args))
	}
	servers, _ := doc[c.Key].(map[string]any)
	if _, exists := servers[name]; !exists {
		out := append([]byte(nil), src...)
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		if len(bytes.TrimSpace(out)) > 0 {
			out = append(out, '\n')
		}
		out = append(out, block...)
		if err := c.checkTOMLEdit(doc, out, name, block, "added"); err != nil && !mutated("init-toml-add-unchecked") {
			return nil, err
		}
		return out, nil
	}
	if !replace {
		return nil, ErrExists
	}
	if old, ok := servers[name].(map[string]any); ok {
		kept, err := c.keptTOML(name, old)
		if err != nil {
			return nil, err
		}
		block += kept
	}
	res, found := replaceTOMLTables(src, c.Key, name, block)
	if !found {
		return nil, fmt.Errorf("%s.%s is defined inline, not as a [%s] table: edit it by hand", c.Key, name, key)
	}
	if err := c.checkTOMLEdit(doc, res, name, block, "replaced"); err != nil && !mutated("init-toml-replace-unchecked") {
		return nil, err
	}
	return res, nil
}

// replaceTOMLTables replaces the [key.name] table and its sub-tables, up to the next other
// table, by block. Its arrays of tables ([[key.name.x]]) go too: keptTOML writes them again, and
// left in place each element would be there twice. found = false: there is no such table.
func replaceTOMLTables(src []byte, key, name, block string) (res []byte, found bool) {
	entry := []string{key, name}
	var out strings.Builder
	in, done := false, false
	for _, st := range tomlStatements(src) {
		switch {
		case st.header && hasKeyPrefix(st.path, entry) && (!st.array || len(st.path) > 2) && (!st.array || !mutated("init-force-toml-arrays-twice")):
			if !in && !done {
				out.WriteString(block)
			}
			in = true
			continue
		case in && st.header:
			in, done = false, true
			out.WriteString("\n") // the blank line that separated the old table from this one
		}
		if !in {
			out.Write(src[st.start:st.end])
		}
	}
	return []byte(out.String()), done || in
}

// inlineTable says whether the top-level table key is given its value by an assignment before
// the file's first table header (key = { … }, an inline table), its statements read as TOML
// (the key decoded: "mcp\u005Fservers" is the same key; a line of a multi-line string or array
// is no statement).
func inlineTable(src []byte, key string) bool {
	for _, st := range tomlStatements(src) {
		if st.header {
			return false
		}
		if slices.Equal(st.path, []string{key}) && st.value < len(src) && src[st.value] == '{' {
			return true
		}
	}
	return false
}

// checkTOMLEdit: init's edits of a TOML file are line-based, to keep every other line as
// written, so a line that only looks like a table header or a key (inside a multi-line string or
// array) would have it edit the wrong place: a result that does not parse, or that lost or moved
// another table's keys. The result must hold the old document with only entry name changed,
// and that to exactly block; and it must extend no inline table (TOML 1.0 and Codex refuse
// that, init's reader takes it). Else a refusal to edit the file, saying to edit it by hand.
func (c Client) checkTOMLEdit(old map[string]any, out []byte, name, block, done string) error {
	var want map[string]any
	if _, err := decodeTOML([]byte(block), &want); err != nil {
		return c.editRefused(name, done, err.Error())
	}
	servers, _ := want[c.Key].(map[string]any)
	return c.checkTOMLEntry(old, out, name, servers[name], done)
}

// checkTOMLEntry is checkTOMLEdit's comparison: out holds old with entry name now want.
func (c Client) checkTOMLEntry(old map[string]any, out []byte, name string, want any, done string) error {
	if p, line, found := tomlInlineExtended(out); found && !mutated("init-toml-strict") {
		return c.editRefused(name, done, fmt.Sprintf("the result's line %d would extend %s, an inline table, which TOML lets nothing extend (Codex refuses such a file whole)",
			line, strings.Join(p, ".")))
	}
	var got map[string]any
	if _, err := decodeTOML(out, &got); err != nil {
		return c.editRefused(name, done, "the result would not parse")
	}
	// rest is a document without the entry (a copy: the documents are left as they are).
	rest := func(doc map[string]any) (map[string]any, any) {
		servers, _ := doc[c.Key].(map[string]any)
		r, s := map[string]any{}, map[string]any{}
		for k, v := range doc {
			r[k] = v
		}
		for k, v := range servers {
			s[k] = v
		}
		entry := s[name]
		delete(s, name)
		r[c.Key] = s
		return r, entry
	}
	gotRest, gotEntry := rest(got)
	oldRest, _ := rest(old)
	if !sameTOMLValue(gotRest, oldRest) || !sameTOMLValue(gotEntry, want) {
		return c.editRefused(name, done, "a multi-line string or array holds a line that reads as a table header or a key, and the result would not be the intended entry with every other key as it was")
	}
	return nil
}

// editRefused says that entry name cannot be edited line by line in this file, and why.
func (c Client) editRefused(name, done, why string) error {
	return fmt.Errorf("%s.%s cannot be %s line by line in this file (%s): edit the entry by hand", c.Key, tomlKey(name), done, why)
}

// sameTOMLValue compares decoded TOML values as TOML writes them: a nan (a user's key may hold
// one) is not reflect.DeepEqual to itself.
func sameTOMLValue(a, b any) bool {
	enc := func(v any) (string, error) {
		var buf bytes.Buffer
		err := toml.NewEncoder(&buf).Encode(map[string]any{"v": v})
		return buf.String(), err
	}
	ea, err1 := enc(a)
	eb, err2 := enc(b)
	if err1 != nil || err2 != nil {
		return reflect.DeepEqual(a, b)
	}
	return ea == eb
}

func tomlKey(k string) string {
	if bareKey(k) {
		return k
	}
	return tomlString(k)
}
