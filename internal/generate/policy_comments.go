package generate

import (
	"bytes"
	"maps"
	"strings"
)

// A policy written again (a re-run of init or its wizard) is rendered anew from the answers, with
// the template's words for every key. What the user wrote beside the keys goes into the new text
// too (trial33 F8): each comment of the old file that is not the template's goes before, or at the
// end of the line of, the same key (or table) in the new file; one whose key is gone goes to the
// end of the file under a line that says so. A comment inside a value (between an array's items)
// has no such place: the report names it, and the backup has it.

// commentSpot is where a user's comments sat in the old file: the key or table they were written
// beside, by its full path ("[t]" for a table's header, "t.k" for a key; a table of an array is
// named by its first key and value).
type commentSpot struct {
	block  []string // whole comment lines before it, as written
	inline string   // a comment after it on its last line
}

// orphanNote heads the comments whose key the new policy no longer has.
const orphanNote = "# (kept from the policy this file replaced; the keys these comments were written beside are gone)"

// carryComments returns rendered with old's own comments (those neither rendered nor oldRendered,
// the old policy as init renders it, has) put where they were: before, or after on the same line,
// the same key or table; lost are those it found no place for (inside a value).
func carryComments(old, oldRendered, rendered []byte) (out []byte, lost []string) {
	tmpl, oldTmpl := map[string]int{}, map[string]int{}
	for _, c := range tomlComments(rendered) {
		tmpl[c]++
	}
	for _, c := range tomlComments(oldRendered) {
		oldTmpl[c]++
	}
	for c, n := range oldTmpl { // the words of keys the new policy no longer has
		tmpl[c] = max(tmpl[c], n)
	}
	spots, order, tail := userComments(old, maps.Clone(tmpl))
	placed := map[string]int{}
	for _, c := range tail {
		placed[strings.TrimSpace(c)]++
	}
	for _, sp := range spots {
		for _, c := range sp.block {
			placed[strings.TrimSpace(c)]++
		}
		for _, c := range inlineParts(sp.inline) {
			placed[c]++
		}
	}
	for _, c := range tomlComments(old) {
		if placed[c] > 0 {
			placed[c]--
		} else if tmpl[c] > 0 {
			tmpl[c]--
		} else {
			lost = append(lost, c)
		}
	}
	if len(spots) == 0 && len(tail) == 0 {
		return rendered, lost
	}
	return placeComments(rendered, spots, order, tail), lost
}

// inlineParts: the comments an inline spot holds (more than one when a key was written twice).
func inlineParts(c string) []string {
	if c == "" {
		return nil
	}
	return strings.Split(c, "\x00")
}

// placeComments writes rendered with the spots' comments before or on their statements.
func placeComments(rendered []byte, spots map[string]commentSpot, order, tail []string) []byte {
	var out bytes.Buffer
	nl := newlineOf(rendered)
	for name, sp := range spots { // a key written twice (in two tables' worth): one line of them
		sp.inline = strings.ReplaceAll(sp.inline, "\x00", "  ")
		spots[name] = sp
	}
	names := statementNames(rendered)
	for i, st := range tomlStatements(rendered) {
		line := rendered[st.start:st.end]
		sp, ok := spots[names[i]]
		if !ok || names[i] == "" {
			out.Write(line)
			continue
		}
		delete(spots, names[i])
		for _, c := range sp.block {
			out.WriteString(c + nl)
		}
		inline := sp.inline
		if own := lineComment(rendered, st); own != "" && strings.Contains(inline, own) && !mutated("init-comment-template-twice") {
			// the template's words with the user's before or after them (trial38 F6: a comment
			// written before the template's had it twice on the line): the user's part
			i := strings.Index(inline, own)
			inline = strings.TrimSpace(strings.TrimSpace(inline[:i]) + "  " + strings.TrimSpace(inline[i+len(own):]))
			if inline != "" && !strings.HasPrefix(inline, "#") {
				inline = "# " + inline
			}
		}
		if inline == "" {
			out.Write(line)
			continue
		}
		// after the value, on its last line, all is comment: the user's goes at its end
		out.Write(bytes.TrimRight(line, "\r\n"))
		out.WriteString("  " + inline + nl)
	}
	var gone []string
	for _, name := range order {
		if sp, ok := spots[name]; ok {
			gone = append(append(gone, sp.block...), inlineParts(sp.inline)...)
		}
	}
	if len(gone)+len(tail) > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
		out.WriteString(nl)
	}
	if len(gone) > 0 {
		out.WriteString(nl + orphanNote + nl)
		for _, c := range gone {
			out.WriteString(c + nl)
		}
	}
	for _, c := range tail {
		out.WriteString(c + nl)
	}
	return out.Bytes()
}

// userComments reads old's comments that are not the template's (tmpl counts those, as trimmed),
// by the statement they were written beside; tail is those after the last statement.
func userComments(old []byte, tmpl map[string]int) (spots map[string]commentSpot, order, tail []string) {
	spots = map[string]commentSpot{}
	names := statementNames(old)
	var pending []string
	for i, st := range tomlStatements(old) {
		text := bytes.TrimRight(old[st.start:st.end], "\r\n")
		trimmed := strings.TrimSpace(string(text))
		if st.path == nil && !st.header {
			if strings.HasPrefix(trimmed, "#") {
				if tmpl[trimmed] > 0 {
					tmpl[trimmed]--
				} else {
					pending = append(pending, string(text))
				}
			}
			continue
		}
		inline := ""
		if c := lineComment(old, st); c != "" {
			if tmpl[c] > 0 {
				tmpl[c]--
			} else {
				inline = c
			}
		}
		if names[i] == "" || (len(pending) == 0 && inline == "") {
			continue
		}
		sp, seen := spots[names[i]]
		if !seen {
			order = append(order, names[i])
		}
		sp.block = append(sp.block, pending...)
		if inline != "" && sp.inline != "" {
			sp.inline += "\x00" + inline
		} else if inline != "" {
			sp.inline = inline
		}
		spots[names[i]], pending = sp, nil
	}
	return spots, order, pending
}

// lineComment is the comment after a header or key/value on its last line ("" for none).
func lineComment(src []byte, st tomlStmt) string {
	var end int
	if st.header {
		end = bytes.IndexByte(src[st.start:st.end], ']')
		if end < 0 {
			return ""
		}
		end += st.start
		for end < st.end && src[end] == ']' {
			end++
		}
	} else {
		end = tomlValueEnd(src, st.value)
	}
	if end > st.end {
		return ""
	}
	rest := strings.TrimSpace(string(src[end:st.end]))
	if !strings.HasPrefix(rest, "#") {
		return ""
	}
	return rest
}

// statementNames names each statement of a TOML text by its full path ("" for a blank or comment
// line, or one not read). A table of an array ([[allowlist.commands]]) is named by its first
// key and value (name = "wc"), so a comment stays with its command when another is dropped.
func statementNames(src []byte) []string {
	stmts := tomlStatements(src)
	names := make([]string, len(stmts))
	var table []string
	for i, st := range stmts {
		switch {
		case st.header:
			table = st.path
			if st.array {
				table = append(append([]string{}, st.path...), "#"+firstKeyValue(src, stmts[i+1:]))
			}
			names[i] = "[" + strings.Join(table, "\x00") + "]"
		case st.path != nil:
			names[i] = strings.Join(append(append([]string{}, table...), st.path...), "\x00")
		}
	}
	return names
}

// firstKeyValue is the first key/value of a table, as "key=value" ("" when it has none).
func firstKeyValue(src []byte, rest []tomlStmt) string {
	for _, st := range rest {
		switch {
		case st.header:
			return ""
		case st.path != nil:
			return strings.Join(st.path, ".") + "=" + string(src[st.value:tomlValueEnd(src, st.value)])
		}
	}
	return ""
}

// newlineOf is the line ending b uses.
func newlineOf(b []byte) string {
	if bytes.Contains(b, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}
