package wslayer

import (
	"path/filepath"
	"testing"
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
