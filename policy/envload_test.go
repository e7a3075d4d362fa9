package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A value names the workspace as the program resolves it from its working directory, the
// workspace, not by its spelling (atk40b F4: "tools/pager", GIT_DIR=meta, CURL_HOME=conf passed
// verify; "./tools/pager" did not). Red when only ./, ../ and absolute words count (mutant
// verify-ms116-relative-words).
func TestEnvNamesPath(t *testing.T) {
	ws := t.TempDir()
	os.Mkdir(filepath.Join(ws, "vendor"), 0o755)
	os.WriteFile(filepath.Join(ws, "Gemfile.ci"), nil, 0o644)
	cases := []struct {
		name, value string
		want        bool
	}{
		{"PAGER", "./tools/pager", true},
		{"PAGER", "tools/pager", true},
		{"EDITOR", "tools/ed", true},
		{"MAKEFILES", "ci/extra.mk", true},
		{"WGETRC", "conf/wgetrc", true},
		{"KRB5_CONFIG", "conf/krb5.conf", true},
		{"GIT_DIR", "meta", true},                  // a path variable: a bare word is a place, even before it exists
		{"CURL_HOME", "conf", true},                //
		{"PYTHONPYCACHEPREFIX", "cache", true},     //
		{"BUNDLE_GEMFILE", "Gemfile.ci", true},     // an entry the workspace holds
		{"XDG_DATA_DIRS", "/usr/share:data", true}, // a list's element
		{"GOFLAGS", "-toolexec=./x", true},
		{"GOFLAGS", "-toolexec=tools/x", true},
		{"GST_PLUGIN_PATH", filepath.Join(ws, "plugins"), true},
		{"X", ".", true},
		{"X", "a/../b", true},
		// words, not places
		{"LANG", "C.UTF-8", false},
		{"TERM", "xterm", false},
		{"PAGER", "less", false},          // found on PATH, not in the working directory
		{"GOFLAGS", "-mod=vendor", false}, // an option's keyword, though vendor/ exists
		{"TZ", "Europe/Paris", false},     // read below the zoneinfo directory
		{"HOME", "/home/u", false},
		{"NO_PROXY", "localhost,127.0.0.1", false},
		{"HTTPS_PROXY", "http://proxy.example:3128", false},
		{"X", "a/../../elsewhere", false},
	}
	for _, c := range cases {
		if got := policy.EnvNamesPath(c.name, c.value, ws); got != c.want {
			t.Errorf("EnvNamesPath(%s=%q) = %v, want %v", c.name, c.value, got, c.want)
		}
	}
}

// The variables that name a program a tool runs, or a file it reads its configuration, modules or
// bytecode from, are refused in allowlist.env (and wrap.env, the same list) (atk40b F4). Red when
// they pass (mutant policy-codeloading-env-steering-names).
func TestCodeLoadingEnvSteeringNames(t *testing.T) {
	for _, n := range []string{"PAGER", "MANPAGER", "GIT_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_DIR", "GIT_WORK_TREE",
		"GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL", "GIT_EXEC_PATH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "MAKEFILES",
		"MAKEFLAGS", "WGETRC", "CURL_HOME", "KRB5_CONFIG", "GST_PLUGIN_PATH", "GST_PLUGIN_PATH_1_0", "GIO_MODULE_DIR",
		"QT_PLUGIN_PATH", "PYTHONPYCACHEPREFIX", "PYTHONWARNINGS", "PYTHONBREAKPOINT", "BUNDLE_GEMFILE", "GEM_PATH",
		"GEM_HOME", "NPM_CONFIG_USERCONFIG", "npm_config_script_shell", "VIMINIT", "CARGO_HOME", "GOENV"} {
		if !policy.CodeLoadingEnv(n) {
			t.Errorf("%s passes allowlist.env and wrap.env", n)
		}
	}
	for _, n := range []string{"LANG", "TZ", "TERM", "HOME", "GIT_CONFIG_NOSYSTEM", "GITHUB_TOKEN", "NPM_TOKEN", "GOFLAGS"} {
		if policy.CodeLoadingEnv(n) {
			t.Errorf("%s refused: it loads nothing", n)
		}
	}
	src := strings.Replace(validAllowlist, `env = { LANG = "C.UTF-8" }`, `env = { PAGER = "tools/pager" }`, 1)
	_, err := policy.Parse("p.toml", []byte(src))
	var pe *policy.Error
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "allowlist.env.PAGER") {
		t.Errorf("PAGER in allowlist.env: %v, want it refused", err)
	}
}
