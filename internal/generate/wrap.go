package generate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// init --wrap finds the stdio servers already in a client's config and rewrites chosen entries
// to run through `mcpsandbox wrap`; init --unwrap puts each back byte for byte. Neither ever
// re-renders a config: an entry is found as a byte span (a tokenizing pass over the JSON/JSONC,
// or its tables in Codex's TOML), and only the bytes inside that span change.

// WrapScheme is the scheme init --wrap writes policies for, which is also the mcpsandbox command
// a wrapped entry runs (issue #26's contract: the entry's args are [scheme, "--policy", P, "--",
// original command, original args…]). The caller asks the registry for it: generate names no scheme.
type WrapScheme string

// WrapServer is one server entry in a client's config, as init --wrap sees it.
type WrapServer struct {
	Target  Target
	Name    string
	Command string
	Args    []string
	Env     map[string]string // the entry's env values: only to start it for the proof, never written elsewhere
	// EnvNames are the variables the entry hands the server (its env's keys, Codex's env_vars),
	// sorted: the wrap policy passes these names through, never their values.
	EnvNames []string
	URL      string // an HTTP or SSE entry's address ("" = stdio)
	Skip     string // why init --wrap leaves it alone ("" = it can be wrapped)
	Wrapped  bool   // it runs through mcpsandbox wrap already
	Policy   string // when wrapped: the policy its args name
	Keys     []string
	Raw      []byte // the entry's bytes (JSON: its value; TOML: its tables)
}

func (s WrapServer) String() string {
	if s.URL != "" {
		return s.URL
	}
	return ServerEntry{Command: s.Command, Args: s.Args}.String()
}

// Args are the arguments of a wrapped entry: the command, the policy, and the original command.
func (w WrapScheme) Args(policyPath, command string, args []string) []string {
	return append([]string{string(w), "--policy", policyPath, "--", command}, args...)
}

// bomLen is the length of a UTF-8 byte order mark starting src (0 = none).
func bomLen(src []byte) int {
	if bytes.HasPrefix(src, []byte("\uFEFF")) {
		return 3
	}
	return 0
}

// ListServers lists the server entries of the target's servers object (or Codex's table), in
// file order. A config that does not parse is an error; a file without servers lists none.
func (w WrapScheme) ListServers(t Target, src []byte, lookPath func(string) (string, error)) ([]WrapServer, error) {
	out, err := listEntries(t, src)
	if err != nil {
		return nil, &ConfigError{Path: t.Path, Err: err}
	}
	for i := range out {
		out[i].judge(w, lookPath)
	}
	return out, nil
}

// listEntries lists the server entries of the target's config text, in its format.
func listEntries(t Target, src []byte) ([]WrapServer, error) {
	if t.Client.Format == "toml" {
		return listTOML(t, src)
	}
	return listJSON(t, src)
}

func listJSON(t Target, src []byte) ([]WrapServer, error) {
	body := src[bomLen(src):]
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	root, err := parseJSONC(body)
	if err != nil {
		return nil, err
	}
	obj := root
	for _, k := range t.Client.keyPath() {
		if obj.kind != '{' {
			return nil, nil
		}
		m := obj.member(k)
		if m == nil {
			return nil, nil
		}
		obj = m.val
	}
	if obj.kind != '{' {
		return nil, nil
	}
	var out []WrapServer
	for i, m := range obj.members {
		s := WrapServer{Target: t, Name: m.key, Keys: append(slices.Clone(t.Client.keyPath()), m.key), Raw: body[m.val.start:m.val.end]}
		var v map[string]any
		if err := obj.uniqueMember(body, m.key); err != nil {
			if slices.IndexFunc(obj.members, func(o jmember) bool { return o.key == m.key }) < i {
				continue // listed once, with why
			}
			s.Skip = "its name is written twice in the file (clients read the last): remove one"
		} else if m.val.kind != '{' {
			s.Skip = "its entry is not an object"
		} else if err := decodeJSONC(s.Raw, &v); err != nil {
			s.Skip = "its entry does not decode: " + err.Error()
		} else {
			s.fill(v, t.Client)
		}
		out = append(out, s)
	}
	return out, nil
}

// fill takes the entry's fields: command, args, env (and Codex's env_vars), and an address.
func (s *WrapServer) fill(v map[string]any, c Client) {
	s.Command, _ = v["command"].(string)
	if a, ok := v["args"].([]any); ok {
		for _, x := range a {
			str, ok := x.(string)
			if !ok {
				s.Skip = fmt.Sprintf("its args hold a non-string (%v)", x)
			}
			s.Args = append(s.Args, str)
		}
	}
	if env, ok := v["env"].(map[string]any); ok {
		s.Env = map[string]string{}
		for k, x := range env {
			str, ok := x.(string)
			if !ok {
				str = fmt.Sprint(x)
			}
			s.Env[k] = str
			s.EnvNames = append(s.EnvNames, k)
		}
	}
	if c.Env != nil && c.Env.ListKey != "" {
		if l, ok := v[c.Env.ListKey].([]any); ok {
			for _, x := range l {
				if n, ok := x.(string); ok && !slices.Contains(s.EnvNames, n) {
					s.EnvNames = append(s.EnvNames, n)
				}
			}
		}
	}
	sort.Strings(s.EnvNames)
	for _, k := range []string{"url", "httpUrl", "serverUrl"} {
		if u, ok := v[k].(string); ok && u != "" {
			s.URL = u
		}
	}
	if typ, _ := v["type"].(string); s.URL == "" && s.Command == "" && typ != "" && typ != "stdio" {
		s.URL = "(" + typ + ")"
	}
}

// judge decides whether the entry can be wrapped, and why not.
func (s *WrapServer) judge(w WrapScheme, lookPath func(string) (string, error)) {
	if s.Skip != "" {
		return
	}
	base := strings.TrimSuffix(filepath.Base(s.Command), ".exe")
	ours := strings.HasPrefix(base, "mcpsandbox") ||
		len(s.Args) > 0 && s.Args[0] == string(w) && isSelf(s.Command)
	switch {
	case s.URL != "":
		s.Skip = "it is reached over HTTP/SSE (" + s.URL + "), not started by the client: there is no process to sandbox"
	case s.Command == "":
		s.Skip = "it has no command"
	case len(s.Args) > 0 && s.Args[0] == string(w) && ours:
		s.Wrapped = true
		if i := slices.Index(s.Args, "--policy"); i >= 0 && i+1 < len(s.Args) {
			s.Policy = s.Args[i+1]
		}
		s.Skip = "it runs through mcpsandbox wrap already"
		if s.Policy != "" {
			s.Skip += " (policy " + s.Policy + ")"
		}
	case ours:
		s.Skip = "it is mcpsandbox's own sandbox server"
	case !utf8.Valid(s.Raw):
		s.Skip = "its entry is not valid UTF-8"
	case lookPath != nil:
		if _, err := lookPath(s.Command); err != nil {
			s.Skip = fmt.Sprintf("its command %q cannot be found here: install it first, or fix the entry", s.Command)
		}
	}
}

// isSelf: the command is this very binary, under a name of the user's (built as ~/bin/msb): the
// entries init wrote with it are mcpsandbox's all the same, not servers to wrap again.
func isSelf(cmd string) bool {
	if mutated("init-wrap-self-by-file") || !filepath.IsAbs(cmd) {
		return false
	}
	self, err := os.Executable()
	if err != nil {
		return false
	}
	a, err := os.Stat(cmd)
	if err != nil {
		return false
	}
	b, err := os.Stat(self)
	return err == nil && os.SameFile(a, b)
}

// decodeJSONC decodes one JSONC value (comments and trailing commas allowed).
func decodeJSONC(b []byte, v any) error {
	return json.Unmarshal(stripJSONC(b), v)
}

// stripJSONC turns JSONC into JSON: comments become spaces, trailing commas go.
func stripJSONC(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(b)-1)
			out = append(out, b[i:j+1]...)
			i = j
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			i += end + 3
			out = append(out, ' ')
		case c == ',':
			if k := skipJSONCSpace(b, i+1); k < len(b) && (b[k] == '}' || b[k] == ']') {
				out = append(out, ' ') // a trailing comma
				continue
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

// skipJSONCSpace is the position of the first byte at or after i that is not space or a comment.
func skipJSONCSpace(b []byte, i int) int {
	for i < len(b) {
		switch {
		case b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r':
			i++
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return len(b)
			}
			i += end + 4
		default:
			return i
		}
	}
	return i
}

// locateEntry finds the entry at keys (JSON: the path of keys to it; TOML: [table key, name])
// and returns its byte span in src, or found = false.
func locateEntry(format string, src []byte, keys []string) (start, end int, found bool, err error) {
	if format == "toml" {
		return locateTOML(src, keys[0], keys[len(keys)-1])
	}
	b := bomLen(src)
	root, err := parseJSONC(src[b:])
	if err != nil {
		return 0, 0, false, err
	}
	n := root
	for _, k := range keys {
		if n.kind != '{' {
			return 0, 0, false, nil
		}
		if err := n.uniqueMember(src[b:], k); err != nil { // init would edit the first, clients read the last
			return 0, 0, false, err
		}
		m := n.member(k)
		if m == nil {
			return 0, 0, false, nil
		}
		n = m.val
	}
	return b + n.start, b + n.end, true, nil
}

// wrapEntryJSON rewrites one entry's bytes: command becomes bin, args the wrap arguments; every
// other member, comment and space stays.
func wrapEntryJSON(raw []byte, bin string, args []string) ([]byte, error) {
	n, err := parseJSONC(raw)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"command", "args"} {
		if err := n.uniqueMember(raw, k); err != nil {
			return nil, err
		}
	}
	cmd, arg := n.member("command"), n.member("args")
	if cmd == nil {
		return nil, errors.New("the entry has no command")
	}
	type edit struct {
		from, to int
		text     string
	}
	edits := []edit{{cmd.val.start, cmd.val.end, jsonText(bin)}}
	if arg != nil {
		edits = append(edits, edit{arg.val.start, arg.val.end, jsonText(args)})
	} else {
		sep := " "
		if bytes.Contains(raw[:cmd.keyStart], []byte("\n")) {
			nl := "\n"
			if bytes.Contains(raw, []byte("\r\n")) {
				nl = "\r\n"
			}
			sep = nl + lineIndent(raw, cmd.keyStart)
		}
		edits = append(edits, edit{cmd.val.end, cmd.val.end, "," + sep + `"args": ` + jsonText(args)})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	out := raw
	for _, e := range edits {
		out = splice(out, e.from, e.to, e.text)
	}
	return out, nil
}

// jsonText is v as one line of JSON, without HTML escapes.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	s := strings.TrimSuffix(b.String(), "\n")
	if l, ok := v.([]string); ok && len(l) > 0 {
		s = strings.ReplaceAll(s, `","`, `", "`) // as people write a list; no string here holds `","` …
		// … unless one does: then the plain encoding, which is as valid.
		var back []string
		if json.Unmarshal([]byte(s), &back) != nil || !slices.Equal(back, l) {
			s = strings.TrimSuffix(b.String(), "\n")
		}
	}
	return s
}

// readConfig reads a client config; a missing file is an empty one.
func readConfig(path string) ([]byte, bool, error) {
	b, err := ReadConfigFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	return b, true, nil
}

// WrapTargets are the configs init --wrap looks in: those of the given client specs (ID or
// ID:SCOPE), or with none every client's every scope whose config file exists. Claude Code's
// local and user scopes share ~/.claude.json and are two targets (their servers sit under
// different keys).
func WrapTargets(e Env, specs []string) ([]Target, error) {
	var out []Target
	add := func(t Target) {
		if !slices.ContainsFunc(out, func(o Target) bool { return o.Path == t.Path && slices.Equal(o.Client.KeyPath, t.Client.KeyPath) }) {
			out = append(out, t)
		}
	}
	for _, s := range specs {
		t, err := ResolveTarget(s, e)
		if err != nil {
			return nil, err
		}
		add(t)
	}
	if len(specs) > 0 {
		return out, nil
	}
	for _, c := range Clients() {
		scopes := c.Scopes()
		slices.SortStableFunc(scopes, func(a, b string) int { // the default scope first
			return boolInt(b == c.Scope()) - boolInt(a == c.Scope())
		})
		for _, scope := range scopes {
			t, err := ResolveTarget(c.ID+":"+scope, e)
			if err != nil {
				return nil, err
			}
			if st, err := os.Stat(t.Path); err == nil && st.Mode().IsRegular() {
				add(t)
			}
		}
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Spec is the target as --client names it: ID, or ID:SCOPE for a scope not the default.
func (t Target) Spec() string { return t.Client.ID + scopeSuffix(t) }
