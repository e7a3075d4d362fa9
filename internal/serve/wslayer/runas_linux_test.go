package wslayer

import "testing"

// A file a runtime is told to run was read as a program only when its name had the runtime's
// extension or a shebang: python3 tools/serve, node tools/boot.txt and python3 - <
// tools/boot.txt ran what the follower read as a shell script's words (atk45a F5). The runtime
// says how the file is read: its script from its directory, a `<` file as inline code from the
// working directory. Red with mutant workspace-program-by-runtime.
func TestCommitProgramByRuntime(t *testing.T) {
	py := "import sys; sys.path.insert(0, '.'); import app.main\n"
	js := "require('../app/main.js')\n"
	file := func(m map[string]string, p, text string) map[string]string {
		return with(m, map[string]string{p: text})
	}
	runInlineCases(t, []inlineCase{
		{".mcp.json: python3 tools/serve", file(mcpJSON("python3", `"tools/serve"`), "tools/serve", py), "app/main.py", false},
		{".mcp.json: node tools/serve", file(mcpJSON("node", `"tools/serve"`), "tools/serve", js), "app/main.js", false},
		{"run.sh: python3 -u tools/boot.txt", file(runSh("exec python3 -u tools/boot.txt"), "tools/boot.txt", py), "app/main.py", false},
		{"run.sh: node tools/boot.txt", file(runSh("exec node tools/boot.txt"), "tools/boot.txt", js), "app/main.js", false},
		{"run.sh: bash tools/start", file(runSh("exec bash tools/start"), "tools/start", "python3 -c 'import app.main'\n"), "app/main.py", false},
		{"run.sh: python3 - < tools/boot.txt", file(runSh("exec python3 - < tools/boot.txt"), "tools/boot.txt", "import app.main\n"), "app/main.py", false},
		{"run.sh: python3 < tools/boot.txt", file(runSh("exec python3 < tools/boot.txt"), "tools/boot.txt", "import app.main\n"), "app/main.py", false},
		{"run.sh: node - < tools/boot.txt", file(runSh("exec node - < tools/boot.txt"), "tools/boot.txt", "require('./app/main.js')\n"), "app/main.js", false},
		{"hook: python3 - < tools/boot.txt", file(map[string]string{".claude/settings.json": `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "python3 - < tools/boot.txt"}]}]}}`},
			"tools/boot.txt", "import app.main\n"), "app/main.py", false},
		// ordinary: such programs importing the standard library, data fed to a script
		{"ordinary: python3 tools/serve", file(mcpJSON("python3", `"tools/serve"`), "tools/serve", "import json\n"), "docs/a.md", true},
		{"ordinary: python3 - < tools/boot.txt", file(runSh("exec python3 - < tools/boot.txt"), "tools/boot.txt", "import json\n"), "docs/a.md", true},
		{"ordinary: data fed to a script", file(runSh("exec python3 srv/main.py < data.txt"), "data.txt", "import app.main\n"), "docs/a.md", true},
		{"ordinary: words after a runtime", runSh("echo 'needs python3 first'\ncommand -v node docs\nexec python3 srv/main.py"), "docs/a.md", true},
	})
}
