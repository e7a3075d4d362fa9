package generate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// transportKeys say how a client reaches a server (what it starts, with which environment and
// directory, or which URL with which headers and token) in any client's entry. An entry
// replaced under --force (moved to another policy, another scheme, stdio to HTTP) loses these:
// they belong to the server init no longer writes. Every other key in the old entry is the
// user's setting of that server in the client (Gemini CLI's timeout, trust, includeTools;
// Codex's startup_timeout_sec, enabled; a client's disabled or autoApprove) and is carried
// into the new entry (trial19: --force dropped them).
var transportKeys = map[string]bool{
	"command": true, "args": true, "env": true, "envFile": true, "env_file": true, "cwd": true,
	"type": true, "transport": true, "url": true, "httpUrl": true, "serverUrl": true,
	"headers": true, "http_headers": true, "env_http_headers": true,
	"bearer_token_env_var": true, "env_vars": true,
}

// reachKeys say, beside transportKeys, how a client authenticates to a server or where and how
// it starts it: Claude Code's headersHelper (a command whose output becomes the request headers)
// and oauth; Cursor's auth; Gemini CLI's oauth, authProviderType (Google credentials, which
// throw without a googleapis.com URL), targetAudience, targetServiceAccount and tcp; Codex's
// oauth, oauth_resource, scopes, bearer_token, client_id, client_secret_env_var (a stdio entry
// holding one of these fails Codex's whole config.toml: "oauth_resource is not supported for
// stdio") and environment_id (where the server runs; remote stdio needs an absolute cwd); VS
// Code's dev (it restarts the server on the old one's source files and starts it under a
// debugger). They belong to the server init replaces: carried into init's entry they would send
// the old server's credentials to the new one, or make the entry one the client refuses.
var reachKeys = map[string]bool{
	"headersHelper": true, "oauth": true, "auth": true,
	"authProviderType": true, "targetAudience": true, "targetServiceAccount": true, "tcp": true,
	"oauth_resource": true, "scopes": true, "bearer_token": true, "client_id": true,
	"client_secret_env_var": true, "environment_id": true, "dev": true,
}

// keptKey reports whether an old entry's key k is the user's, to carry into init's new entry.
func (c Client) keptKey(k string) bool {
	return c.usersKey(k) && !mutated("init-force-drops-keys")
}

// usersKey reports whether an entry's key k is a setting of the user's in the client, not part
// of how the client starts or reaches the server.
func (c Client) usersKey(k string) bool {
	if transportKeys[k] {
		return false
	}
	if reachKeys[k] && !mutated("init-force-keeps-auth-keys") {
		return false
	}
	if _, ok := c.Entry[k]; ok {
		return false
	}
	if c.HTTP != nil && (k == c.HTTP.URLKey || k == c.HTTP.TokenVar) {
		return false
	}
	return c.Env == nil || k != c.Env.ListKey
}

// sameServer reports whether two raw entries (rawEntry's) start or reach the same server the
// same way, whatever settings of the user's either holds (Gemini CLI's trust, a timeout).
func (c Client) sameServer(a, b []byte) bool {
	if sameEntry(c.Format, a, b) {
		return true
	}
	if mutated("init-shadow-user-keys") {
		return false
	}
	server := func(raw []byte) (map[string]any, bool) {
		var doc map[string]any
		if c.Format == "toml" {
			if _, err := decodeTOML(raw, &doc); err != nil {
				return nil, false
			}
			tables, _ := doc[c.Key].(map[string]any)
			if len(tables) != 1 {
				return nil, false
			}
			for _, t := range tables {
				doc, _ = t.(map[string]any)
			}
		} else if decodeJSONC(raw, &doc) != nil {
			return nil, false
		}
		if doc == nil {
			return nil, false
		}
		out := map[string]any{}
		for k, v := range doc {
			// every key but the client's settings of the server: one init does not know may
			// change what runs (atk39b F1)
			run := !settingKeys[k]
			if mutated("init-portable-same-transport") {
				run = !c.usersKey(k)
			}
			if run {
				out[k] = v
			}
		}
		return out, true
	}
	ma, ok1 := server(a)
	mb, ok2 := server(b)
	return ok1 && ok2 && reflect.DeepEqual(ma, mb)
}

// keptMembersJSON is the old entry's members init carries over, as written (key and value).
func (c Client) keptMembersJSON(src []byte, old *jnode) []string {
	if old == nil || old.kind != '{' {
		return nil
	}
	var kept []string
	for _, m := range old.members {
		if c.keptKey(m.key) {
			kept = append(kept, string(src[m.keyStart:m.val.end]))
		}
	}
	return kept
}

// withMembersJSON adds members to an entry entryJSON rendered at indent.
func withMembersJSON(entry string, kept []string, indent, unit, nl string) string {
	if len(kept) == 0 {
		return entry
	}
	body := strings.TrimSuffix(entry, nl+indent+"}")
	return body + "," + nl + indent + unit + strings.Join(kept, ","+nl+indent+unit) + nl + indent + "}"
}

// keptTOML renders the old [key.name] table's user keys (values and sub-tables) to follow
// init's own lines in the new table.
func (c Client) keptTOML(name string, old map[string]any) (string, error) {
	kept := map[string]any{}
	for k, v := range old {
		if c.keptKey(k) {
			kept[k] = v
		}
	}
	if len(kept) == 0 {
		return "", nil
	}
	var b bytes.Buffer
	enc := toml.NewEncoder(&b)
	enc.Indent = ""
	if err := enc.Encode(map[string]any{c.Key: map[string]any{name: kept}}); err != nil {
		return "", fmt.Errorf("carry over the keys of your own in %s.%s (%s): %w; edit the entry by hand", c.Key, name, strings.Join(sortedKeys(kept), ", "), err)
	}
	// The encoder starts with the headers of [key] and [key.name], which init's block has.
	lines := strings.SplitAfter(b.String(), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "[") || !strings.HasPrefix(lines[1], "[") {
		return "", fmt.Errorf("carry over the keys of your own in %s.%s: unexpected encoding; edit the entry by hand", c.Key, name)
	}
	var out strings.Builder
	prev := "["
	for _, l := range lines[2:] {
		if strings.HasPrefix(l, "[") && !strings.HasPrefix(prev, "[") && strings.TrimSpace(prev) != "" {
			out.WriteString("\n") // a blank line before a sub-table that follows values
		}
		out.WriteString(l)
		prev = l
	}
	return out.String(), nil
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// entryDoc is entry name in src, decoded (nil: no such entry, or it does not decode).
func entryDoc(t Target, src []byte, name string) map[string]any {
	raw, ok := rawEntry(t, src, name)
	if !ok {
		return nil
	}
	var doc map[string]any
	if t.Client.Format == "toml" {
		if _, err := decodeTOML(raw, &doc); err != nil {
			return nil
		}
		tables, _ := doc[t.Client.Key].(map[string]any)
		doc = nil
		for _, v := range tables {
			doc, _ = v.(map[string]any)
		}
	} else if decodeJSONC(raw, &doc) != nil {
		return nil
	}
	return doc
}

// entryKeys are the keys of entry name in src (nil: no such entry, or it does not decode).
func entryKeys(t Target, src []byte, name string) []string {
	return sortedKeys(entryDoc(t, src, name))
}

// switchedOff reports whether entry name in src is one the client does not start: "disabled":
// true (Claude Desktop, Cursor, Windsurf, Cline) or Codex's enabled = false. Kept from an entry
// --force replaced, it leaves init's server written and proven but never started, which the
// report must say (attack round atk22b).
func switchedOff(t Target, src []byte, name string) bool {
	if mutated("init-force-off-silent") {
		return false
	}
	doc := entryDoc(t, src, name)
	return doc["disabled"] == true || doc["enabled"] == false
}

// keptAndDropped names the keys of the replaced entry name in old that its replacement in
// merged carries over (keptKey), and those it drops: how the old entry started or reached its
// server (env, cwd, headers), gone with it (only the backup has them).
func keptAndDropped(t Target, old, merged []byte, name string) (kept, dropped []string) {
	now := entryKeys(t, merged, name)
	for _, k := range entryKeys(t, old, name) {
		switch {
		case t.Client.keptKey(k):
			kept = append(kept, k)
		case !slices.Contains(now, k):
			dropped = append(dropped, k)
		}
	}
	return kept, dropped
}

// trustKeys say, in an entry, that the client runs the server's tools without asking the user
// (Gemini CLI's trust, autoApprove and alwaysAllow where a client takes them, Codex's approval modes:
// default_tools_approval_mode and tools.<name>.approval_mode). They are the user's and are
// kept, but the trust was given to the server init replaced (atk22b: kept without a word).
var trustKeys = []string{"trust", "autoApprove", "alwaysAllow", "default_tools_approval_mode", "tools"}

// trustKept is each kept trust key of entry name in src, with its value ("trust = true").
func trustKept(t Target, src []byte, name string, kept []string) []string {
	if mutated("init-force-trust-silent") {
		return nil
	}
	doc := entryDoc(t, src, name)
	var out []string
	for _, k := range trustKeys {
		v, ok := doc[k]
		if !ok || !slices.Contains(kept, k) || v == false {
			continue
		}
		if l, isList := v.([]any); isList && len(l) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s = %s", k, compactValue(v)))
	}
	return out
}

// compactValue is v in one short line for a report.
func compactValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 120 {
		return string(b[:117]) + "..."
	}
	return string(b)
}

// toolAllowKeys hold, in an entry, the only tools the client offers of its server: Gemini CLI's
// includeTools, Codex's enabled_tools. Kept from the entry --force replaced, they name the old
// server's tools (another scheme's: run_allowed_command, not run_command), and the client would
// offer none of init's.
var toolAllowKeys = []string{"includeTools", "enabled_tools"}

// allowedTools is the kept tool allow-list of entry name in src (nil: none).
func allowedTools(t Target, src []byte, name string) []string {
	doc := entryDoc(t, src, name)
	for _, k := range toolAllowKeys {
		list, ok := doc[k].([]any)
		if !ok {
			continue
		}
		out := []string{}
		for _, v := range list {
			if s, ok := v.(string); ok {
				name, _, _ := strings.Cut(s, "(") // Gemini CLI takes "tool(…)" for tool
				out = append(out, strings.TrimSpace(name))
			}
		}
		return out // empty: the client offers none (Gemini CLI: !includeTools || includeTools.some(…))
	}
	return nil
}

// toolsLeftOut are the server's tools a kept allow-list leaves out.
func toolsLeftOut(allowed, tools []string) []string {
	if allowed == nil || mutated("init-force-tools-filter-silent") {
		return nil
	}
	var out []string
	for _, tool := range tools {
		if !slices.Contains(allowed, tool) {
			out = append(out, tool)
		}
	}
	return out
}

// settingKeys are the keys of an entry known to set only how the client treats a server it runs
// (a timeout, which of its tools, whether it asks first, whether it starts it at all): never
// what it starts, with which environment, where, or how it reaches it. Judging two entries
// "the same server" every other key counts, known to init or not (atk39b F1: a list of
// transport keys left a committed entry's env, cwd and envFile out, and the client started
// another program under init's own command): a key init does not know may change what runs.
var settingKeys = map[string]bool{
	"timeout": true, "trust": true, "includeTools": true, "excludeTools": true, "description": true,
	"disabled": true, "enabled": true, "autoApprove": true, "alwaysAllow": true, "disabledTools": true,
	"startup_timeout_sec": true, "tool_timeout_sec": true, "enabled_tools": true, "disabled_tools": true,
	"default_tools_approval_mode": true, "tools": true,
}

// runDiff names the keys on which two decoded entries differ in what runs or how: every key
// but the client's settings of the server (settingKeys), known to init or not. None: the same
// server, started or reached the same way.
func runDiff(a, b map[string]any) []string {
	if mutated("init-portable-same-transport") {
		// the old subset: what it starts and with which arguments, or its URL
		var out []string
		for _, k := range []string{"command", "args", "url", "httpUrl", "serverUrl"} {
			if !reflect.DeepEqual(a[k], b[k]) {
				out = append(out, k)
			}
		}
		return out
	}
	// an empty env, args or cwd is the same as none (a client writes `"env": {}`)
	value := func(m map[string]any, k string) any {
		switch v := m[k].(type) {
		case map[string]any:
			if len(v) == 0 {
				return nil
			}
		case []any:
			if len(v) == 0 {
				return nil
			}
		case string:
			if v == "" || k == "type" && v == "stdio" && m["command"] != nil {
				return nil // stdio is what an entry with a command is, said or not
			}
		}
		return m[k]
	}
	var out []string
	for _, m := range []map[string]any{a, b} {
		for k := range m {
			if settingKeys[k] || slices.Contains(out, k) {
				continue
			}
			if !reflect.DeepEqual(value(a, k), value(b, k)) {
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// runsMcpsandbox reports whether an entry's command is mcpsandbox, by name or by a path to it.
func runsMcpsandbox(command string) bool {
	base := command
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	base = strings.TrimSuffix(strings.ToLower(base), ".exe")
	return strings.HasPrefix(base, PortableCommand)
}
