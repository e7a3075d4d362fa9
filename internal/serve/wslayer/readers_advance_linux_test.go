package wslayer

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readerInputs are adversarial texts for the readers: every string of up to two of the bytes
// their syntax turns on, after and before the openings of their constructs (a flow collection,
// a quote, a substitution, a comment, a heredoc, a template), and random strings of those bytes
// (a fixed seed: the same inputs each run).
func readerInputs() []string {
	const alphabet = ":-[]{},\"'#|>\\$()`<\n \tab/*=;&.?!%@0xu"
	var short []string
	for _, a := range alphabet {
		short = append(short, string(a))
		for _, b := range alphabet {
			short = append(short, string(a)+string(b))
		}
	}
	var out []string
	for _, pre := range []string{"", "a: [", "a: {\n", "- ", "a: |\n  ", "x=$(", "\"", "'", "/*", "`${", "<<E\n", "import ", "[s]\nx = "} {
		for _, s := range short {
			out = append(out, pre+s, pre+s+"\n"+s)
		}
	}
	r := rand.New(rand.NewSource(45))
	for range 3000 {
		b := make([]byte, 1+r.Intn(64))
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		out = append(out, string(b))
	}
	return append(out,
		// atk45a F3: a flow collection's line starting with ':' (the lexer looped for ever)
		"env:\n  {\"APP_DIR\"\n   : lib}\n", "args: [\n  -m, srv.main,\n  :\n]\n", "a: {\n : b}\n", "args: [srv/main.py,\n : x]\n",
		"a $(", "$(", "`", "$'", "$'\\", "<<", "<<-", "\"\"\"", "'''")
}

// readers are the follower's text readers, each a function of a text (a program or config a call
// may have written, read under the workspace lock).
func readers() map[string]func(string) {
	fol := func() *follower {
		return &follower{g: &gitGuard{ws: "/ws", wsReal: "/ws", runBy: map[string]string{}}, seen: map[string]bool{}}
	}
	py := todoFile{"/ws/srv/main.py", "/ws/.mcp.json", 1}
	return map[string]func(string){
		"configStrings yaml": func(s string) { configStrings(s, true) },
		"configStrings json": func(s string) { configStrings(s, false) },
		"configValues yaml":  func(s string) { configValues("/ws/s.yaml", s, true) },
		"configValues toml":  func(s string) { configValues("/ws/c.toml", s, false) },
		"yamlEnv":            func(s string) { yamlEnv(s) },
		"tomlEnv":            func(s string) { tomlEnv(s) },
		"jsonEnv":            func(s string) { jsonEnv(s) },
		"shellStatements":    func(s string) { shellStatements(s) },
		"heredocs":           func(s string) { heredocs(s) },
		"frontmatter":        func(s string) { frontmatter(s) },
		"decodeEscapes":      func(s string) { decodeEscapes(s, true, true) },
		"decodeLiteral":      func(s string) { decodeLiteral(s, true) },
		"pyCode":             func(s string) { pyCode(s) },
		"pyStatements":       func(s string) { pyStatements(pyCode(s), func(pyStmt) {}) },
		"pyBindings":         func(s string) { pyBindings(pyCode(s)) },
		"pyNames":            func(s string) { pyNames(pyCode(s)) },
		"pyOddOp":            func(s string) { pyOddOp(pyCode(s), s, map[string]bool{}) },
		"jsRefs":             func(s string) { jsRefs(s, func(jsRef) bool { return true }) },
		"jsBindings":         func(s string) { jsBindings(s) },
		"jsNames":            func(s string) { jsNames(s) },
		"jsOddOp":            func(s string) { jsOddOp(s, map[string]bool{}) },
		"jsonc":              func(s string) { jsonc([]byte(s)) },
		"noteSetters":        func(s string) { fol().noteSetters("/ws/run.sh", s) },
		"rcLoads":            func(s string) { fol().rcLoads("/ws/.envrc", s) },
		"mise":               func(s string) { fol().mise("/ws/mise.toml", "/ws", s) },
		"toolVersions":       func(s string) { fol().toolVersions("/ws/.tool-versions", "/ws", s) },
		"configEnv":          func(s string) { fol().configEnv("/ws/.mcp.json", s) },
		"pyLoaders":          func(s string) { fol().pyLoaders(py, "/ws/srv", s) },
		"pyImports":          func(s string) { fol().pyImports(py, "/ws/srv", s) },
		"literalPaths":       func(s string) { fol().literalPaths(py, "/ws/srv", s) },
		"shellProgram":       func(s string) { fol().shellProgram(todoFile{"/ws/run.sh", "/ws/.mcp.json", 1}, "/ws", s) },
	}
}

// atk45a F3: the YAML lexer (read for a config yaml.v3 refuses or one past 256 KiB) never ended
// on a flow collection's line that starts with ':' (`env:⏎  {"APP_DIR"⏎   : lib}`): an empty
// scalar ended where it began and the loop read the same byte again, holding the workspace lock
// for ever; and an unclosed `$(` last in a command line sliced past its start (a panic). Every
// reader is run over adversarial texts within a time budget and must neither hang nor panic.
// Red with mutants workspace-config-lexer-advance and workspace-shell-subst-unclosed.
func TestReadersAdvanceOnAdversarialInput(t *testing.T) {
	ins := readerInputs()
	for name, read := range readers() {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			var bad []string
			finishes(t, 20*time.Second, fmt.Sprintf("%s over %d adversarial texts", name, len(ins)), func() {
				for _, s := range ins {
					if p := panics(func() { read(s) }); p != nil && len(bad) < 5 {
						bad = append(bad, fmt.Sprintf("%q: %v", s, p))
					}
				}
			})
			if len(bad) > 0 {
				t.Errorf("%s panics on:\n%s", name, strings.Join(bad, "\n"))
			}
		})
	}
}

func panics(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// The lexer reads a flow line's leading ':' as the indicator it is (npm yaml, Continue's parser:
// {"APP_DIR": "lib"}): the name and the value are both strings read, nothing is lost.
func TestConfigStringsFlowColon(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"env:\n  {\"APP_DIR\"\n   : lib}\n", "APP_DIR|lib"},
		{"args: [srv/main.py,\n : x]\n", "srv/main.py|x"},
		{"a: {\n : b}\n", "b"},
		{"args: [-m, srv.main]\n", "-m|srv.main"},
		{"a: [:x, b]\n", ":x|b"},
	} {
		var got []string
		finishes(t, 5*time.Second, fmt.Sprintf("configStrings(%q)", c.text), func() { got = configStrings(c.text, true) })
		if strings.Join(got, "|") != c.want {
			t.Errorf("configStrings(%q) = %q, want %q", c.text, strings.Join(got, "|"), c.want)
		}
	}
}

// atk45a F3 as a commit: a Continue config yaml.v3 refuses, whose env is a flow mapping with a
// line starting with ':' (npm yaml, Continue's parser, reads {"APP_DIR": "lib"}), held every
// commit of the workspace (a CPU spinning, the lock held). The commit now ends, refused (the
// config is not known as the client reads it: fail closed); the same env as a valid flow mapping
// leaves an ordinary change applied. Red with mutant workspace-config-lexer-advance.
func TestCommitConfigYAMLFlowColonEnds(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	cont := "name: s\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: s\n    command: bash\n    args:\n      - scripts/run.sh\n    env:\n"
	for _, c := range []struct {
		env     string
		applied bool
	}{
		{"      {\"APP_DIR\"\n       : lib}\n", false},
		{"      {\"APP_DIR\": lib,\n       LOG: info}\n", true},
	} {
		ws, _ := filepath.EvalSymlinks(t.TempDir())
		write(t, filepath.Join(ws, ".continue", "mcpServers", "s.yaml"), cont+c.env)
		write(t, filepath.Join(ws, "scripts", "run.sh"), "#!/bin/bash\ncd \"$(dirname \"$0\")/..\"\nexec python3 lib/main.py\n")
		write(t, filepath.Join(ws, "lib", "main.py"), "print('lib')\n")
		finishes(t, 30*time.Second, fmt.Sprintf("a commit beside a Continue config whose env is %q", c.env), func() {
			applied, why, _ := commitOne(t, ws, "docs/a.md", "ok\n")
			if applied != c.applied || !applied && !strings.Contains(why, "parser refuses") {
				t.Errorf("env %q: docs/a.md applied %v (%q), want %v", c.env, applied, why, c.applied)
			}
		})
	}
}

// A hook whose command ends in an unclosed `$(` (`echo done $(`: sh refuses it, the client runs
// it anyway) made serve panic in the commit: the reader sliced the substitution past its start.
// The commit now ends and an ordinary change beside it is applied. Red with mutant
// workspace-shell-subst-unclosed.
func TestCommitHookUnclosedSubstitution(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, filepath.Join(ws, ".claude", "settings.json"),
		`{"hooks":{"PostToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"echo done $("}]}]}}`)
	if p := panics(func() { loadApplied(t, ws, "docs/a.md") }); p != nil {
		t.Errorf("a commit beside a hook `echo done $(`: panic %v", p)
	}
}

// atk45a F10: a commit's time grew with the protected configs' words: each word was stat'ed
// from each base as often as it occurred (`args: [a,a,…]`, 120,000 times in a 240 KiB Continue
// config), and each YAML config was decoded twice (its values, its env). 64 such configs held
// every commit 1 min 27 s. A command line's word is looked up once per base, a config decoded
// once. What the words name is still protected (srv/main.py, named twice), an ordinary change
// beside them applied. Red with mutants workspace-words-stat-once and workspace-config-decode-once.
func TestCommitConfigWordsOnce(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	var stats int
	statFile = func(p string) (os.FileInfo, error) { stats++; return os.Stat(p) }
	t.Cleanup(func() { statFile = os.Stat })
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	const files, words = 8, 20_000
	for i := range files {
		write(t, filepath.Join(ws, ".continue", "mcpServers", fmt.Sprintf("s%d.yaml", i)),
			fmt.Sprintf("name: s%d\nmcpServers:\n  - name: s\n    command: python3\n    args: [srv/main.py, srv/main.py, %sa]\n", i, strings.Repeat("a,", words)))
	}
	write(t, filepath.Join(ws, "srv", "main.py"), "X = 1\n")
	before := decodes.Load()
	finishes(t, 30*time.Second, "a commit beside 8 configs of 20,000 words", func() { loadApplied(t, ws, "docs/a.md") })
	if n := decodes.Load() - before; n > files {
		t.Errorf("%d YAML configs decoded %d times, want once each", files, n)
	}
	if stats > 100*files {
		t.Errorf("%d configs of %d words: %d stats of what their words name, want each word's once per base", files, words, stats)
	}
	if applied, why, _ := commitOne(t, ws, "srv/main.py", "evil\n"); applied || !strings.Contains(why, "the host runs it") {
		t.Errorf("srv/main.py, which the configs start, applied %v (%q)", applied, why)
	}
}
