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
// verify-ms116-relative-words); a runner's script and a bare file name with a script's extension
// are places though not there yet (atk41 F12: CC = "sh x.sh" passed), red with mutant
// verify-ms116-bare-script-words.
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
		// a runner's script and a bare file name by its extension, not there yet (atk41 F12)
		{"SOME_HELPER", "sh x.sh", true},
		{"SOME_HELPER", "python3 -u helper", true},
		{"SOME_HELPER", "/usr/bin/env FOO=1 bash run", true},
		{"SOME_HELPER", "x.sh", true},
		{"SOME_HELPER", "evil.so", true},
		{"SOME_HELPER", "sh /usr/lib/x.sh", false}, // outside the workspace
		{"SOME_HELPER", "sh -c true", false},
		{"LC_ALL", "en_US.UTF-8", false},
		{"NO_PROXY", "proxy.example,10.0.0.1", false},
	}
	for _, c := range cases {
		if got := policy.EnvNamesPath(c.name, c.value, ws); got != c.want {
			t.Errorf("EnvNamesPath(%s=%q) = %v, want %v", c.name, c.value, got, c.want)
		}
	}
}

// A workspace named through a link and a value naming it by its real path, or the other way
// round, is the same place (review41 #12: MS116 compared the spellings only). Red with mutant
// verify-ms116-one-spelling.
func TestEnvNamesPathEitherSpelling(t *testing.T) {
	top := t.TempDir()
	real := filepath.Join(top, "data", "proj")
	os.MkdirAll(filepath.Join(real, "tools"), 0o755)
	link := filepath.Join(top, "proj")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		ws, value string
		want      bool
	}{
		{link, filepath.Join(real, "tools", "x"), true},
		{real, filepath.Join(link, "tools", "x"), true},
		{link, filepath.Join(link, "tools", "x"), true},
		{link, filepath.Join(top, "data", "other", "x"), false}, // beside the workspace, not in it
		{link, "/usr/bin/less", false},
	}
	for _, c := range cases {
		if got := policy.EnvNamesPath("PAGER", c.value, c.ws); got != c.want {
			t.Errorf("workspace %s: EnvNamesPath(PAGER=%q) = %v, want %v", c.ws, c.value, got, c.want)
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

// The families of program-running and code-loading variables are refused by the shape of their
// name, not one by one (atk41 F12: DOTNET_STARTUP_HOOKS, SUDO_ASKPASS, CC, R_LIBS_USER, PS4 …
// passed allowlist.env and wrap.env); data variables still pass. Red with mutant
// policy-env-names-families.
func TestCodeLoadingEnvFamilies(t *testing.T) {
	for _, n := range []string{"DOTNET_STARTUP_HOOKS", "DOTNET_ADDITIONAL_DEPS", "CORECLR_PROFILER_PATH", "COR_PROFILER_PATH", "COMPlus_EnableDiagnostics",
		"SUDO_ASKPASS", "SSH_ASKPASS_REQUIRE", "CC", "CXX", "CPP", "LD", "AR", "CFLAGS", "LDFLAGS", "CGO_LDFLAGS", "R_LIBS_USER", "R_LIBS",
		"ERL_LIBS", "ERL_AFLAGS", "PS4", "CLASSPATH", "FPATH", "JULIA_LOAD_PATH", "GUILE_LOAD_PATH", "PKG_CONFIG_PATH",
		"CMAKE_TOOLCHAIN_FILE", "KUBECONFIG", "DOCKER_CONFIG", "INPUTRC", "FZF_DEFAULT_COMMAND", "RSYNC_RSH", "SHELL",
		"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", "CARGO_BUILD_RUSTC_WRAPPER", "BASH_FUNC_ls%%", "HELM_PLUGINS", "JAVA_HOME",
		"GOPATH", "MY_TOOL_PLUGIN", "HOOKS_DIR", "NODE_PRELOAD", "GEM_PATH", "LIBRARY_PATH", "MY_PLUGIN_PATH", "APP_MODULE_PATH"} {
		if !policy.EnvRefused(n) {
			t.Errorf("%s passes allowlist.env and wrap.env", n)
		}
	}
	for _, n := range []string{"LANG", "LC_ALL", "TZ", "TERM", "HOME", "NO_COLOR", "COLUMNS", "GITHUB_TOKEN", "API_KEY", "MY_TOKEN",
		"OPENAI_BASE_URL", "GITLAB_API_URL", "SLACK_TEAM_ID", "HTTPS_PROXY", "NO_PROXY", "GOFLAGS", "GOCACHE", "DATA_SRC", "ODD",
		"HOME_DIR", "GIT_CONFIG_NOSYSTEM", "PYTHONDONTWRITEBYTECODE", "CGO_ENABLED",
		// a data file's place: the memory server's MEMORY_FILE_PATH, a model's, a database's
		// (mutant policy-env-data-path)
		"MEMORY_FILE_PATH", "MODEL_PATH", "DB_PATH", "OUTPUT_PATH",
		// a webhook's URL, a setting of a family's word, a name ending like one (atk42 F5;
		// mutant policy-env-data-words)
		"SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK_URL", "GITHUB_WEBHOOK_SECRET", "MCP_STARTUP_TIMEOUT", "DB_FILEPATH",
		"ARC_API_KEY", "PLUGIN_ID", "HOOK_TIMEOUT_MS"} {
		if policy.EnvRefused(n) {
			t.Errorf("%s refused: it loads nothing", n)
		}
	}
	src := strings.Replace(validAllowlist, `env = { LANG = "C.UTF-8" }`, `env = { SUDO_ASKPASS = "sh x.sh" }`, 1)
	_, err := policy.Parse("p.toml", []byte(src))
	var pe *policy.Error
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "allowlist.env.SUDO_ASKPASS") {
		t.Errorf("SUDO_ASKPASS in allowlist.env: %v, want it refused", err)
	}
}

// PAGER = "cat" (the usual way to stop git paging) is one bare program name, looked up on the
// fixed PATH: allowlist.env takes it; a path, an argument, a name of another kind do not, and
// the refusal says what would pass. Red without it (mutant policy-env-program-word).
func TestEnvProgramNameWord(t *testing.T) {
	for _, c := range []struct {
		env string
		ok  bool
	}{
		{`PAGER = "cat"`, true}, {`GIT_PAGER = "cat"`, true}, {`EDITOR = "vim"`, true}, {`MANPAGER = "less"`, true},
		{`PAGER = "./pager"`, false}, {`PAGER = "tools/pager"`, false}, {`PAGER = "x.sh"`, false}, {`PAGER = "less -R"`, false},
		{`PAGER = "sh -c x"`, false}, {`PAGER = "$(x)"`, false}, {`PAGER = "-R"`, false}, {`PAGER = ""`, false},
		{`GIT_DIR = "cat"`, false}, {`LD_PRELOAD = "cat"`, false},
	} {
		src := strings.Replace(validAllowlist, `env = { LANG = "C.UTF-8" }`, `env = { `+c.env+` }`, 1)
		_, err := policy.Parse("p.toml", []byte(src))
		if (err == nil) != c.ok {
			t.Errorf("allowlist.env %s: %v, want accepted %v", c.env, err, c.ok)
		}
		if !c.ok && strings.HasPrefix(c.env, "PAGER") && (err == nil || !strings.Contains(err.Error(), `one bare program name found on PATH (PAGER = "cat")`)) {
			t.Errorf("allowlist.env %s: %v, want the fix naming a bare program name", c.env, err)
		}
	}
}
