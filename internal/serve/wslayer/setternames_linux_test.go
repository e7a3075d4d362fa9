package wslayer

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A config's env names were read from its text as spelled: an escaped name (`"APP\u005fDIR"`,
// `"\u0041PP_DIR"`, YAML's `"APP\x5fDIR"`, TOML's `"APP\u005FDIR"`), a line break before JSON's
// `:` or YAML's explicit `? APP_DIR⏎: …` set APP_DIR to the client's parser (json.loads,
// PyYAML, npm yaml, tomllib), and bash ran lib/main.py for run.sh's ${APP_DIR:-app}, writable
// (atk45a F2). Names are taken as the parser gives them. Red with mutant
// workspace-setters-config-parsed. The value is /proc/self/cwd/lib: a bare `lib` is itself a
// config word naming lib/.
func TestCommitScriptDefaultsSetByParsedConfig(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	const v = "/proc/self/cwd/lib"
	mcp := func(env string) []string {
		return []string{".mcp.json", `{"mcpServers":{"s":{"command":"bash","args":["scripts/run.sh"],"env":` + env + `}}}`}
	}
	cont := func(env string) []string {
		return []string{".continue/mcpServers/s.yaml", "name: s\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: s\n" +
			"    command: bash\n    args:\n      - scripts/run.sh\n    env:\n" + env}
	}
	codex := func(env string) []string {
		return []string{".codex/config.toml", "[mcp_servers.s]\ncommand = \"bash\"\nargs = [\"scripts/run.sh\"]\n" + env}
	}
	hook := func(cmd string) []string {
		return []string{".claude/settings.json", `{"hooks":{"PostToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"` + cmd + `"}]}]}}`}
	}
	for _, files := range [][]string{
		mcp(`{"APP\u005fDIR":"` + v + `"}`),
		mcp("{\"APP_DIR\"\n:\"" + v + "\"}"),
		mcp(`{"\u0041PP_DIR":"` + v + `"}`),
		mcp(`{"APP_DIR=` + v + `":"x"}`),
		cont("      \"APP\\x5fDIR\": " + v + "\n"),
		cont("      ? APP_DIR\n      : " + v + "\n"),
		codex("env = { \"APP\\u005FDIR\" = \"" + v + "\" }\n"),
		hook(`cd \"$CLAUDE_PROJECT_DIR\" && APP\u005fDIR=` + v + ` bash scripts/run.sh`),
	} {
		ws := runShProject(t, runDefaultApp)
		write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
		write(t, filepath.Join(ws, files[0]), files[1])
		if applied, why, _ := commitOne(t, ws, "lib/main.py", "evil\n"); applied {
			t.Errorf("%q: lib/main.py, which the config's APP_DIR makes the program, was applied (%q)", files[1], why)
		}
	}
	// ordinary configs set other names, in every format (JSONC with comments, trailing commas
	// and a byte order mark as VS Code writes it): the default is what runs, the rest writable
	for _, files := range [][]string{
		mcp(`{"API_KEY":"x","LOG_LEVEL":"info"}`),
		cont("      LOG_LEVEL: info\n      \"API\\x5fKEY\": x\n"),
		codex("env = { \"LOG\\u005FLEVEL\" = \"info\" }\n"),
		{".vscode/settings.json", "\ufeff{\n  // the project's\n  \"editor.formatOnSave\": true,\n  /* env */\n" +
			"  \"terminal.integrated.env.linux\": {\"LOG_LEVEL\": \"info\",},\n}\n"},
	} {
		ws := runShProject(t, runDefaultApp)
		write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
		write(t, filepath.Join(ws, files[0]), files[1])
		loadRefused(t, ws, "app/main.py", "starts")
		loadApplied(t, ws, "lib/main.py")
		loadApplied(t, ws, "docs/a.md")
	}
}

// A config its parser refuses (VS Code's tolerant JSONC parser reads past a missing comma) may
// set names the reader cannot list: a started script's defaults are not taken (atk45a F2); a
// script with no default runs what it names, the rest writable. Red with mutant
// workspace-setters-config-refused.
func TestCommitScriptDefaultsConfigRefused(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	broken := `{"terminal.integrated.env.linux": {"APP\u005fDIR": "/proc/self/cwd/lib"} "editor.formatOnSave": true}`
	ws := runShProject(t, runDefaultApp)
	write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
	write(t, filepath.Join(ws, ".vscode", "settings.json"), broken)
	if applied, why, _ := commitOne(t, ws, "lib/main.py", "evil\n"); applied {
		t.Errorf("lib/main.py, which a config the reader cannot parse may make the program, was applied (%q)", why)
	}
	ws = runShProject(t, "exec python3 app/main.py\n")
	write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
	write(t, filepath.Join(ws, ".vscode", "settings.json"), broken)
	loadRefused(t, ws, "app/main.py", "starts")
	loadApplied(t, ws, "lib/main.py")
	loadApplied(t, ws, "docs/a.md")
}

// Under allexport bash exports every name a script assigns, by any form: an outer script's
// `set -a; read -r APP_DIR < .app_dir`, `printf -v APP_DIR`, `for APP_DIR in lib`, `${APP_DIR:=lib}`
// set APP_DIR for inner.sh (no `=` after the name, no export word), and bash ran lib/main.py for
// inner.sh's ${APP_DIR:-app}, writable (atk45a F7). Red with mutant workspace-setters-allexport;
// the shell started with allexport on (bash -a, SHELLOPTS) with workspace-setters-allexport-starts.
func TestCommitScriptDefaultsSetUnderAllexport(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	outer := func(shebang, body string) []string {
		return []string{"scripts/outer.sh", shebang + "cd \"$(dirname \"$0\")/..\"\n" + body + "exec bash scripts/inner.sh\n"}
	}
	const bash = "#!/bin/bash\n"
	mcp := func(args, env string) []string {
		return []string{".mcp.json", `{"mcpServers":{"s":{"command":"bash","args":[` + args + `],"env":{` + env + `}}}}`}
	}
	for _, c := range [][]string{
		outer(bash, "set -a\nread -r APP_DIR < .app_dir\n"),
		outer(bash, "set -a\nprintf -v APP_DIR '%s' lib\n"),
		outer(bash, "set -o allexport\nfor APP_DIR in lib; do bash scripts/inner.sh; done\n"),
		outer(bash, "set -euao pipefail\n: \"${APP_DIR:=lib}\"\n"),
		outer("#!/bin/bash -a\n", "read -r APP_DIR < .app_dir\n"),
		append(outer(bash, "read -r APP_DIR < .app_dir\n"), mcp(`"-a", "scripts/outer.sh"`, "")...),
		append(outer(bash, "read -r APP_DIR < .app_dir\n"), mcp(`"scripts/outer.sh"`, `"SHELLOPTS": "allexport"`)...),
	} {
		ws := outerProject(t, c)
		if applied, why, _ := commitOne(t, ws, "lib/main.py", "evil\n"); applied {
			t.Errorf("%q: lib/main.py, which outer.sh exports as APP_DIR, was applied (%q)", c, why)
		}
	}
	// without allexport a read name stays the script's own; with it, names the script does not
	// spell are not set: the default is what runs, the rest writable
	for _, c := range [][]string{
		outer(bash, "read -r APP_DIR < .app_dir\n"),
		outer(bash, "set -a\nPORT=8080\nread -r LOG_LEVEL < .log_level\nset +a\n"),
		append(outer(bash, "read -r APP_DIR < .app_dir\n"), mcp(`"-e", "scripts/outer.sh"`, `"SHELLOPTS": "errexit"`)...),
	} {
		ws := outerProject(t, c)
		loadRefused(t, ws, "app/main.py", "starts")
		loadApplied(t, ws, "lib/main.py")
		loadApplied(t, ws, "docs/a.md")
	}
}

// outerProject is runShProject's starting scripts/outer.sh, which starts scripts/inner.sh (its
// last line runDefaultApp), with lib/main.py, .app_dir (lib) and files (path, text pairs).
func outerProject(t *testing.T, files []string) string {
	t.Helper()
	ws := runShProject(t, "exec bash scripts/outer.sh\n")
	write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
	write(t, filepath.Join(ws, ".app_dir"), "lib\n")
	write(t, filepath.Join(ws, "scripts", "inner.sh"), "#!/bin/bash\ncd \"$(dirname \"$0\")/..\"\n"+runDefaultApp)
	for i := 0; i+1 < len(files); i += 2 {
		write(t, filepath.Join(ws, files[i]), files[i+1])
	}
	return ws
}

// A shell text's names were read as spelled, but bash takes them from the word as it joins it:
// `export "APP_DIR"`, `\export APP_DIR`, `set -"a"`, `export APP_DI"R"=…`, `export AP\P_DIR=…`,
// `env APP_DI\R=…`, `export $'APP\x5fDIR'=…`, `export APP_{DIR,X}=…` set APP_DIR for inner.sh
// and bash ran lib/main.py for its ${APP_DIR:-app}, writable (atk46a F4). Red with mutants
// workspace-setters-joined (quotes, backslashes, $'…') and workspace-setters-braces.
func TestCommitScriptDefaultsSetByJoinedWord(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	outer := func(body string) []string {
		return []string{"scripts/outer.sh", "#!/bin/bash\ncd \"$(dirname \"$0\")/..\"\n" + body + "\nexec bash scripts/inner.sh\n"}
	}
	for _, c := range [][]string{
		outer("read -r APP_DIR < .app_dir\nexport \"APP_DIR\""),
		outer("read -r APP_DIR < .app_dir\n\\export APP_DIR"),
		outer("set -\"a\"\nread -r APP_DIR < .app_dir"),
		outer("export APP_DI\"R\"=$(cat .app_dir)"),
		outer("export AP\\P_DIR=$(cat .app_dir)"),
		outer("export AP\\\nP_DIR=$(cat .app_dir)"),
		outer("export $'APP\\x5fDIR'=$(cat .app_dir)"),
		outer("export $\"APP_DIR\"=$(cat .app_dir)"),
		outer("read -r APP_DIR < .app_dir\nexport APP_{DIR,X}"),
		outer("export APP_DI{R..R}=$(cat .app_dir)"),
		{"scripts/outer.sh", "#!/bin/bash\ncd \"$(dirname \"$0\")/..\"\nexec env APP_{DIR,}=\"$(cat .app_dir)\" bash scripts/inner.sh\n"},
	} {
		ws := outerProject(t, c)
		if applied, why, _ := commitOne(t, ws, "lib/main.py", "evil\n"); applied {
			t.Errorf("%q: lib/main.py, which outer.sh exports as APP_DIR, was applied (%q)", c, why)
		}
	}
	// quoted and braced words that set other names (or none): the default is what runs
	for _, c := range [][]string{
		outer("read -r APP_DIR < .app_dir\nexport \"LOG_LEVEL\"=info\necho \"don't\" $'\\n'\nmkdir -p {tmp,out}"),
		outer("export LOG_{LEVEL,FORMAT}=info\n\\export PORT=8080"),
	} {
		ws := outerProject(t, c)
		loadRefused(t, ws, "app/main.py", "starts")
		loadApplied(t, ws, "lib/main.py")
		loadApplied(t, ws, "docs/a.md")
	}
}

// A runner's format was taken from its extension for its names only: Kiro's .kiro/hooks/*.kiro.hook
// is JSON, its decoded command `APP\u005fMODULE=lib.main bash scripts/run.sh` set APP_MODULE
// for run.sh unseen, and its ${APP_MODULE:-app.main} was taken for app.main while sh ran
// lib.main (atk46a F5). A runner of a format not known here is read as JSON when it is, else
// it may set any name. Red with mutant workspace-setters-format.
func TestCommitScriptDefaultsSetByKiroHook(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	kiro := func(cmd string) []string {
		return []string{".kiro/hooks/fmt.kiro.hook", `{"enabled":true,"name":"fmt","version":"1","when":{"type":"fileEdited",` +
			`"patterns":["**/*.py"]},"then":{"type":"runCommand","command":"` + cmd + `"}}`}
	}
	cont := func(text string) []string { return []string{".continue/mcpServers/s", text} }
	for _, files := range [][]string{
		kiro(`APP\u005fMODULE=lib.main bash scripts/run.sh`),
		kiro(`env \u0041PP_MODULE=lib.main bash scripts/run.sh`),
		cont(`{"mcpServers":{"s":{"command":"bash","args":["scripts/run.sh"],"env":{"APP\u005fMODULE":"lib.main"}}}}`),
		cont("not json: APP\\u005fMODULE"),
	} {
		ws := runShProject(t, "exec python3 -m \"${APP_MODULE:-app.main}\"\n")
		write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
		write(t, filepath.Join(ws, files[0]), files[1])
		if applied, why, _ := commitOne(t, ws, "lib/main.py", "evil\n"); applied {
			t.Errorf("%q: lib/main.py, which the hook's APP_MODULE makes the program, was applied (%q)", files[1], why)
		}
	}
	// a hook setting another name, an .envrc, a husky hook: the default is what runs
	for _, files := range [][]string{
		kiro(`LOG_LEVEL=info bash scripts/run.sh`),
		{".envrc", "export LOG_LEVEL=info\n"},
		{".husky/pre-commit", "npx lint-staged\n"},
	} {
		ws := runShProject(t, "exec python3 -m \"${APP_MODULE:-app.main}\"\n")
		write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
		write(t, filepath.Join(ws, "docs", "a.md"), "a\n")
		write(t, filepath.Join(ws, files[0]), files[1])
		loadRefused(t, ws, "app/main.py", "starts")
		loadApplied(t, ws, "lib/main.py")
		loadApplied(t, ws, "docs/a.md")
	}
}

// A large JSON config's names cost per string, not per byte: each of its 2 M decoded strings
// had the setter scan (two regexes) and the token decoder an allocation, and one 8 MiB
// .mcp.json of "a" strings held a commit 13.6 s, 8 of them 1 min 29 s (atk46a F7). Its strings
// are scanned as one text and sliced from the checked text. Red with mutants
// workspace-setters-config-once and workspace-setters-json-scan.
func TestCommitScriptDefaultsLargeJSONConfig(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	const n = 20_000
	config := func(name string) string {
		return `{"mcpServers":{"s":{"command":"bash","args":["scripts/run.sh"` + strings.Repeat(`,"a"`, n) + `],"env":{"` + name + `":"/proc/self/cwd/lib"}}}}`
	}
	cfg := config(`LOG\u005fDIR`)
	if allocs := testing.AllocsPerRun(1, func() { jsonNames(cfg) }); allocs > 100 {
		t.Errorf("the names of a JSON config of %d strings: %.0f allocations, want a few", n, allocs)
	}
	ws := runShProject(t, runDefaultApp)
	write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
	write(t, filepath.Join(ws, ".mcp.json"), cfg)
	before := setterScans.Load()
	finishes(t, 30*time.Second, "a commit beside a config of 20,000 strings", func() { loadApplied(t, ws, "docs/a.md") })
	if scans := setterScans.Load() - before; scans > 20 {
		t.Errorf("a config of %d strings: %d setter scans, want its strings scanned as one text", n, scans)
	}
	// its names are still read: the escaped APP_DIR makes lib/main.py the program
	write(t, filepath.Join(ws, ".mcp.json"), config(`APP\u005fDIR`))
	if applied, why, _ := commitOne(t, ws, "lib/main.py", "evil\n"); applied {
		t.Errorf("lib/main.py, which the large config's APP_DIR makes the program, was applied (%q)", why)
	}
}
