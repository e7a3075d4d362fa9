package wslayer

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// configServer is a Continue config's server entry up to its args.
const configServer = "mcpServers:\n  - name: s\n    command: python3\n"

// A config's strings were read as a token stream in text order (atk43 F1): a YAML plain scalar
// continued on the next line was its first line only, so -c's code, as PyYAML and the client
// read it (`import os; import srv.main`), was not the code judged; a TOML comment after a comma
// (`["-c",#"print(1)",`) gave -c the comment's string. YAML and TOML configs are decoded by their
// parsers, aliases and merge keys resolved; what -c imports is protected, and nothing else: an
// ordinary YAML config with anchors, whose server is outside the workspace, leaves the project's
// files applied. Red with mutants workspace-config-yaml-parsed and workspace-config-toml-parsed.
func TestCommitConfigValuesParsed(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, c := range []struct{ file, text string }{
		{".continue/mcpServers/s.yaml", configServer + "    args:\n      - -c\n      - import os;\n        import srv.main\n"},
		{".continue/mcpServers/s.yaml", configServer + "    args: [-c, import os;\n      import srv.main]\n"},
		{".continue/mcpServers/s.yaml", "x-base: &b\n  command: python3\n  args: [-c, import srv.main]\nmcpServers:\n  - name: s\n    <<: *b\n"},
		{".continue/mcpServers/s.yaml", "x: &a [-c, import srv.main]\n" + configServer + "    args: *a\n"},
		{".continue/mcpServers/s.yaml", configServer + "    args:\n      - -c\n      - !!str import srv.main\n"},
		{".codex/config.toml", "[mcp_servers.s]\ncommand = \"python3\"\nargs = [\"-c\",#\"print(1)\",\n\"import srv.main\"]\n"},
		{".codex/config.toml", "[mcp_servers.s]\ncommand = 'python3'\nargs = ['-c',#'print(1)'\n'import srv.main']\n"},
	} {
		ws, _ := filepath.EvalSymlinks(t.TempDir())
		write(t, filepath.Join(ws, filepath.FromSlash(c.file)), c.text)
		write(t, filepath.Join(ws, "srv", "__init__.py"), "")
		write(t, filepath.Join(ws, "srv", "main.py"), "X = 1\n")
		if applied, why, _ := commitOne(t, ws, "srv/main.py", "evil\n"); applied || !strings.Contains(why, "the host runs it") {
			t.Errorf("%s %q: srv/main.py, which -c imports, applied %v (%q)", c.file, c.text, applied, why)
		}
		loadApplied(t, ws, "docs/a.md")
	}
	// an ordinary Continue config: anchors, an alias, a merge key, a server outside the workspace
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, filepath.Join(ws, ".continue", "mcpServers", "s.yaml"), "name: tools\nversion: 0.0.1\nschema: v1\n"+
		"x-env: &env\n  LOG_LEVEL: info\nx-npx: &npx\n  command: npx\n  env: *env\nmcpServers:\n"+
		"  - name: fs\n    <<: *npx\n    args: [-y, \"@modelcontextprotocol/server-filesystem\", /home/me/notes]\n"+
		"  - name: gh\n    <<: *npx\n    args:\n      - -y\n      - >-\n        @modelcontextprotocol/server-github\n")
	write(t, filepath.Join(ws, "srv", "__init__.py"), "")
	write(t, filepath.Join(ws, "srv", "main.py"), "X = 1\n")
	loadApplied(t, ws, "srv/main.py")
	loadApplied(t, ws, "docs/a.md")
}

// A YAML or TOML config its parser refuses, or one longer than the parsers are given, is not
// known as the client reads it: the check fails closed (its directory; at the workspace's root,
// every change), as for a config holding what the reader does not model. Red with mutants
// workspace-config-parse-refused and workspace-config-parsed-size.
func TestCommitConfigValuesRefused(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	old := maxParsedConfig
	t.Cleanup(func() { maxParsedConfig = old })
	maxParsedConfig = 4 << 10
	pad := "# " + strings.Repeat("x", 5<<10) + "\n"
	for _, c := range []struct{ file, text, why string }{
		{".continue/mcpServers/s.yaml", configServer + "   args: [-c, \"import srv.main\"\n", "parser refuses"},
		{".codex/config.toml", "[mcp_servers.s]\ncommand = \"python3\n", "parser refuses"},
		{".continue/mcpServers/s.yaml", pad + configServer + "    args: [-c, import os;\n      import srv.main]\n", "longer than 4 KiB"},
		{".codex/config.toml", pad + "[mcp_servers.s]\ncommand = \"python3\"\nargs = [\"-c\",#\"x\",\n\"import srv.main\"]\n", "longer than 4 KiB"},
	} {
		ws, _ := filepath.EvalSymlinks(t.TempDir())
		write(t, filepath.Join(ws, filepath.FromSlash(c.file)), c.text)
		write(t, filepath.Join(ws, "srv", "main.py"), "X = 1\n")
		if applied, why, _ := commitOne(t, ws, "docs/a.md", "ok\n"); applied || !strings.Contains(why, c.why) {
			t.Errorf("%s %q: docs/a.md applied %v (%q), want refused: %s", c.file, c.text, applied, why, c.why)
		}
	}
	// aliases of aliases: refused at the bound, in milliseconds
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, filepath.Join(ws, ".continue", "mcpServers", "s.yaml"), yamlBomb(9, 9))
	finishes(t, 20*time.Second, "a commit beside a YAML alias bomb", func() {
		if applied, why, _ := commitOne(t, ws, "docs/a.md", "ok\n"); applied || !strings.Contains(why, "expand past") {
			t.Errorf("docs/a.md beside a YAML alias bomb: applied %v (%q), want refused", applied, why)
		}
	})
}

// yamlBomb is `levels` anchors, each a sequence of `width` aliases of the one before ("billion
// laughs"): width^levels strings from a few hundred bytes.
func yamlBomb(levels, width int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [" + strings.TrimSuffix(strings.Repeat("x,", width), ",") + "]\n")
	for i := 1; i < levels; i++ {
		prev := "*l" + string(rune('0'+i-1))
		b.WriteString("l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [" +
			strings.TrimSuffix(strings.Repeat(prev+",", width), ",") + "]\n")
	}
	return b.String()
}

// A YAML config's aliases expand exponentially; yaml.v3 refuses excessive aliasing only when it
// decodes into Go values, not in the node tree the reader walks, so the walk has its own bound
// (visits and bytes, twice the text's size and a margin). Red with mutant
// workspace-config-yaml-alias-bound.
func TestYAMLStringsBounded(t *testing.T) {
	var v any
	if err := yaml.Unmarshal([]byte(yamlBomb(9, 9)), &v); err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Errorf("yaml.v3 decoding a billion laughs: %v, want its alias-ratio check's error", err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(yamlBomb(9, 9)), &n); err != nil {
		t.Errorf("yaml.v3 parsing a billion laughs into nodes: %v (no expansion, no check)", err)
	}
	// a million strings from 300 bytes: within reach without the bound, refused with it
	if strs, why := yamlStrings(yamlBomb(6, 10)); why != yamlTooMany {
		t.Fatalf("yamlStrings of 10^6 aliased strings: %d strings, why %q, want %q", len(strs), why, yamlTooMany)
	}
	finishes(t, 10*time.Second, "yamlStrings of a billion laughs", func() {
		if _, why := yamlStrings(yamlBomb(9, 9)); why != yamlTooMany {
			t.Errorf("yamlStrings of a billion laughs: why %q, want %q", why, yamlTooMany)
		}
	})
	if _, why := yamlStrings("a: &a [b, *a]\n"); why == "" {
		t.Errorf("yamlStrings of an anchor holding its alias: no why")
	}
	// an ordinary use of aliases is within the bound
	if strs, why := yamlStrings("e: &e {A: '1', B: '2'}\nl:\n" + strings.Repeat("  - env: *e\n", 50)); why != "" || len(strs) != 102 {
		t.Errorf("yamlStrings of 50 aliases of a map: %d strings, why %q", len(strs), why)
	}
}

// The parsed configs' values, in document order.
func TestConfigValues(t *testing.T) {
	for _, k := range []struct{ by, text, want string }{
		{"s.yaml", "k: v # c\nl:\n  - -c\n  - import os;\n    import srv.main\n  - !!binary aW1wb3J0IHNydi5tYWlu\nb: >-\n  one\n  two\n", "v|-c|import os; import srv.main|import srv.main|one two"},
		{"s.yaml", "a: &a x\n---\nb: [*a, !foo y]\n", "x|x|y"},
		{"s.yaml", "x: &b {c: python3, d: [-c, q]}\nm:\n  <<: *b\n  e: r\n", "python3|-c|q|python3|-c|q|r"},
		{"c.toml", "b = ['-c',#'x'\n'q']\na = \"\"\"p\\\n   y\"\"\"\n[t]\nn = 1\n", "py|-c|q|1"},
		{"c.json", `{"a": ["-c", /* "x" */ "q"]}`, "a|-c|q"},
	} {
		got, why := configValues(k.by, k.text, strings.HasSuffix(k.by, ".yaml"))
		if strings.Join(got, "|") != k.want || why != "" {
			t.Errorf("configValues(%q) = %q (%q), want %q", k.text, strings.Join(got, "|"), why, k.want)
		}
	}
}

// A YAML or TOML config's env was read by a pattern of the text (`NAME: value` on a line): a
// block or folded scalar (`PYTHONPATH: >-` then `lib`), an alias (`*p`), a value on the next
// line, a TOML multi-line string (`"""` then `lib`) were not lib, and lib/, where python3 -m
// finds mcp_x, stayed writable (atk43 F1's class, in configEnv). The parser's name: value
// entries are read too. Red with mutant workspace-config-parsed-env.
func TestCommitConfigEnvParsed(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	server := "mcpServers:\n  - name: s\n    command: python3\n    args: [-m, mcp_x]\n    env:\n"
	for _, env := range []string{"      PYTHONPATH: >-\n        lib\n", "      PYTHONPATH: |-\n        lib\n", "      PYTHONPATH: !!str lib\n",
		"      PYTHONPATH: &p lib\n", "      PYTHONPATH: *p\n", "      PYTHONPATH:\n        lib\n"} {
		ws, _ := filepath.EvalSymlinks(t.TempDir())
		write(t, filepath.Join(ws, "lib/mcp_x/__init__.py"), "")
		write(t, filepath.Join(ws, "lib/mcp_x/__main__.py"), "print(1)\n")
		write(t, filepath.Join(ws, ".continue/mcpServers/s.yaml"), "x: &p lib\n"+server+env)
		if applied, why, _ := commitOne(t, ws, "lib/mcp_x/__main__.py", "evil\n"); applied {
			t.Errorf("%q: lib/mcp_x/__main__.py, which python3 -m mcp_x runs with PYTHONPATH=lib, was applied (%q)", env, why)
		}
		loadApplied(t, ws, "docs/a.md")
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, filepath.Join(ws, "lib/mcp_x/__main__.py"), "print(1)\n")
	write(t, filepath.Join(ws, ".codex/config.toml"), "[mcp_servers.s]\ncommand = \"python3\"\nargs = [\"-m\", \"mcp_x\"]\n"+
		"[mcp_servers.s.env]\nPYTHONPATH = \"\"\"\nlib\"\"\"\n")
	if applied, why, _ := commitOne(t, ws, "lib/mcp_x/__main__.py", "evil\n"); applied {
		t.Errorf("Codex's multi-line PYTHONPATH: lib/mcp_x/__main__.py was applied (%q)", why)
	}
	loadApplied(t, ws, "docs/a.md")
}

// A config's words (what names a program it starts) were the blank-separated tokens of its text
// (atk44a F10): a YAML flow sequence's plain scalars were `[srv/main.py]`, `[-m,` and `srv.main]`,
// a lint-staged entry `[python3 srv/main.py]`, a JSON string `"srv\/main.py"` or
// `"srv\u002emain"` undecoded: no file, no module, and the program Continue (npm yaml, PyYAML:
// ["srv/main.py"]), lint-staged or Claude Code (JSON.parse) starts was writable. The words are the
// parser's values too, each split as a command line; an ordinary Continue config whose servers
// are outside the workspace leaves the project's files applied. Red with mutant
// workspace-config-decoded-words.
func TestCommitConfigWordsDecoded(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	cont := "name: s\nversion: 0.0.1\nschema: v1\n"
	for _, c := range []struct{ file, text, target string }{
		{".continue/mcpServers/s.yaml", cont + configServer + "    args: [srv/main.py]\n", "srv/main.py"},
		{".continue/mcpServers/s.yaml", cont + configServer + "    args: [srv/main.py, --port, 8080]\n", "srv/main.py"},
		{".continue/mcpServers/s.yaml", cont + configServer + "    args: [-m, srv.main]\n", "srv/main.py"},
		{".continue/mcpServers/s.yaml", cont + configServer + "    args: [-X, https://api.example.com, srv/main.py]\n", "srv/main.py"},
		{".continue/mcpServers/s.yaml", cont + "mcpServers:\n  - name: s\n    command: uv\n    args: [run, srv/main.py]\n", "srv/main.py"},
		{".continue/mcpServers/s.yaml", cont + "mcpServers: [{name: s, command: node, args: [srv/main.js]}]\n", "srv/main.js"},
		{".lintstagedrc.yaml", "'*.py': [python3 srv/main.py]\n", "srv/main.py"},
		{".mcp.json", `{"mcpServers": {"s": {"command": "python3", "args": ["srv\/main.py"]}}}`, "srv/main.py"},
		{".mcp.json", `{"mcpServers": {"s": {"command": "python3", "args": ["-m", "srv\u002emain"]}}}`, "srv/main.py"},
		// atk44a F6's (the lexer's own anchors, quotes, folding, `//`), read by the parser since atk43 F1
		{".continue/mcpServers/s.yaml", cont + configServer + "    args:\n      - -c\n      - &-c import srv.main\n", "srv/main.py"},
		{".continue/mcpServers/s.yaml", cont + "x-code: &-c \"import srv.main\"\n" + configServer + "    args: [-c, *-c]\n", "srv/main.py"},
		{".continue/mcpServers/s.yaml", cont + "mcpServers:\n  - {name: it's, command: python3, args: [-c, &c import srv.main], note: x'y}\n", "srv/main.py"},
		{".continue/mcpServers/s.yaml", cont + configServer + "    args:\n      - -c\n      - \"x = 1\n\n        import srv.main\"\n", "srv/main.py"},
		{".continue/mcpServers/s.yaml", cont + configServer + "    args: [-X, //, -c, import srv.main]\n", "srv/main.py"},
	} {
		ws, _ := filepath.EvalSymlinks(t.TempDir())
		write(t, filepath.Join(ws, filepath.FromSlash(c.file)), c.text)
		write(t, filepath.Join(ws, "srv", "__init__.py"), "")
		write(t, filepath.Join(ws, "srv", "main.py"), "X = 1\n")
		write(t, filepath.Join(ws, "srv", "main.js"), "1\n")
		if applied, why, _ := commitOne(t, ws, c.target, "evil\n"); applied || !strings.Contains(why, "the host runs it") {
			t.Errorf("%s %q: %s, which it starts, applied %v (%q)", c.file, c.text, c.target, applied, why)
		}
		loadApplied(t, ws, "docs/a.md")
	}
	// ordinary configs: flow sequences of an outside server's words, a URL, a JSON escape
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, filepath.Join(ws, ".continue", "mcpServers", "s.yaml"), cont+"mcpServers:\n"+
		"  - name: fs\n    command: npx\n    args: [-y, \"@modelcontextprotocol/server-filesystem\", /home/me/notes]\n"+
		"  - {name: web, command: uvx, args: [mcp-server-fetch, --user-agent, https://example.com/x]}\n")
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "npx", "args": ["-y", "@scope\/server"]}}}`)
	write(t, filepath.Join(ws, "srv", "__init__.py"), "")
	write(t, filepath.Join(ws, "srv", "main.py"), "X = 1\n")
	loadApplied(t, ws, "srv/main.py")
	loadApplied(t, ws, "docs/a.md")
}

// A JSON config's env was read by a pattern of its text only (atk44a F10's class, JSON side):
// `"PYTHON\u0050ATH": "x:\u0061pp"` is PYTHONPATH=x:app to JSON.parse, so app/main.py, which
// python3 -m main runs, was writable. JSON and JSONC configs' name: value entries are read as the
// parser gives them too; an ordinary escaped value leaves the project applied. Red with mutant
// workspace-config-json-env.
func TestCommitConfigEnvJSONDecoded(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, c := range []struct{ file, text string }{
		{".mcp.json", `{"mcpServers": {"s": {"command": "python3", "args": ["-m", "main"], "env": {"PYTHON\u0050ATH": "x:app"}}}}`},
		{".mcp.json", `{"mcpServers": {"s": {"command": "python3", "args": ["-m", "main"], "env": {"PYTHONPATH": "x:\u0061pp"}}}}`},
		{".vscode/mcp.json", "{\"servers\": {\"s\": {\"command\": \"python3\", \"args\": [\"-m\", \"main\"], // c\n" +
			"\"env\": {\"PYTHONPATH\": \"x:\\u0061pp\",},},},}"},
	} {
		ws, _ := filepath.EvalSymlinks(t.TempDir())
		write(t, filepath.Join(ws, filepath.FromSlash(c.file)), c.text)
		write(t, filepath.Join(ws, "app", "main.py"), "X = 1\n")
		if applied, why, _ := commitOne(t, ws, "app/main.py", "evil\n"); applied {
			t.Errorf("%s %q: app/main.py, which python3 -m main runs, was applied (%q)", c.file, c.text, why)
		}
		loadApplied(t, ws, "docs/a.md")
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "npx", "args": ["-y", "@x/server"], "env": {"LOG_LEVEL": "\u0069nfo", "PYTHONPATH": "\/opt\/lib"}}}}`)
	write(t, filepath.Join(ws, "app", "main.py"), "X = 1\n")
	loadApplied(t, ws, "app/main.py")
	loadApplied(t, ws, "docs/a.md")
}
