package wslayer

import (
	"path/filepath"
	"strings"
	"testing"
)

// A program's string literals are read as its language reads them (attack round atk41 F15):
// a literal with an escape (\n, \t, \x2F) names the script it runs, a literal past 512 bytes
// too, and Python's adjacent literals are one; what they name outside the program's package is
// refused, the docs beside it applied. Red when escapes are dropped again (mutant
// workspace-follow-literal-escapes) or long literals skipped (mutant workspace-follow-literal-long).
func TestCommitFollowerLiteralEscapesAndLength(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []struct{ name, prog string }{
		{"newline", "subprocess.run('bash ../scripts/setup.sh\\n', shell=True)\n"},
		{"tab", "subprocess.run('bash\\t../scripts/setup.sh', shell=True)\n"},
		{"hex", "subprocess.run(\"bash ..\\x2Fscripts\\u002Fsetup.sh\", shell=True)\n"},
		{"quote", "subprocess.run('echo \\'hi\\'; bash ../scripts/setup.sh', shell=True)\n"},
		{"long", "subprocess.run('" + strings.Repeat("true; ", 90) + "bash ../scripts/setup.sh', shell=True)\n"},
		{"adjacent", "subprocess.run('bash ../scr' 'ipts/setup.sh', shell=True)\n"},
	} {
		t.Run(k.name, func(t *testing.T) {
			ws := t.TempDir()
			write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers":{"s":{"command":"python3","args":["srv/main.py"],"cwd":"srv"}}}`)
			write(t, filepath.Join(ws, "srv", "main.py"), "import subprocess\n"+k.prog)
			write(t, filepath.Join(ws, "scripts", "setup.sh"), "echo setup\n")
			loadRefused(t, ws, "scripts/setup.sh", startsIt)
			loadApplied(t, ws, "docs/notes.md")
		})
	}
}

// A JS template's `${…}` is a word's unresolved part (attack round atk41 F15): the path after
// it is taken from the program's directory and the root; one that leads up from it (`${d}/../x`)
// or a literal start at the root (`../${f}`) may name any file: nothing unjudged is applied, the
// reason named. A template that names no path leaves edits applied. Red without it (mutant
// workspace-follow-literal-escapes).
func TestCommitFollowerTemplateLiterals(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	setup := func(js string) string {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers":{"s":{"command":"node","args":["srv/index.js"],"cwd":"srv"}}}`)
		write(t, filepath.Join(ws, "srv", "index.js"), js)
		write(t, filepath.Join(ws, "scripts", "setup.sh"), "echo setup\n")
		return ws
	}
	ws := setup("const d = __dirname;\nrequire('child_process').execSync(`bash ${d}/../scripts/setup.sh`);\n")
	loadRefused(t, ws, "scripts/setup.sh", "whose string")
	loadRefused(t, ws, "docs/notes.md", "whose string")
	ws = setup("require('child_process').execSync(`sh ${process.cwd()}/tools/${'x'}/run.sh --port ${port}`);\n")
	loadRefused(t, ws, "srv/tools/x/run.sh", startsIt)
	loadRefused(t, ws, "tools/y/run.sh", startsIt)
	loadApplied(t, ws, "run.sh")
	ws = setup("console.log(`listening on ${port}/api, ${a.b} ${c}`);\n")
	loadApplied(t, ws, "docs/notes.md")
	loadApplied(t, ws, "scripts/setup.sh")
}

// decodeLiteral decodes what Python and JS decode; the scan of stray quotes is bounded.
func TestDecodeLiteral(t *testing.T) {
	for in, want := range map[string]string{
		`a\nb`: "a b", `\x2F\u002F\u{2F}\U0000002F\057`: "/////", `\\x`: `\x`, `\'q\'`: "'q'", `\zz`: "zz", `\u12`: "u12",
	} {
		if got := decodeLiteral(in, false); got != want {
			t.Errorf("decodeLiteral(%q) = %q, want %q", in, got, want)
		}
	}
	if got := decodeLiteral("a${b + '}'}/c", true); got != "a"+litMark+"/c" {
		t.Errorf("template: %q", got)
	}
	old := maxLiteralScan
	maxLiteralScan = 1 << 10
	t.Cleanup(func() { maxLiteralScan = old })
	f := &follower{g: &gitGuard{ws: "/ws"}}
	f.literalPaths(todoFile{path: "/ws/srv/m.py", by: "/ws/.mcp.json"}, "/ws/srv", strings.Repeat("\\'", 1000)+"\n")
	if !strings.Contains(f.g.runCut, "quotes") {
		t.Errorf("a line of stray quotes: runCut %q", f.g.runCut)
	}
}
