package wslayer

import (
	"slices"
	"testing"
)

// The script a runtime runs is found by the runtime's own option table (atk46a F3): a Python
// cluster ending in a valued letter (-uW ignore), a node option outside a 10-entry table
// (--disable-warning X) took the option's value for the script, and the real script was read
// as a shell script's words: what it loads was writable. Red under mutants
// workspace-runtime-option-cluster and workspace-runtime-option-unknown (the forms a newer
// runtime has); workspace-runtime-option-tables is TestScriptArgsOptionTables's.
func TestCommitRuntimeOptionTables(t *testing.T) {
	py := "import sys; sys.path.insert(0, '.'); import app.main\n"
	js := "require('../app/main.js')\n"
	serve := func(cmd, args, text string) map[string]string {
		return with(mcpJSON(cmd, args), map[string]string{"tools/serve": text})
	}
	runInlineCases(t, []inlineCase{
		{"python3 -uW ignore tools/serve", serve("python3", `"-uW", "ignore", "tools/serve"`, py), "app/main.py", false},
		{"python3 -BX dev tools/serve", serve("python3", `"-BX", "dev", "tools/serve"`, py), "app/main.py", false},
		{"python3 -bbW ignore tools/serve", serve("python3", `"-bbW", "ignore", "tools/serve"`, py), "app/main.py", false},
		{"python3 --check-hash-based-pycs always tools/serve", serve("python3", `"--check-hash-based-pycs", "always", "tools/serve"`, py), "app/main.py", false},
		{"node --disable-warning ExperimentalWarning tools/serve", serve("node", `"--disable-warning", "ExperimentalWarning", "tools/serve"`, js), "app/main.js", false},
		{"node --unhandled-rejections strict tools/serve", serve("node", `"--unhandled-rejections", "strict", "tools/serve"`, js), "app/main.js", false},
		{"node --unhandled_rejections strict tools/serve", serve("node", `"--unhandled_rejections", "strict", "tools/serve"`, js), "app/main.js", false},
		{"node --watch-path tools tools/serve", serve("node", `"--watch-path", "tools", "tools/serve"`, js), "app/main.js", false},
		{"node --env-file-if-exists .env tools/serve", serve("node", `"--env-file-if-exists", ".env", "tools/serve"`, js), "app/main.js", false},
		{"node --inspect-port 9999 tools/serve", serve("node", `"--inspect-port", "9999", "tools/serve"`, js), "app/main.js", false},
		// a newer node's option (23.10: --experimental-config-file FILE) the table does not know
		{"node --experimental-config-file node.json tools/serve", serve("node", `"--experimental-config-file", "node.json", "tools/serve"`, js), "app/main.js", false},
		{"node --some-new-flag tools/serve", serve("node", `"--some-new-flag", "tools/serve"`, js), "app/main.js", false},
		{"run.sh: bash -eo pipefail tools/start", with(runSh("exec bash -eo pipefail tools/start"),
			map[string]string{"tools/start": "python3 -c 'import app.main'\n"}), "app/main.py", false},
		{"run.sh: bash -oe pipefail tools/start", with(runSh("exec bash -oe pipefail tools/start"),
			map[string]string{"tools/start": "python3 -c 'import app.main'\n"}), "app/main.py", false},
		// ordinary: a file the server does not load is still written, whatever the options
		{"ordinary: python3 -uW ignore tools/serve", serve("python3", `"-uW", "ignore", "tools/serve"`, py), "srv/main.py", true},
		{"ordinary: node --disable-warning X tools/serve", serve("node", `"--disable-warning", "ExperimentalWarning", "tools/serve"`, js), "srv/main.js", true},
		{"ordinary: node --enable-source-maps tools/serve data", serve("node", `"--enable-source-maps", "tools/serve", "docs/a.md"`, js), "srv/main.js", true},
		// (its value is read as a possible program too: at the workspace's root, a change no other
		// rule judges would not be applied, as for any program there)
		{"ordinary: node --experimental-config-file tools/node.json", with(serve("node", `"--experimental-config-file", "tools/node.json", "tools/serve"`, js),
			map[string]string{"tools/node.json": `{"nodeOptions": {}}`}), "srv/main.js", true},
		{"ordinary: bash -eo pipefail", with(runSh("exec bash -eo pipefail tools/start"), map[string]string{"tools/start": "python3 -c 'import app.main'\n"}), "srv/main.py", true},
	})
}

// scriptArgs reads a runtime's command line by its own option table (atk46a F3): the indexes
// of the words it may run as its script. Red under workspace-runtime-option-tables (node's
// 10-entry table: a known valued option read both ways), -cluster and -unknown.
func TestScriptArgsOptionTables(t *testing.T) {
	for _, k := range []struct {
		lang string
		args []string
		want []int
	}{
		{"py", []string{"-u", "tools/serve"}, []int{1}},
		{"py", []string{"-uW", "ignore", "tools/serve"}, []int{2}},
		{"py", []string{"-uWignore", "tools/serve"}, []int{1}},
		{"py", []string{"-BX", "dev", "-W", "error", "tools/serve"}, []int{4}},
		{"py", []string{"-um", "app.main"}, nil},
		{"py", []string{"-Bc", "import x", "tools/serve"}, nil},
		{"js", []string{"--disable-warning", "ExperimentalWarning", "tools/serve"}, []int{2}},
		{"js", []string{"--unhandled_rejections", "strict", "tools/serve"}, []int{2}},
		{"js", []string{"--test-reporter", "spec", "--watch", "tools/serve", "x"}, []int{3}},
		{"js", []string{"--no-warnings", "tools/serve", "x"}, []int{1}},
		{"js", []string{"--disable-warning=X", "tools/serve"}, []int{1}},
		{"js", []string{"--newer-option", "v", "tools/serve"}, []int{1, 2}},
		{"js", []string{"--eval=1", "tools/serve"}, nil},
		{"js", []string{"-pe", "1", "tools/serve"}, nil},
		{"sh", []string{"-eo", "pipefail", "tools/start"}, []int{2}},
		{"sh", []string{"-oo", "errexit", "nounset", "tools/start"}, []int{3}},
		{"sh", []string{"-ec", "x", "tools/start"}, nil},
	} {
		if got := scriptArgs(k.lang, k.args); !slices.Equal(got, k.want) {
			t.Errorf("%s %q: script at %v, want %v", k.lang, k.args, got, k.want)
		}
	}
}
